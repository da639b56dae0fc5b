// Shared helpers for the e2e specs (not a spec itself: playwright.config.js matches *.spec.js).
// @ts-check
const { expect } = require('@playwright/test');

/** Opens `path`, collects page errors and console errors (the caller asserts there are none),
 *  and waits until the app is drawn and window.kubeloop is installed. */
async function open(page, path = '/') {
  const errors = [];
  page.on('pageerror', (err) => errors.push(`pageerror: ${err.message}`));
  page.on('console', (msg) => {
    if (msg.type() === 'error') errors.push(`console: ${msg.text()}`);
  });
  await page.goto(path);
  await expect(page.getByTestId('app')).toBeVisible();
  await page.waitForFunction(() => typeof window.kubeloop === 'object' && window.kubeloop !== null);
  return errors;
}

/** Hides the transient toasts for a screenshot (through the CSSOM: the CSP forbids inline <style>). */
const hideNotices = (page) =>
  page.evaluate(() => document.querySelectorAll('.notices').forEach((n) => n.style.setProperty('display', 'none')));

/** Deterministic simulated time: window.kubeloop.advance, never a wall-clock wait. */
const advance = (page, d) => page.evaluate((dur) => window.kubeloop.advance(dur), d);

/** Applies YAML through the page's JS API and returns its diagnostics. */
const apply = (page, yaml) => page.evaluate((y) => window.kubeloop.apply(y), yaml);

module.exports = { open, hideNotices, advance, apply };

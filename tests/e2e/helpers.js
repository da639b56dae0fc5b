// Shared helpers for the e2e specs (not a spec itself: playwright.config.js matches *.spec.js).
// @ts-check
const { expect } = require('@playwright/test');

/** How long a page may take to download and compile the app on a busy machine (a spec that
 *  opens several pages compiles the app once per page). */
const BOOT = { timeout: 60_000 };

/** Waits until the app is drawn and window.kubeloop is installed (after a goto or a reload). */
async function appReady(page) {
  await expect(page.getByTestId('app')).toBeVisible(BOOT);
  await page.waitForFunction(() => typeof window.kubeloop === 'object' && window.kubeloop !== null, null, BOOT);
}

/** Opens `path`, collects page errors and console errors (the caller asserts there are none),
 *  and waits until the app is ready. */
async function open(page, path = '/') {
  const errors = [];
  page.on('pageerror', (err) => errors.push(`pageerror: ${err.message}`));
  page.on('console', (msg) => {
    if (msg.type() === 'error') errors.push(`console: ${msg.text()}`);
  });
  await page.goto(path);
  await appReady(page);
  return errors;
}

/** Hides the transient toasts for a screenshot (through the CSSOM: the CSP forbids inline <style>). */
const hideNotices = (page) =>
  page.evaluate(() => document.querySelectorAll('.notices').forEach((n) => n.style.setProperty('display', 'none')));

/** Deterministic simulated time: window.kubeloop.advance, never a wall-clock wait. */
const advance = (page, d) => page.evaluate((dur) => window.kubeloop.advance(dur), d);

/** Applies YAML through the page's JS API and returns its diagnostics. */
const apply = (page, yaml) => page.evaluate((y) => window.kubeloop.apply(y), yaml);

/** A Deployment `web` of nginx pods labelled app=web, each requesting `cpu` and 16Mi. */
const deployment = (replicas, cpu = '10m') => `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: ${replicas}
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: app, image: "nginx:1.27", resources: {requests: {cpu: ${cpu}, memory: 16Mi}}}]
`;

module.exports = { open, appReady, hideNotices, advance, apply, deployment };

// Smoke test: the release build loads, the wasm app mounts, and the browser reports no errors
// (no uncaught exception, no console error, no failed request). Saves docs/screenshots/smoke.png
// so a person can see what the page looks like.
const { test, expect } = require('@playwright/test');

test('app loads and mounts', async ({ page }) => {
  const errors = [];
  page.on('pageerror', (err) => errors.push(`pageerror: ${err.message}`));
  page.on('console', (msg) => { if (msg.type() === 'error') errors.push(`console: ${msg.text()}`); });
  page.on('response', (res) => { if (res.status() >= 400) errors.push(`HTTP ${res.status()}: ${res.url()}`); });

  await page.goto('/');
  await expect(page.locator('[data-testid="app"]')).toBeVisible();
  await page.screenshot({ animations: 'disabled', path: 'docs/screenshots/smoke.png', fullPage: true });
  expect(errors, 'no errors in the browser').toEqual([]);
});

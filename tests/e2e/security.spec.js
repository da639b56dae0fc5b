// The built page under its security headers (scripts/security-headers.json: sent as headers by
// scripts/serve-dist.js, and put into dist/index.html as a <meta> by `make build`): the app boots
// and runs with no Content-Security-Policy violation and no inline script, and a shared link full
// of HTML renders that HTML as text — nothing in it runs.
// @ts-check
const zlib = require('zlib');
const { test, expect } = require('@playwright/test');

/** Collects CSP violations and errors from the start of the page. */
async function watch(page) {
  const errors = [];
  page.on('pageerror', (err) => errors.push(`pageerror: ${err.message}`));
  page.on('console', (msg) => { if (msg.type() === 'error') errors.push(`console: ${msg.text()}`); });
  await page.addInitScript(() => {
    // @ts-ignore
    window.__violations = [];
    document.addEventListener('securitypolicyviolation', (e) => {
      // @ts-ignore
      window.__violations.push(`${e.violatedDirective} blocked ${e.blockedURI}`);
    });
  });
  return errors;
}

/** A share-link fragment for `text`, as sim::share encodes it (raw deflate, base64url). */
function fragment(text) {
  const b64 = zlib.deflateRawSync(Buffer.from(JSON.stringify({ y: text }))).toString('base64');
  return 'k1:' + b64.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

test('the app runs under the content security policy', async ({ page }) => {
  const errors = await watch(page);
  const response = await page.goto('/');
  expect(response && response.headers()['content-security-policy']).toContain("script-src 'self' 'wasm-unsafe-eval'");
  await expect(page.getByTestId('app')).toBeVisible();
  const meta = await page.locator('meta[http-equiv="Content-Security-Policy"]').getAttribute('content');
  expect(meta).toContain("script-src 'self' 'wasm-unsafe-eval'");
  expect(meta).not.toContain('frame-ancestors');
  expect(await page.locator('script:not([src])').count()).toBe(0);

  await page.waitForFunction(() => typeof window.kubeloop === 'object' && window.kubeloop !== null);
  await page.getByTestId('apply').click();
  await page.evaluate(() => window.kubeloop.advance('60s'));
  await expect(page.locator('[data-testid^="pod-"][data-ready="true"]')).toHaveCount(3);

  // @ts-ignore
  expect(await page.evaluate(() => window.__violations)).toEqual([]);
  expect(errors).toEqual([]);
});

test('a shared scenario full of HTML shows it as text and runs none of it', async ({ page }) => {
  const errors = await watch(page);
  const evil = [
    'apiVersion: kubeloop.dev/v1alpha1',
    'kind: Scenario',
    'metadata: {name: "<img src=x onerror=window.__pwned=1>"}',
    'spec:',
    '  checks:',
    '  - name: "<img src=x onerror=window.__pwned=2>"',
    '    wait: deployment/web --for=condition=Available --timeout=1m',
    '---',
    'apiVersion: apps/v1',
    'kind: Deployment',
    'metadata:',
    '  name: web',
    '  annotations: {note: "<script>window.__pwned=3</script>"}',
    'spec:',
    '  replicas: 1',
    '  selector: {matchLabels: {app: web}}',
    '  template:',
    '    metadata: {labels: {app: web}}',
    '    spec: {containers: [{name: web, image: "nginx:1.27"}]}',
    '',
  ].join('\n');
  await page.goto('/#' + fragment(evil));
  await expect(page.getByTestId('app')).toBeVisible();
  await page.waitForFunction(() => typeof window.kubeloop === 'object' && window.kubeloop !== null);
  await page.evaluate(() => window.kubeloop.advance('30s'));
  await expect(page.getByTestId('editor')).toHaveValue(/window.__pwned=3/);
  // @ts-ignore
  expect(await page.evaluate(() => window.__pwned)).toBeUndefined();
  expect(await page.locator('img[src="x"], body script:not([src])').count()).toBe(0);
  // @ts-ignore
  expect(await page.evaluate(() => window.__violations)).toEqual([]);
  expect(errors).toEqual([]);
});

// The release build served from a sub-path, as any static host serves
// `make build PUBLIC_URL=/kubeloop/` (issue #7: "runs unchanged"). playwright.config.js serves the
// build under /kubeloop/ only (project "subpath"; everything outside it is a 404), so these tests
// use relative URLs (`./`, `www/…`). Every request the pages make is recorded: none may leave the
// prefix or fail. Covered: the app boots and converges an example, share links and example links
// open there, and the course page finds the playground relative to the SDK and drives an embed.
// @ts-check
const { test, expect } = require('@playwright/test');

const PREFIX = '/kubeloop/';

/** Records console errors, and every request outside the prefix or answered with an error. */
function watch(page) {
  const log = { errors: [], outside: [], failed: [] };
  page.on('pageerror', (err) => log.errors.push(`pageerror: ${err.message}`));
  page.on('console', (msg) => {
    if (msg.type() === 'error') log.errors.push(`console: ${msg.text()}`);
  });
  page.on('request', (req) => {
    const url = new URL(req.url());
    if (url.protocol.startsWith('http') && !url.pathname.startsWith(PREFIX)) log.outside.push(req.url());
  });
  page.on('requestfailed', (req) => log.failed.push(`${req.url()}: ${req.failure()?.errorText}`));
  page.on('response', (res) => {
    if (res.status() >= 400) log.failed.push(`${res.url()}: ${res.status()}`);
  });
  return log;
}

const clean = (log) => expect({ errors: log.errors, outside: log.outside, failed: log.failed })
  .toEqual({ errors: [], outside: [], failed: [] });

async function appReady(page) {
  await expect(page.getByTestId('app')).toBeVisible();
  await page.waitForFunction(() => typeof window.kubeloop === 'object' && window.kubeloop !== null);
}

test('the server is strict: outside /kubeloop/ there is nothing', async ({ request, baseURL }) => {
  // Otherwise a root-relative URL left in the build would load and these tests would prove little.
  const origin = new URL(/** @type {string} */ (baseURL)).origin;
  expect((await request.get(`${origin}/`)).status()).toBe(404);
  expect((await request.get(`${origin}/www/kubeloop-embed.js`)).status()).toBe(404);
  expect((await request.get('www/kubeloop-embed.js')).status()).toBe(200);
});

test('the app boots at /kubeloop/ and converges the example Deployment', async ({ page }) => {
  const log = watch(page);
  await page.goto('./');
  await appReady(page);
  expect(new URL(page.url()).pathname).toBe(PREFIX);
  await page.getByTestId('apply').click();
  await expect(page.getByTestId('diagnostics')).toContainText('created');
  expect(await page.evaluate(() => window.kubeloop.advance('60s'))).toBeGreaterThanOrEqual(60_000);
  const gap = page.locator('[data-testid^="gap-"]');
  await expect(gap).toHaveCount(1);
  await expect(gap).toHaveClass(/is-converged/);
  await expect(page.locator('[data-testid^="pod-"][data-ready="true"]')).not.toHaveCount(0);
  clean(log);
});

test('share links made at /kubeloop/ point there and open there; example links too', async ({ browser, baseURL }) => {
  const author = await browser.newContext({ baseURL });
  await author.grantPermissions(['clipboard-read', 'clipboard-write']);
  const page = await author.newPage();
  const log = watch(page);
  await page.goto('./');
  await appReady(page);
  const text = 'apiVersion: v1\nkind: Namespace\nmetadata: {name: from-a-subpath}\n';
  await page.getByTestId('editor').fill(text);
  await page.getByTestId('share').click();
  const url = await page.getByTestId('share-url').inputValue();
  expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/kubeloop\/#k1:[A-Za-z0-9_-]+$/);
  clean(log);
  await author.close();

  // A reader opens it in a fresh browser: same text, under the sub-path.
  const ctx = await browser.newContext({ baseURL });
  const reader = await ctx.newPage();
  const rlog = watch(reader);
  await reader.goto(url);
  await appReady(reader);
  await expect(reader.getByTestId('editor')).toHaveValue(text);
  await expect(reader.getByTestId('link-error')).toHaveCount(0);
  await reader.goto('./#example/node-dies');
  await expect(reader.getByTestId('editor')).toHaveValue(/name: node-dies/);
  await expect(reader.getByTestId('clock')).toHaveText('00:00.0');
  clean(rlog);
  await ctx.close();
});

test('the course page at /kubeloop/www/ finds the playground next to the SDK and drives an embed', async ({ page }) => {
  test.setTimeout(120_000);
  const log = watch(page);
  await page.goto('www/course-example.html');
  await expect(page.locator('h1')).toBeVisible();
  const frames = page.locator('#lab1 iframe');
  await expect(frames).toHaveCount(1);
  // The SDK's default playground URL is ../index.html next to itself: under the prefix.
  const src = new URL(/** @type {string} */ (await frames.getAttribute('src')));
  expect(src.pathname).toBe(`${PREFIX}index.html`);
  expect(src.searchParams.get('embed')).toBe('1');
  await page.waitForFunction(() => !!window.Kubeloop);
  await page.evaluate(() => new Promise((resolve) => window.Kubeloop.get('lab1').on('loaded', resolve)));
  const lab1 = page.frameLocator('#lab1 iframe');
  await expect(lab1.getByTestId('editor')).toHaveValue(/replicas: 3/);

  // Drive it through the SDK: run forward, the checkpoint turns green; kill a pod from the text.
  expect(await page.evaluate(() => window.Kubeloop.get('lab1').advance('60s'))).toBe(60_000);
  await expect(page.locator('#lab1-check')).toHaveAttribute('data-state', 'done');
  const fault = page.evaluate(() => new Promise((r) => window.Kubeloop.get('lab1').on('fault', r)));
  await page.locator('[data-lab1="kill"]').first().click();
  expect((await fault).fault).toBe('DeletePod');
  // "Open in Kubeloop" leads to the full playground under the same prefix.
  await expect(lab1.getByTestId('open-full')).toHaveAttribute('href', /^http:\/\/127\.0\.0\.1:\d+\/kubeloop\/(index\.html)?#/);

  // The second lab loads on click, from the same place.
  await page.frameLocator('#lab2 iframe').getByTestId('click-to-load-button').click();
  await page.evaluate(() => new Promise((resolve) => window.Kubeloop.get('lab2').on('loaded', resolve)));
  await expect(page.frameLocator('#lab2 iframe').locator('[data-testid^="node-"]').first()).toBeVisible();
  clean(log);
});

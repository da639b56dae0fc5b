// Start (issue #10): a page opened from a link renders the linked lesson in its very first render,
// instead of drawing the default cluster and its manifest first and replacing them once the app's
// effects have run. The app installs window.kubeloop in its first effects, right after that first
// render, so what the page shows at that moment is what the first render drew. No wall time is
// asserted: `node scripts/browser-bench.js --start` measures it.
// @ts-check
const { test, expect } = require('@playwright/test');

/** Records what the page shows at the moment the app installs its JS API. */
const recordFirstRender = (page) => page.addInitScript(() => {
  let api;
  Object.defineProperty(window, 'kubeloop', {
    configurable: true,
    get: () => api,
    set: (v) => {
      api = v;
      if (window.__firstRender) return;
      const editor = document.querySelector('[data-testid="editor"]');
      window.__firstRender = {
        lesson: !!document.querySelector('[data-testid="lesson"]'),
        editor: editor && 'value' in editor ? String(editor.value) : '',
      };
    },
  });
});

test('an example link is already open in the first render, with its text in the editor', async ({ page }) => {
  const errors = [];
  page.on('pageerror', (err) => errors.push(`pageerror: ${err.message}`));
  await recordFirstRender(page);
  await page.goto('/#example/spec-status-gap', { timeout: 60000 });
  await page.waitForFunction(() => window.__firstRender, null, { timeout: 60000 });
  const first = await page.evaluate(() => window.__firstRender);
  expect(first.lesson, 'the lesson card is in the first render').toBe(true);
  expect(first.editor).toContain('name: spec-status-gap');
  await expect(page.getByTestId('lesson')).toBeVisible();
  expect(await page.evaluate(() => window.kubeloop.now())).toBe(0);
  expect(errors).toEqual([]);
});

test('a link that cannot be opened starts on the default cluster with the reason shown', async ({ page }) => {
  await recordFirstRender(page);
  await page.goto('/#example/no-such-lesson', { timeout: 60000 });
  await page.waitForFunction(() => window.__firstRender, null, { timeout: 60000 });
  const first = await page.evaluate(() => window.__firstRender);
  expect(first.lesson).toBe(false);
  await expect(page.getByTestId('link-error')).toContainText('no-such-lesson');
  await expect(page.getByTestId('node-node-1')).toBeVisible();
  expect(first.editor).toContain('kind: Deployment');
});

// The editor end to end: the highlighted layer under the textarea colours YAML, a refused apply
// underlines each diagnostic at its line and column with the message on hover, in the gutter and
// at the caret, and typing and scrolling keep the two layers showing the same text in the same
// place — also in a 10,000-line document, of which only the visible lines are drawn.
// Saves docs/screenshots/editor.png and editor-dark.png.
// @ts-check
const { test, expect } = require('@playwright/test');
const { open, hideNotices } = require('./helpers');

const SAMPLE = [
  '# The web tier',
  'apiVersion: apps/v1',
  'kind: Deployment',
  'metadata:',
  '  name: web',
  '  labels: {app: web, tier: "front"}',
  'spec:',
  '  replicas: 3 # three copies',
  '  paused: false',
  '  selector:',
  '    matchLabels:',
  '      app: web',
  '  template:',
  '    metadata:',
  '      labels:',
  '        app: web',
  '    spec:',
  '      containers:',
  '      - name: nginx',
  '        image: "nginx:1.27"',
  '        args:',
  '        - |',
  '          echo "hello # not a comment"',
  '---',
  'apiVersion: v1',
  'kind: Service',
  'metadata: {name: web}',
  'spec:',
  '  selector: {app: web}',
  '  ports: [{port: 80}]',
  '',
].join('\n');

const BAD = 'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: three\n  selector:\n    matchLabels:\n      app: web\n';

/**
 * What the highlighted layer draws: { first, lines } with `first` the 0-based index of the first
 * drawn line (the spacer before it is first × 20px) and `lines` the drawn lines' text.
 */
const drawn = (page) =>
  page.evaluate(() => {
    const spacer = document.querySelector('.hl-inner > .hl-spacer');
    const first = Math.round(parseFloat(spacer.style.height || '0') / 20);
    const lines = [...document.querySelectorAll('.hl-inner > .hl-line')].map((l) => l.textContent);
    return { first, lines };
  });

/** The drawn lines must be the textarea's lines at the same indices (once the render after the
 * last input has run: it is scheduled, not synchronous). */
async function expectLayersAgree(page) {
  await expect(async () => {
    const value = await page.getByTestId('editor').inputValue();
    const all = value.split('\n');
    const { first, lines } = await drawn(page);
    expect(lines.length).toBeGreaterThan(0);
    expect(lines).toEqual(all.slice(first, first + lines.length));
  }).toPass({ timeout: 10_000 });
}

/**
 * Where line `n` (1-based) is drawn, against where the textarea puts it: the textarea's top and
 * left padding (10px, 12px), 20px lines, minus its scroll.
 */
const lineGeometry = (page, n) =>
  page.evaluate((n) => {
    const ta = document.querySelector('textarea[data-testid=editor]');
    const spacer = document.querySelector('.hl-inner > .hl-spacer');
    const first = Math.round(parseFloat(spacer.style.height || '0') / 20);
    const line = document.querySelectorAll('.hl-inner > .hl-line')[n - 1 - first];
    const t = ta.getBoundingClientRect();
    const l = line.getBoundingClientRect();
    return {
      drawnTop: l.top,
      expectedTop: t.top + 10 + (n - 1) * 20 - ta.scrollTop,
      drawnLeft: l.left,
      expectedLeft: t.left + 12 - ta.scrollLeft,
    };
  }, n);

test('the highlighted layer colours keys, strings, numbers and comments, aligned with the text', async ({ page }) => {
  const errors = await open(page);
  const editor = page.getByTestId('editor');
  await editor.fill(SAMPLE);
  const layer = page.getByTestId('editor-highlight');
  await expect(layer.locator('.t-key').first()).toHaveText('apiVersion');
  await expect(layer.locator('.t-key', { hasText: 'replicas' })).toHaveCount(1);
  await expect(layer.locator('.t-str', { hasText: '"nginx:1.27"' })).toHaveCount(1);
  await expect(layer.locator('.t-str', { hasText: '"front"' })).toHaveCount(1);
  await expect(layer.locator('.t-comment').first()).toHaveText('# The web tier');
  await expect(layer.locator('.t-comment', { hasText: '# three copies' })).toHaveCount(1);
  await expect(layer.locator('.t-num', { hasText: /^3$/ })).toHaveCount(1);
  await expect(layer.locator('.t-bool', { hasText: 'false' })).toHaveCount(1);
  await expect(layer.locator('.t-doc')).toHaveText(['---']);
  await expect(layer.locator('.t-block')).toHaveText(['|']);
  // Inside a block scalar a # is text, not a comment.
  await expect(layer.locator('.t-blocktext')).toHaveText(['echo "hello # not a comment"']);
  await expect(layer.locator('.t-dash').first()).toHaveText('-');
  await expectLayersAgree(page);

  // The textarea's own text is invisible; the layer under it is what one sees, in the same place.
  const color = await editor.evaluate((el) => getComputedStyle(el).color);
  expect(color).toBe('rgba(0, 0, 0, 0)');
  for (const n of [1, 8, 20]) {
    const g = await lineGeometry(page, n);
    expect(Math.abs(g.drawnTop - g.expectedTop)).toBeLessThan(0.5);
    expect(Math.abs(g.drawnLeft - g.expectedLeft)).toBeLessThan(0.5);
  }
  // Same font metrics: a line as wide in the layer as the textarea measures it.
  const widths = await page.evaluate(() => {
    const ta = document.querySelector('textarea[data-testid=editor]');
    const line = document.querySelectorAll('.hl-inner > .hl-line')[19];
    const probe = document.createElement('span');
    const cs = getComputedStyle(ta);
    for (const p of ['fontFamily', 'fontSize', 'fontWeight', 'fontStyle', 'letterSpacing', 'fontVariantLigatures', 'fontKerning']) {
      probe.style[p] = cs[p];
    }
    probe.style.whiteSpace = 'pre';
    probe.textContent = line.textContent;
    document.body.appendChild(probe);
    const w = probe.getBoundingClientRect().width;
    probe.remove();
    const r = document.createRange();
    r.selectNodeContents(line);
    return { textarea: w, layer: r.getBoundingClientRect().width };
  });
  expect(Math.abs(widths.textarea - widths.layer)).toBeLessThan(0.5);

  await hideNotices(page);
  await page.locator('.editor-panel').screenshot({ animations: 'disabled', path: 'docs/screenshots/editor.png' });
  expect(errors, 'no errors in the browser').toEqual([]);
});

test('a refused manifest is underlined at its line and column, with the message on hover, in the gutter and at the caret', async ({ page }) => {
  const errors = await open(page);
  const editor = page.getByTestId('editor');
  await editor.fill(BAD);
  await editor.press('Control+Enter');
  const problem = page.getByTestId('diagnostic').first();
  await expect(problem).toHaveAttribute('data-line', '6');
  await expect(problem).toHaveAttribute('data-col', '3');
  const message = await problem.locator('.diag-msg').innerText();
  expect(message).toContain('replicas');

  // The underline: line 6 from column 3, over the key and its value.
  const mark = page.getByTestId('diag-mark');
  await expect(mark).toHaveCount(1);
  await expect(mark).toHaveAttribute('data-line', '6');
  await expect(mark).toHaveAttribute('data-col', '3');
  await expect(mark).toHaveText('replicas: three');
  await expect(mark).toHaveClass(/sev-error/);
  const pos = await page.evaluate(() => {
    const ta = document.querySelector('textarea[data-testid=editor]');
    const m = document.querySelector('[data-testid=diag-mark]').getBoundingClientRect();
    const t = ta.getBoundingClientRect();
    const ch = m.width / 'replicas: three'.length;
    return { col: (m.left - t.left - 12) / ch + 1, line: (m.top - t.top - 10) / 20 + 1, ch };
  });
  expect(pos.ch).toBeGreaterThan(4);
  expect(Math.abs(pos.col - 3)).toBeLessThan(0.05);
  // An inline box is a little taller than its text; its top is within the line's 20px.
  expect(Math.floor(pos.line + 0.2)).toBe(6);
  const underline = await mark.evaluate((el) => getComputedStyle(el).textDecorationStyle);
  expect(underline).toBe('wavy');

  // The gutter marks the line, and its tooltip is the message.
  const gutter = page.getByTestId('gutter-mark');
  await expect(gutter).toHaveText('6');
  await expect(gutter).toHaveAttribute('title', new RegExp(`6:3 error: ${message.slice(0, 20).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));

  // Hover: the textarea is on top, yet pointing at the underline shows the message.
  const box = await mark.boundingBox();
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  const tip = page.getByTestId('editor-tip');
  await expect(tip).toBeVisible();
  await expect(tip).toHaveAttribute('role', 'tooltip');
  await expect(tip).toContainText(message);
  await expect(tip).toContainText('error');
  // A scroll event that reports no move (the browser sends one a frame after the scroll, later on
  // a busy page, so it can follow the hover) leaves it; the frame after is when it would be gone.
  await editor.evaluate((el) => {
    el.dispatchEvent(new Event('scroll'));
    return new Promise((done) => requestAnimationFrame(() => setTimeout(done)));
  });
  await expect(tip).toHaveCount(1);
  await hideNotices(page);
  await page.locator('.editor-panel').screenshot({ animations: 'disabled', path: 'docs/screenshots/editor-diagnostic.png' });
  // Pointing elsewhere in the text hides it.
  const ta = await editor.boundingBox();
  await page.mouse.move(ta.x + 30, ta.y + 15);
  await expect(tip).toHaveCount(0);

  // The caret: on line 6 the live region says what is wrong there; on line 5, nothing.
  const caret = page.getByTestId('caret-diagnostic');
  await expect(caret).toHaveAttribute('aria-live', 'polite');
  await expect(caret).toBeEmpty();
  await problem.click(); // jumps to 6:3
  await expect(editor).toBeFocused();
  expect(await editor.evaluate((el) => el.selectionStart)).toBe(BAD.split('\n').slice(0, 5).join('\n').length + 1 + 2);
  await expect(caret).toContainText(message);
  await expect(caret).toContainText('Line 6');
  await page.keyboard.press('ArrowUp');
  await expect(caret).toBeEmpty();
  await page.keyboard.press('ArrowDown');
  await expect(caret).toContainText(message);
  expect(await editor.getAttribute('aria-describedby')).toBe('editor-keys editor-caret-diag');

  // Editing above moves the underline with its line; editing its line drops it until the next Apply.
  await page.keyboard.press('Control+Home');
  await page.keyboard.type('# note\n');
  await expect(mark).toHaveAttribute('data-line', '7');
  await expect(page.getByTestId('gutter-mark')).toHaveText('7');
  await expectLayersAgree(page);
  await problem.click(); // now jumps to the moved line
  expect(await editor.evaluate((el) => el.value.slice(0, el.selectionStart).split('\n').length)).toBe(7);
  await page.keyboard.press('End');
  await page.keyboard.type('x');
  await expect(mark).toHaveCount(0);
  await expect(problem).toHaveClass(/is-stale/);
  await editor.press('Control+Enter');
  await expect(page.getByTestId('diag-mark')).toHaveAttribute('data-line', '7');
  await expect(page.getByTestId('diag-mark')).toHaveText('replicas: threex');

  // Scrolling the text away from under the tooltip hides it.
  await editor.fill(BAD + '# more\n'.repeat(60));
  await editor.press('Control+Enter');
  await expect(page.getByTestId('diag-mark')).toHaveAttribute('data-line', '6');
  // Back to the top, and the editor's handling of that scroll (its event comes a frame later)
  // done before the mark is measured: otherwise the hover can land where the mark was drawn
  // before the scroll, or the late scroll event hides the tooltip the hover just opened.
  await editor.evaluate((el) => new Promise((resolve) => {
    if (el.scrollTop === 0) return resolve();
    el.addEventListener('scroll', () => requestAnimationFrame(() => resolve()), { once: true });
    el.scrollTop = 0;
  }));
  const at = await page.getByTestId('diag-mark').boundingBox();
  await page.mouse.move(at.x + at.width / 2, at.y + at.height / 2);
  await expect(tip).toBeVisible();
  await editor.evaluate((el) => { el.scrollTop = 60; });
  await expect(tip).toHaveCount(0);
  expect(errors, 'no errors in the browser').toEqual([]);
});

test('diagnostics of a text applied through the JS API are listed but not drawn on the editor\'s other lines', async ({ page }) => {
  const errors = await open(page);
  const editor = page.getByTestId('editor');
  const mine = '# my notes\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: notes\ndata:\n  a: "1"\n';
  await editor.fill(mine);
  // An embedding page applies its own text: its error is at line 6, column 3 of *that* text.
  const diags = await page.evaluate((y) => window.kubeloop.apply(y), BAD);
  expect(diags.filter((d) => d.severity === 'error').map((d) => [d.line, d.col])).toContainEqual([6, 3]);
  await expect(page.getByTestId('diagnostic').first()).toHaveAttribute('data-line', '6');
  // The editor's line 6 is `data:`, which the error does not describe: no underline there.
  await expect(page.getByTestId('diag-mark')).toHaveCount(0);
  expect(await editor.inputValue(), 'the person\'s text is untouched').toBe(mine);
  // Applying the editor's own text afterwards draws its own diagnostics as usual.
  await editor.fill(BAD);
  await editor.press('Control+Enter');
  await expect(page.getByTestId('diag-mark')).toHaveAttribute('data-line', '6');
  expect(errors, 'no errors in the browser').toEqual([]);
});

test('typing keeps both layers in sync, also after scrolling a 10,000-line document', async ({ page }) => {
  test.slow(); // a 10,000-line document in a debug build on a shared machine
  const errors = await open(page);
  const editor = page.getByTestId('editor');
  await editor.fill(SAMPLE);
  // Type in the middle of a line and on a new line; the layer follows each keystroke.
  await editor.evaluate((el) => {
    el.focus();
    const at = el.value.indexOf('name: web') + 'name: web'.length;
    el.setSelectionRange(at, at);
  });
  await page.keyboard.type('-tier');
  await page.keyboard.press('Enter');
  await page.keyboard.type('  annotations: {note: "it\'s #1"}');
  await expect(page.getByTestId('editor-highlight')).toContainText('name: web-tier');
  await expectLayersAgree(page);
  await expect(page.getByTestId('editor-highlight').locator('.t-key', { hasText: 'annotations' })).toHaveCount(1);
  // Tab inserts two spaces, in both layers.
  await page.keyboard.press('Tab');
  await expectLayersAgree(page);

  // A 10,000-line paste: one input event, and only the visible window is drawn.
  const doc = SAMPLE.trimEnd() + '\n---\n';
  const big = doc.repeat(Math.ceil(10000 / doc.split('\n').length)).split('\n').slice(0, 10000).join('\n');
  const took = await page.evaluate((text) => {
    const ta = document.querySelector('textarea[data-testid=editor]');
    const t0 = performance.now();
    ta.value = text;
    ta.dispatchEvent(new InputEvent('input', { bubbles: true }));
    return new Promise((resolve) => requestAnimationFrame(() => resolve(performance.now() - t0)));
  }, big);
  console.log(`10,000-line paste: input to next frame in ${took.toFixed(0)} ms (not asserted)`);
  await expect(page.getByTestId('editor-highlight').locator('.hl-line').first()).toHaveText(SAMPLE.split('\n')[0]);
  expect(await page.locator('.hl-inner > .hl-line').count()).toBeLessThan(200);
  expect(await page.locator('.gutter-line').count()).toBeLessThan(200);

  // Scroll to the middle: the window follows, drawn where the textarea shows those lines.
  await editor.evaluate((el) => { el.scrollTop = 5000 * 20; });
  await expect.poll(async () => (await drawn(page)).first).toBeGreaterThan(4900);
  await expectLayersAgree(page);
  const visible = await editor.evaluate((el) => Math.floor(el.scrollTop / 20) + 2);
  await expect(page.locator('.gutter-line', { hasText: new RegExp(`^${visible}$`) })).toHaveCount(1);
  await expect(async () => {
    const g = await lineGeometry(page, visible);
    expect(Math.abs(g.drawnTop - g.expectedTop)).toBeLessThan(0.5);
    const gutterTop = await page.locator('.gutter-line', { hasText: new RegExp(`^${visible}$`) }).boundingBox();
    expect(Math.abs(gutterTop.y - g.expectedTop)).toBeLessThan(0.5);
  }).toPass({ timeout: 10_000 });

  // Type there: click a visible line, type, and both layers agree.
  const lineBox = await page.locator('.hl-inner > .hl-line').nth(visible - 1 - (await drawn(page)).first).boundingBox();
  await page.mouse.click(lineBox.x + 2, lineBox.y + 10);
  await page.keyboard.press('End');
  await page.keyboard.type(' # edited far down');
  await expect(page.getByTestId('editor-highlight')).toContainText('# edited far down');
  await expectLayersAgree(page);
  const edited = (await editor.inputValue()).split('\n')[visible - 1];
  expect(edited.endsWith(' # edited far down')).toBe(true);

  // Scrolled sideways, the layer moves too.
  await page.keyboard.insertText(' '.repeat(10) + 'x'.repeat(300));
  await expect(async () => {
    expect(await editor.evaluate((el) => el.scrollLeft)).toBeGreaterThan(0);
    const side = await lineGeometry(page, visible);
    expect(Math.abs(side.drawnLeft - side.expectedLeft)).toBeLessThan(0.5);
    expect(Math.abs(side.drawnTop - side.expectedTop)).toBeLessThan(0.5);
  }).toPass({ timeout: 10_000 });

  // A wheel over the gutter scrolls the text.
  const before = await editor.evaluate((el) => el.scrollTop);
  const gutterBox = await page.locator('.gutter').boundingBox();
  await page.mouse.move(gutterBox.x + 10, gutterBox.y + 100);
  await page.mouse.wheel(0, 400);
  await expect.poll(() => editor.evaluate((el) => el.scrollTop)).toBeGreaterThan(before);
  expect(errors, 'no errors in the browser').toEqual([]);
});

test('the token colours are readable in light and dark, and user text is never markup', async ({ browser }) => {
  test.slow(); // two pages, one per theme
  for (const colorScheme of ['light', 'dark']) {
    const context = await browser.newContext({ colorScheme, viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    const errors = await open(page);
    const hostile = SAMPLE + '# <img src=x onerror="window.__pwned=1">\nx: "<b>bold</b>"\n';
    await page.getByTestId('editor').fill(hostile);
    await expect(page.getByTestId('editor-highlight').locator('.t-comment', { hasText: '<img' })).toHaveCount(1);
    expect(await page.locator('.code-hl img, .code-hl b').count()).toBe(0);
    expect(await page.evaluate(() => window.__pwned)).toBeUndefined();

    const contrasts = await page.evaluate(() => {
      const parse = (c) => {
        const m = c.match(/[\d.]+/g).map(Number);
        // rgb(r, g, b) or color(srgb r g b) with 0..1 channels
        return c.startsWith('color(') ? m.slice(0, 3).map((x) => x * 255) : m.slice(0, 3);
      };
      const lum = ([r, g, b]) => {
        const f = (x) => { x /= 255; return x <= 0.03928 ? x / 12.92 : ((x + 0.055) / 1.055) ** 2.4; };
        return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
      };
      const bg = parse(getComputedStyle(document.querySelector('.editor')).backgroundColor);
      const out = {};
      for (const cls of ['t-key', 't-str', 't-num', 't-bool', 't-comment', 't-doc', 't-block', 't-blocktext', 't-dash', 't-punct']) {
        const el = document.querySelector(`.code-hl .${cls}`);
        if (!el) { out[cls] = 'missing'; continue; }
        const [a, b] = [lum(parse(getComputedStyle(el).color)), lum(bg)];
        out[cls] = Math.round(((Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05)) * 100) / 100;
      }
      return out;
    });
    for (const [cls, ratio] of Object.entries(contrasts)) {
      expect(ratio, `${colorScheme} ${cls} contrast`).toBeGreaterThanOrEqual(4.5);
    }

    await page.getByTestId('editor').fill(BAD);
    await page.getByTestId('editor').press('Control+Enter');
    await expect(page.getByTestId('diag-mark')).toHaveCount(1);
    const mark = await page.getByTestId('diag-mark').boundingBox();
    await page.mouse.move(mark.x + mark.width / 2, mark.y + mark.height / 2);
    await expect(page.getByTestId('editor-tip')).toBeVisible();
    if (colorScheme === 'dark') {
      await hideNotices(page);
      await page.locator('.editor-panel').screenshot({ animations: 'disabled', path: 'docs/screenshots/editor-dark.png' });
    }
    expect(errors, `no errors in the browser (${colorScheme})`).toEqual([]);
    await context.close();
  }
});

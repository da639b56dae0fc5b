// The rough edges a new learner met (issue #26), each checked in the real page where it shows:
// what the learner sees, where, and that it tells the truth.
// @ts-check
const { test, expect } = require('@playwright/test');
const { open, advance, apply } = require('./helpers');

/** A scenario written in the editor: four nodes, its own seed, a Deployment of two. */
const SCENARIO = `apiVersion: kubeloop.dev/v1alpha1
kind: Scenario
metadata: {name: mine}
spec:
  seed: 7
  nodes: {count: 4, cpu: "2", memory: 4Gi}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: nginx, image: "nginx:1.27"}]
`;

/** Six replicas, two to a node: their chips share each card's row. */
const CRASHY = `apiVersion: apps/v1
kind: Deployment
metadata: {name: crashy}
spec:
  replicas: 6
  selector: {matchLabels: {app: crashy}}
  template:
    metadata: {labels: {app: crashy}}
    spec:
      containers: [{name: app, image: "busybox:1.36"}]
`;

const NODE_CARDS = '.nodes > [data-testid^="node-"]';

/** The test id of the focused element (or its tag). */
const focused = (page) => page.evaluate(() => document.activeElement?.dataset.testid || document.activeElement?.tagName);

/** Whether two boxes overlap by more than half a pixel each way. */
const overlap = (a, b) =>
  Math.min(a.x + a.width, b.x + b.width) - Math.max(a.x, b.x) > 0.5 &&
  Math.min(a.y + a.height, b.y + b.height) - Math.max(a.y, b.y) > 0.5;

test('the Lessons menu lies inside the window at every width, down to a phone, and nothing clips it', async ({ page }) => {
  const errors = await open(page);
  for (const width of [1280, 1100, 640, 375]) {
    await page.setViewportSize({ width, height: width < 600 ? 667 : 800 });
    await page.getByTestId('lessons-menu').click();
    const menu = page.locator('.lessons-menu [role=menu]');
    await expect(menu).toBeVisible();
    const box = await menu.boundingBox();
    expect(box, `at ${width} px`).not.toBeNull();
    expect(box.x, `the menu's left edge at ${width} px`).toBeGreaterThanOrEqual(0);
    expect(box.x + box.width, `the menu's right edge at ${width} px`).toBeLessThanOrEqual(width);
    // Seen, not only laid out: the point at each item's first letters is that item (no panel
    // clips it, nothing covers it).
    const hits = await menu.evaluate((m) =>
      [...m.querySelectorAll('[role=menuitem]')].slice(0, 4).map((item) => {
        const r = item.getBoundingClientRect();
        const at = document.elementFromPoint(r.left + 10, r.top + r.height / 2);
        return !!at && item.contains(at);
      }));
    expect(hits, `at ${width} px`).toEqual([true, true, true, true]);
    await page.keyboard.press('Escape');
    await expect(page.locator('.lessons-menu')).not.toHaveAttribute('open', '');
  }
  expect(errors).toEqual([]);
});

test('a Scenario written in the editor runs: Reset after Apply opens it whole, as the note under the editor says', async ({ page }) => {
  const errors = await open(page);
  const editor = page.getByTestId('editor');
  await editor.fill(SCENARIO);
  await page.getByTestId('apply').click();
  await expect(page.getByTestId('diagnostics')).toContainText('deployment.apps/web created');
  await expect(page.getByTestId('diagnostics')).toContainText('Reset');
  await expect(page.locator(NODE_CARDS)).toHaveCount(3);
  await advance(page, '10s');
  await page.getByTestId('reset').click();
  await expect(page.locator(NODE_CARDS)).toHaveCount(4);
  await expect(page.getByTestId('seed')).toHaveValue('7');
  expect(await page.evaluate(() => window.kubeloop.now())).toBe(0);
  await expect(editor).toHaveValue(SCENARIO);
  expect(errors).toEqual([]);
});

test('after Apply of a Scenario the editor offers to run it; Run starts it from t=0 and Reset restarts it', async ({ page }) => {
  const errors = await open(page);
  const editor = page.getByTestId('editor');
  const run = page.getByTestId('run-scenario');
  await expect(run).toBeHidden();
  await editor.fill(SCENARIO);
  await page.getByTestId('apply').click();
  await expect(run).toBeVisible();
  await run.click();
  await expect(page.locator(NODE_CARDS)).toHaveCount(4);
  await expect(run).toBeHidden();
  await expect(page.getByTestId('seed')).toHaveValue('7');
  await expect(editor).toHaveValue(SCENARIO);
  await advance(page, '20s');
  await page.getByTestId('reset').click();
  await expect.poll(() => page.evaluate(() => window.kubeloop.now())).toBe(0);
  await expect(page.locator(NODE_CARDS)).toHaveCount(4);
  await expect(page.getByTestId('seed')).toHaveValue('7');
  await expect(editor).toHaveValue(SCENARIO);
  expect(errors).toEqual([]);
});

test('Tab passes through the editor until the learner edits; then it indents, and Escape then Tab leaves, as a visible hint says', async ({ page }) => {
  const errors = await open(page);
  const editor = page.getByTestId('editor');
  const text = await editor.inputValue();
  const hint = page.getByTestId('editor-keys');
  await expect(hint).toBeHidden();
  // Tabbing through the page: into the editor and straight out again, writing nothing.
  await page.getByTestId('delete-manifest').focus();
  await page.keyboard.press('Tab');
  expect(await focused(page)).toBe('editor');
  await expect(hint).toBeVisible();
  await expect(hint).toHaveText(/^Tab moves on/);
  await page.keyboard.press('Tab');
  expect(await focused(page)).not.toBe('editor');
  await expect(editor).toHaveValue(text);
  // Back in, the learner types: now Tab indents, and the hint says how to leave.
  await page.keyboard.press('Shift+Tab');
  expect(await focused(page)).toBe('editor');
  await editor.evaluate((el) => el.setSelectionRange(0, 0));
  await page.keyboard.type('#');
  await page.keyboard.press('Tab');
  expect(await focused(page)).toBe('editor');
  await expect(editor).toHaveValue(`#  ${text}`);
  await expect(hint).toHaveText('Tab indents · Esc then Tab to leave');
  await expect(editor).toHaveAccessibleDescription(/Tab indents · Esc then Tab to leave/);
  // Escape, then Tab, leaves; the text keeps what was typed and nothing more.
  await page.keyboard.press('Escape');
  expect(await focused(page)).toBe('editor');
  await page.keyboard.press('Tab');
  expect(await focused(page)).toBe('apply');
  await expect(editor).toHaveValue(`#  ${text}`);
  // A click in the text is editing too.
  await editor.click({ position: { x: 60, y: 15 } });
  await page.keyboard.press('Tab');
  expect(await focused(page)).toBe('editor');
  await expect(editor).not.toHaveValue(`#  ${text}`);
  expect(errors).toEqual([]);
});

test('the highlighted layer stays on the text however the editor is scrolled', async ({ page }) => {
  const errors = await open(page);
  const editor = page.getByTestId('editor');
  await editor.fill(Array.from({ length: 300 }, (_, i) => `key${i}: value ${i}`).join('\n'));
  await editor.evaluate((el) => { el.scrollTop = 2000; });
  await expect.poll(() => page.locator('.hl-inner > .hl-line', { hasText: /^key110: / }).count()).toBe(1);
  // What find-in-page does to a match in the coloured copy, and what scripts can do.
  await page.evaluate(() => {
    document.querySelector('.hl-inner > .hl-line:last-child').scrollIntoView();
    for (const sel of ['.code-hl', '.code-wrap', '.gutter', '.editor-panel']) {
      const el = document.querySelector(sel);
      el.scrollTop = 400;
      el.scrollLeft = 40;
    }
  });
  const at = (n) =>
    page.evaluate((n) => {
      const ta = document.querySelector('textarea[data-testid=editor]');
      const t = ta.getBoundingClientRect();
      const line = [...document.querySelectorAll('.hl-inner > .hl-line')].find((l) => l.textContent.startsWith(`key${n - 1}: `));
      const gutter = [...document.querySelectorAll('.gutter-line')].find((g) => g.textContent === String(n));
      return {
        text: line.getBoundingClientRect().top - (t.top + 10 + (n - 1) * 20 - ta.scrollTop),
        left: line.getBoundingClientRect().left - (t.left + 12 - ta.scrollLeft),
        gutter: gutter.getBoundingClientRect().top - (t.top + 10 + (n - 1) * 20 - ta.scrollTop),
      };
    }, n);
  const shown = await editor.evaluate((el) => Math.floor(el.scrollTop / 20) + 3);
  const d = await at(shown);
  expect(Math.abs(d.text), `the coloured line ${shown} is on its text`).toBeLessThan(0.5);
  expect(Math.abs(d.left)).toBeLessThan(0.5);
  expect(Math.abs(d.gutter), `line number ${shown} is beside its text`).toBeLessThan(0.5);
  // The panel's head did not scroll away either.
  const head = await page.locator('.editor-panel .panel-head').boundingBox();
  const panel = await page.locator('.editor-panel').boundingBox();
  expect(head.y).toBeGreaterThanOrEqual(panel.y);
  expect(errors).toEqual([]);
});

test("the API conversation's labels never cover its status codes", async ({ page }) => {
  const errors = await open(page);
  await page.getByTestId('apply').click();
  await advance(page, '20s');
  await page.getByTestId('tab-sequence').click();
  await expect(page.locator('.seq-body .code-label').first()).toBeVisible();
  const clashes = await page.evaluate(() => {
    const boxes = (sel) => [...document.querySelectorAll(sel)].map((e) => ({ text: e.textContent, r: e.getBoundingClientRect() }));
    const codes = boxes('.seq-body .code-label');
    const labels = boxes('.seq-body .msg-label, .seq-body .node-label');
    const hit = (a, b) =>
      Math.min(a.right, b.right) - Math.max(a.left, b.left) > 0.5 && Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > 0.5;
    return codes.flatMap((c) => labels.filter((l) => hit(c.r, l.r)).map((l) => `${c.text} under "${l.text}"`));
  });
  expect(clashes).toEqual([]);
  expect(errors).toEqual([]);
});

test('CrashLoopBackOff chips stay inside their node card', async ({ page }) => {
  const errors = await open(page);
  await apply(page, CRASHY);
  await advance(page, '20s');
  await page.evaluate(() =>
    window.kubeloop.inject({ type: 'CrashLoop', selector: 'app=crashy', exitCode: 1, duration: '30m' }));
  await advance(page, '10m');
  await expect(page.locator('[data-testid^="pod-"][data-status="CrashLoopBackOff"]').first()).toBeVisible();
  for (const width of [1280, 375]) {
    await page.setViewportSize({ width, height: width < 600 ? 667 : 800 });
    const outside = await page.evaluate(() =>
      [...document.querySelectorAll('.nodes > .node')].flatMap((card) => {
        const c = card.getBoundingClientRect();
        return [...card.querySelectorAll('.pod, .pod-status')]
          .filter((el) => {
            const r = el.getBoundingClientRect();
            return r.left < c.left - 0.5 || r.right > c.right + 0.5;
          })
          .map((el) => `${card.dataset.testid}: ${el.textContent}`);
      }));
    expect(outside, `at ${width} px`).toEqual([]);
  }
  expect(errors).toEqual([]);
});

test("the inspector's YAML tab shows the whole object: no line cut at the drawer's edge, the last one in view", async ({ page }) => {
  const errors = await open(page);
  await page.getByTestId('apply').click();
  await advance(page, '20s');
  for (const [width, height] of [[1280, 800], [375, 667]]) {
    await page.setViewportSize({ width, height });
    // The Deployment: its last-applied annotation is one very long line.
    await page.getByTestId('gap-web').click();
    const inspector = page.getByTestId('inspector');
    await inspector.getByRole('tab', { name: 'YAML' }).click();
    const yaml = inspector.locator('pre.yaml');
    await expect(yaml).toContainText('last-applied-configuration');
    const seen = await yaml.evaluate((pre) => {
      const body = pre.closest('.inspector-body');
      body.scrollTop = body.scrollHeight;
      const range = document.createRange();
      const text = pre.firstChild;
      const end = text.textContent.trimEnd().length;
      range.setStart(text, end - 1);
      range.setEnd(text, end);
      const r = range.getBoundingClientRect();
      const at = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
      return {
        cutOff: pre.scrollWidth - pre.clientWidth,
        wider: body.scrollWidth - body.clientWidth,
        lastInView: r.bottom <= innerHeight && !!at && pre.contains(at),
      };
    });
    expect(seen, `at ${width} px`).toEqual({ cutOff: 0, wider: 0, lastInView: true });
    await page.getByTestId('inspector-close').click();
  }
  expect(errors).toEqual([]);
});

test('with no pods at all the tray does not claim the scheduler placed every pod', async ({ page }) => {
  const errors = await open(page);
  await expect(page.getByTestId('unscheduled')).toContainText('none: there are no pods yet');
  await page.getByTestId('apply').click();
  await advance(page, '20s');
  await expect(page.getByTestId('unscheduled')).toContainText('none: the scheduler has placed every pod');
  expect(errors).toEqual([]);
});

test('a lesson opens at t=0 saying what is true: kubelets not reported yet, no events until Play', async ({ page }) => {
  const errors = await open(page);
  await page.getByTestId('lessons-menu').click();
  await page.getByTestId('lesson-thermostat').click();
  await expect(page.getByTestId('lesson')).toBeVisible();
  expect(await page.evaluate(() => window.kubeloop.now())).toBe(0);
  // kubectl prints Unknown for a node with no Ready condition; the card says why.
  const node = page.getByTestId('node-node-1');
  await expect(node).toHaveAttribute('aria-label', 'Node node-1: Unknown');
  await expect(page.getByTestId('starting-node-1')).toContainText('kubelet starting');
  await page.getByTestId('tab-events').click();
  const empty = page.getByTestId('events-empty');
  await expect(empty).toContainText('Press Play');
  await expect(empty).not.toContainText('Apply the Deployment');
  await expect(page.getByTestId('loops-empty')).toContainText('press Play');
  // Once the clock runs, the kubelets report and the note goes.
  await advance(page, '2s');
  await expect(node).toHaveAttribute('data-ready', 'true');
  await expect(page.getByTestId('starting-node-1')).toHaveCount(0);
  expect(errors).toEqual([]);
});

test('toasts keep off the bottom panel and the fault panel, and go within a few seconds', async ({ page }) => {
  const errors = await open(page);
  await page.getByTestId('apply').click();
  const toast = page.locator('.notice').last();
  await expect(toast).toBeVisible();
  const panel = await page.locator('.bottom-panel').boundingBox();
  const box = await toast.boundingBox();
  expect(overlap(box, panel), 'the toast covers the Events and the other tabs').toBe(false);
  await expect(page.locator('.notice')).toHaveCount(0, { timeout: 6_000 });
  // A fault injected with the fault panel open: its notice keeps clear of the panel's fields.
  await page.getByTestId('faults-toggle').click();
  await expect(page.getByTestId('fault-panel')).toBeVisible();
  await page.evaluate(() => window.kubeloop.inject({ type: 'NodeDown', node: 'node-3' }));
  await expect(page.locator('.notice').last()).toContainText('node-3');
  const faults = await page.getByTestId('fault-panel').boundingBox();
  expect(overlap(await page.locator('.notice').last().boundingBox(), faults), 'the toast covers the fault panel').toBe(false);
  expect(errors).toEqual([]);
});

test("on a phone the events table shows each Event's message", async ({ page }) => {
  await page.setViewportSize({ width: 375, height: 667 });
  const errors = await open(page);
  await page.getByTestId('apply').click();
  await advance(page, '30s');
  await page.getByTestId('tab-events').click();
  const row = page.locator('.event-row').first();
  await row.scrollIntoViewIfNeeded();
  const msg = await row.locator('td.msg').boundingBox();
  expect(msg.x).toBeGreaterThanOrEqual(0);
  expect(msg.x + msg.width).toBeLessThanOrEqual(375);
  expect(msg.width, 'the message has room to be read').toBeGreaterThan(200);
  expect(errors).toEqual([]);
});

test("a course page's lab: the app's toolbar never covers the Desired state header, however narrow", async ({ page }) => {
  test.setTimeout(60_000);
  await page.goto('/www/course-example.html');
  const lab = page.frameLocator('#lab1 iframe');
  await expect(lab.getByTestId('app')).toBeVisible();
  for (const width of [1280, 700, 375]) {
    await page.setViewportSize({ width, height: 800 });
    // Every control of the toolbar inside its bar, and the bar above both panels' heads.
    const spill = await lab.locator('.toolbar').evaluate((bar) => {
      const b = bar.getBoundingClientRect();
      const heads = ['#editor-title', '#cluster-title'].map((s) => document.querySelector(s).closest('.panel-head').getBoundingClientRect());
      const controls = [...bar.querySelectorAll('button, select, input, output, a')].filter((e) => e.getClientRects().length > 0);
      return {
        outside: controls.filter((e) => e.getBoundingClientRect().bottom > b.bottom + 0.5).map((e) => e.dataset.testid || e.tagName),
        overHeads: heads.filter((h) => h.top < b.bottom - 0.5).length,
      };
    });
    expect(spill, `at ${width} px`).toEqual({ outside: [], overHeads: 0 });
  }
});

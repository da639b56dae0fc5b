// The keyboard-only flow of issue #6, through the real page with no mouse at all: a learner loads
// the example Deployment from the Lessons menu, applies it with Ctrl+Enter, plays and pauses,
// reaches a pod in the cluster view, opens its menu (Shift+F10 / the ContextMenu key), crashes its
// container and watches the kubelet heal it; menus, the fault panel, the Share popover and the
// inspector close with Escape and give the focus back. At every step the focused element shows a
// focus ring. Simulated time moves with window.kubeloop.advance (deterministic), never by waiting.
// Saves docs/screenshots/keyboard-pod-menu.png.
// @ts-check
const { test, expect } = require('@playwright/test');

/** Opens the page with `text` autosaved in the editor; records errors. */
async function open(page, text) {
  const errors = [];
  page.on('pageerror', (err) => errors.push(`pageerror: ${err.message}`));
  page.on('console', (msg) => {
    if (msg.type() === 'error') errors.push(`console: ${msg.text()}`);
  });
  if (text !== undefined) {
    await page.addInitScript((t) => {
      if (!sessionStorage.getItem('kl-test-seeded')) {
        localStorage.setItem('kubeloop.editor.v1', t);
        sessionStorage.setItem('kl-test-seeded', '1');
      }
    }, text);
  }
  await page.goto('/');
  await expect(page.getByTestId('app')).toBeVisible();
  await page.waitForFunction(() => typeof window.kubeloop === 'object' && window.kubeloop !== null);
  return errors;
}

/** What has the focus, and whether it is visibly marked (a ring, or the editor's inset shadow). */
const focusInfo = (page) =>
  page.evaluate(() => {
    const el = document.activeElement;
    if (!el || el === document.body) return { tag: 'BODY', visible: false, testid: '', text: '', cls: '', why: 'nothing focused' };
    const cs = getComputedStyle(el);
    const r = el.getBoundingClientRect();
    const ring = (cs.outlineStyle !== 'none' && parseFloat(cs.outlineWidth) > 0) || cs.boxShadow !== 'none';
    const onScreen = r.width > 0 && r.height > 0 && r.bottom > 0 && r.right > 0 &&
      r.top < innerHeight && r.left < innerWidth;
    return {
      tag: el.tagName,
      testid: el.getAttribute('data-testid') || '',
      cls: el.className || '',
      text: (el.getAttribute('aria-label') || el.textContent || '').trim().slice(0, 60),
      visible: el.matches(':focus-visible') && ring && onScreen && cs.visibility !== 'hidden',
      why: `focus-visible=${el.matches(':focus-visible')} ring=${ring} box=${Math.round(r.left)},${Math.round(r.top)} ${Math.round(r.width)}×${Math.round(r.height)}`,
    };
  });

const focusTestId = async (page) => (await focusInfo(page)).testid;

/** Asserts that something has the focus and that it shows it. */
async function expectVisibleFocus(page) {
  const f = await focusInfo(page);
  expect(f.tag, 'something has the focus').not.toBe('BODY');
  expect(f.visible, `the focus on ${f.tag} ${f.testid} "${f.text}" is visible (${f.why})`).toBe(true);
  return f;
}

/** Presses `key` until `matches(focus)` holds, checking the focus is visible after each press.
 * Passing through the editor takes Escape first, as its label says: Tab alone indents there. */
async function pressUntil(page, key, matches, max = 80) {
  for (let i = 0; i < max; i++) {
    if (/^(Shift\+)?Tab$/.test(key) && (await focusInfo(page)).testid === 'editor') await page.keyboard.press('Escape');
    await page.keyboard.press(key);
    const f = await expectVisibleFocus(page);
    if (matches(f)) return f;
  }
  throw new Error(`${key} ×${max} never reached the wanted element`);
}

const podOf = (page, deployment) =>
  page.evaluate((d) => window.kubeloop.state().items
    .filter((o) => o.kind === 'Pod' && o.metadata.name.startsWith(`${d}-`))
    .map((o) => o.metadata.name), deployment);

test('keyboard only: load an example, apply, play and pause, crash a pod from its menu, see it healed', async ({ page }) => {
  test.setTimeout(90_000);
  // The editor holds some other text, so loading the example visibly changes it.
  const errors = await open(page, '# my notes\n');
  await expect(page.getByTestId('editor')).toHaveValue('# my notes\n');

  // Load: Tab to the Lessons menu, open it with Enter, the arrow keys into it, Enter on the example.
  await pressUntil(page, 'Tab', (f) => f.testid === 'lessons-menu');
  await page.keyboard.press('Enter');
  await expect(page.locator('.lessons-menu')).toHaveAttribute('open', '');
  await page.keyboard.press('ArrowDown');
  let f = await expectVisibleFocus(page);
  expect(f.text).toContain('The example Deployment');
  // End and Home wrap around the items; Escape would close, Enter chooses.
  await page.keyboard.press('End');
  expect((await expectVisibleFocus(page)).testid).toMatch(/^lesson-/);
  await page.keyboard.press('Home');
  expect((await expectVisibleFocus(page)).text).toContain('The example Deployment');
  await page.keyboard.press('Enter');
  await expect(page.getByTestId('editor')).toHaveValue(/kind: Deployment/);
  await expect(page.locator('.lessons-menu')).not.toHaveAttribute('open', '');
  // The menu closed and the focus went back to its button, not to the page body.
  await expect.poll(() => focusTestId(page)).toBe('lessons-menu');
  await expectVisibleFocus(page);

  // Apply: into the editor, Ctrl+Enter.
  await pressUntil(page, 'Tab', (x) => x.testid === 'editor');
  await page.keyboard.press('Control+Enter');
  await expect(page.getByTestId('diagnostics')).toContainText('created');
  const deployment = await page.evaluate(() =>
    window.kubeloop.state().items.find((o) => o.kind === 'Deployment').metadata.name);
  // Escape, then Tab, leaves the editor (Tab alone indents).
  await page.keyboard.press('Escape');
  await page.keyboard.press('Tab');
  expect((await expectVisibleFocus(page)).testid).toBe('apply');

  // Play and pause: back to the toolbar with Shift+Tab, Enter plays, Space pauses.
  await pressUntil(page, 'Shift+Tab', (x) => x.testid === 'play');
  await page.keyboard.press('Enter');
  await expect(page.getByTestId('pause')).toBeVisible();
  expect((await expectVisibleFocus(page)).testid).toBe('pause'); // the same button, relabelled
  await expect.poll(() => page.evaluate(() => window.kubeloop.now())).toBeGreaterThan(0);
  await page.keyboard.press('Space');
  await expect(page.getByTestId('play')).toBeVisible();
  expect((await expectVisibleFocus(page)).testid).toBe('play');
  // Deterministic time from here: the Deployment converges.
  await page.evaluate(() => window.kubeloop.advance('60s'));
  await expect(page.getByTestId(`gap-${deployment}`)).toHaveClass(/is-converged/);
  const pods = await podOf(page, deployment);
  expect(pods.length).toBeGreaterThan(0);

  // Reach a pod in the cluster view with Tab.
  f = await pressUntil(page, 'Tab', (x) => /\bpod-main\b/.test(x.cls));
  const podName = await page.evaluate(() => document.activeElement.closest('[data-testid^="pod-"]').dataset.testid.slice(4));
  expect(pods).toContain(podName);
  const pod = page.getByTestId(`pod-${podName}`);
  await expect(pod).toHaveAttribute('data-ready', 'true');

  // Shift+F10 opens its menu at the first item; the arrows move; Escape closes, focus comes back.
  await page.keyboard.press('Shift+F10');
  const menu = pod.locator('details.pod-menu');
  await expect(menu).toHaveAttribute('open', '');
  // The menu draws its items when it opens, then focuses the first: a frame after `open`.
  await expect.poll(() => focusTestId(page)).toBe(`crash-pod-${podName}`);
  f = await expectVisibleFocus(page);
  expect(f.testid).toBe(`crash-pod-${podName}`);
  await page.keyboard.press('ArrowDown');
  expect((await expectVisibleFocus(page)).testid).toBe(`oom-pod-${podName}`);
  await page.keyboard.press('ArrowUp');
  await page.keyboard.press('ArrowUp'); // wraps to the last item
  expect((await expectVisibleFocus(page)).testid).toBe(`kill-pod-${podName}`);
  await page.keyboard.press('Escape');
  await expect(menu).not.toHaveAttribute('open', '');
  f = await expectVisibleFocus(page);
  expect(f.cls).toMatch(/\bpod-main\b/);
  expect(await page.evaluate(() => document.activeElement.closest('[data-testid^="pod-"]').dataset.testid)).toBe(`pod-${podName}`);
  // Escape closed only the menu: nothing else was selected or opened.
  await expect(page.getByTestId('inspector')).toHaveCount(0);

  // The ContextMenu key opens it too; Enter on "Crash its container" injects the fault.
  await page.keyboard.press('ContextMenu');
  await expect(menu).toHaveAttribute('open', '');
  await expect.poll(() => focusTestId(page)).toBe(`crash-pod-${podName}`);
  expect((await expectVisibleFocus(page)).testid).toBe(`crash-pod-${podName}`);
  await page.screenshot({ animations: 'disabled', path: 'docs/screenshots/keyboard-pod-menu.png' });
  const faults = await page.evaluate(() => window.kubeloop.events().length);
  await page.keyboard.press('Enter');
  await expect(menu).not.toHaveAttribute('open', '');
  await expect.poll(async () => (await focusInfo(page)).cls).toMatch(/\bpod-main\b/);
  await expectVisibleFocus(page);

  // The container died: the pod is no longer ready. Then the kubelet restarts it in place.
  await page.evaluate(() => window.kubeloop.advance('1s'));
  await expect(pod).toHaveAttribute('data-ready', 'false');
  expect(await page.evaluate(() => window.kubeloop.events().length)).toBeGreaterThan(faults);
  await page.evaluate(() => window.kubeloop.advance('60s'));
  await expect(pod).toHaveAttribute('data-ready', 'true');
  await expect(pod.locator('.pod-restarts')).toHaveText('↻1');
  await expect(page.getByTestId(`gap-${deployment}`)).toHaveClass(/is-converged/);
  // The focus stayed on the same pod all along.
  expect(await page.evaluate(() => document.activeElement.closest('[data-testid^="pod-"]')?.dataset.testid)).toBe(`pod-${podName}`);
  await expectVisibleFocus(page);

  // Enter inspects it; Escape closes the inspector and the focus stays on the pod.
  await page.keyboard.press('Enter');
  await expect(page.getByTestId('inspector')).toBeVisible();
  await pressUntil(page, 'Tab', (x) => x.testid === 'inspector-close', 200);
  await page.keyboard.press('Escape');
  await expect(page.getByTestId('inspector')).toHaveCount(0);
  f = await expectVisibleFocus(page);
  expect(await page.evaluate(() => document.activeElement.closest('[data-testid^="pod-"]')?.dataset.testid)).toBe(`pod-${podName}`);
  expect(errors).toEqual([]);
});

test('keyboard only: a node menu, the fault panel and the Share popover close with Escape and give the focus back', async ({ page }) => {
  test.setTimeout(90_000);
  const errors = await open(page);

  // A node's menu: Enter on its button opens it, ArrowDown enters it, Escape closes it.
  await pressUntil(page, 'Tab', (f) => f.testid === 'menu-node-node-1');
  await page.keyboard.press('Enter');
  const nodeMenu = page.getByTestId('node-node-1').locator('details.menu');
  await expect(nodeMenu).toHaveAttribute('open', '');
  await page.keyboard.press('ArrowDown');
  expect((await expectVisibleFocus(page)).testid).toBe('nodedown-node-1');
  await page.keyboard.press('Escape');
  await expect(nodeMenu).not.toHaveAttribute('open', '');
  expect((await expectVisibleFocus(page)).testid).toBe('menu-node-node-1');
  // Tab out of an open menu closes it instead of leaving it hanging over the page.
  await page.keyboard.press('ArrowDown');
  await expect(nodeMenu).toHaveAttribute('open', '');
  await pressUntil(page, 'Tab', (f) => f.testid === 'menu-node-node-2');
  await expect(nodeMenu).not.toHaveAttribute('open', '');
  // Choosing an item acts and gives the focus back to the menu's button.
  await page.keyboard.press('Shift+F10');
  const menu2 = page.getByTestId('node-node-2').locator('details.menu');
  await expect(menu2).toHaveAttribute('open', '');
  await pressUntil(page, 'ArrowDown', (f) => f.testid === 'cordon-node-2', 10);
  await page.keyboard.press('Enter');
  await expect(page.getByTestId('node-node-2')).toContainText('SchedulingDisabled');
  await expect.poll(() => focusTestId(page)).toBe('menu-node-node-2');
  await expectVisibleFocus(page);

  // The fault panel: Enter on Faults moves the focus into it; Escape closes it and returns focus.
  await pressUntil(page, 'Shift+Tab', (f) => f.testid === 'faults-toggle');
  await page.keyboard.press('Enter');
  await expect(page.getByTestId('fault-panel')).toBeVisible();
  expect((await expectVisibleFocus(page)).testid).toBe('fault-type');
  await page.keyboard.press('Escape');
  await expect(page.getByTestId('fault-panel')).toHaveCount(0);
  expect((await expectVisibleFocus(page)).testid).toBe('faults-toggle');

  // The Share popover: from its link field, Escape closes it and the focus returns to Share.
  await page.keyboard.press('Shift+Tab');
  expect((await expectVisibleFocus(page)).testid).toBe('share');
  await page.keyboard.press('Enter');
  await expect(page.getByTestId('share-popover')).toBeVisible();
  await expect(page.getByTestId('share-status')).not.toHaveText('Copying…');
  // When the page may not copy, the link field takes the focus, selected; else Tab reaches it.
  if ((await focusTestId(page)) !== 'share-url') await pressUntil(page, 'Tab', (f) => f.testid === 'share-url', 5);
  await expectVisibleFocus(page);
  await page.keyboard.press('Escape');
  await expect(page.getByTestId('share-popover')).toHaveCount(0);
  expect((await expectVisibleFocus(page)).testid).toBe('share');
  expect(errors).toEqual([]);
});

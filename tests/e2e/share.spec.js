// Share links in the real page: a link opens the same scenario (same objects and clock after the
// same deterministic advance), example links open lessons, a broken, truncated or bomb link shows a
// friendly banner and keeps the reader's own text, the Share button copies and measures the link,
// and the address bar follows the editor (except in an embed, which never touches its URL or
// localStorage). A reload re-opens the linked run where it rests (t=0, or where it was paused,
// advanced or acted on) with its seed, keeping the edits made to it; opening the link fresh shows
// exactly the link.
//
// No test waits for wall time: the simulation moves with window.kubeloop.advance, and where the
// address bar's debounce (500 ms of real time) matters, Playwright's fake clock moves it
// (page.clock.runFor), so a loaded machine can only make a test slower, never wrong. Page loads
// get a generous timeout: compiling the wasm is what a loaded machine slows down most.
// @ts-check
const { test, expect } = require('@playwright/test');
const zlib = require('zlib');

const b64url = (buf) => buf.toString('base64').replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
/** A `k1:` fragment made independently of the app (Node's zlib, raw deflate). */
const k1 = (shared) => 'k1:' + b64url(zlib.deflateRawSync(Buffer.from(JSON.stringify(shared))));

const SCENARIO = `apiVersion: kubeloop.dev/v1alpha1
kind: Scenario
metadata: {name: shared-web}
spec:
  seed: 42
  nodes: {count: 2, cpu: "2", memory: 4Gi}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, labels: {app: web}}
spec:
  replicas: 4
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: nginx
        image: nginx:1.27
        resources: {requests: {cpu: 100m, memory: 64Mi}}
`;

/** How long a page may take to download and compile the app on a busy machine. */
const BOOT = { timeout: 60_000 };

/** Waits until the app is mounted and its JS API installed (after a goto or a reload). */
async function appReady(page) {
  await expect(page.getByTestId('app')).toBeVisible(BOOT);
  await page.waitForFunction(() => typeof window.kubeloop === 'object' && window.kubeloop !== null, null, BOOT);
}

/** Opens a page, records console errors and uncaught exceptions, waits for the app. */
async function open(page, path) {
  const errors = [];
  page.on('pageerror', (err) => errors.push(`pageerror: ${err.message}`));
  page.on('console', (msg) => {
    if (msg.type() === 'error') errors.push(`console: ${msg.text()}`);
  });
  await page.goto(path);
  await appReady(page);
  return errors;
}

/** The address bar catches up with an edit once the editor has been still for 500 ms. */
const DEBOUNCE_PASSED = 1000;

/** Everything a run produced, minus what differs between two honest runs (nothing should). */
const snapshot = (page) =>
  page.evaluate(() => ({ now: window.kubeloop.now(), state: window.kubeloop.state(), events: window.kubeloop.events() }));

test('a share link opens the same scenario: same objects and clock after the same advance', async ({ browser }) => {
  test.setTimeout(240_000); // three fresh browsers, each compiling the app (BOOT each, at worst)
  // The author writes a scenario and copies its link with the Share button.
  const author = await browser.newContext();
  await author.grantPermissions(['clipboard-read', 'clipboard-write']);
  const page = await author.newPage();
  const errors = await open(page, '/');
  await page.getByTestId('editor').fill(SCENARIO);
  await page.getByTestId('share').click();
  await expect(page.getByTestId('share-status')).toHaveText(/copied/);
  const url = await page.getByTestId('share-url').inputValue();
  expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/#k1:[A-Za-z0-9_-]+$/);
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(url);
  await expect(page.getByTestId('share-length')).toHaveText(`${url.length.toLocaleString('en-US')} characters`);
  await expect(page.getByTestId('share-warning')).toHaveCount(0);
  expect(errors).toEqual([]);

  // Two readers open it in fresh browsers (no autosave) and run it the same way.
  const runs = [];
  for (let i = 0; i < 2; i++) {
    const ctx = await browser.newContext();
    const reader = await ctx.newPage();
    const errs = await open(reader, url.replace(/^http:\/\/127\.0\.0\.1:\d+/, ''));
    await expect(reader.getByTestId('editor')).toHaveValue(SCENARIO);
    await expect(reader.getByTestId('link-error')).toHaveCount(0);
    await expect(reader.getByTestId('clock')).toHaveText('00:00.0');
    await expect(reader.locator('[data-testid^="node-"]')).toHaveCount(2); // the scenario's nodes
    expect(await reader.evaluate(() => window.kubeloop.advance('45s'))).toBe(45000);
    await expect(reader.getByTestId('clock')).toHaveText('00:45.0');
    await expect(reader.locator('[data-testid^="pod-"][data-ready="true"]')).toHaveCount(4);
    runs.push(await snapshot(reader));
    expect(errs).toEqual([]);
    await ctx.close();
  }
  expect(runs[0].now).toBe(45000);
  expect(runs[1]).toEqual(runs[0]);
  const names = runs[0].state.items.filter((o) => o.kind === 'Pod').map((o) => o.metadata.name);
  expect(names).toHaveLength(4);
  await author.close();
});

test('a link made outside the app (another deflate) opens, with its seed and speed', async ({ page }) => {
  const frag = k1({ y: SCENARIO, s: 7, x: 10 });
  await open(page, `/#${frag}`);
  await expect(page.getByTestId('editor')).toHaveValue(SCENARIO);
  await expect(page.getByTestId('speed')).toHaveValue('10');
  // The frozen test vector from share.rs decodes too.
  await page.goto('/#k1:q1aqVLJSys7MS7FSCMhPiclTqgUA');
  await expect(page.getByTestId('editor')).toHaveValue('kind: Pod\n');
});

test('example links open a built-in lesson at t=0', async ({ page }) => {
  const errors = await open(page, '/#example/thermostat');
  await expect(page.getByTestId('editor')).toHaveValue(/name: thermostat/);
  await expect(page.getByTestId('clock')).toHaveText('00:00.0');
  expect(await page.evaluate(() => window.kubeloop.checks().length)).toBe(7);
  expect(errors).toEqual([]);
});

test('a lesson opened from the menu is named in the address bar and in share links', async ({ page }) => {
  await open(page, '/');
  await page.getByTestId('lessons-menu').click();
  await page.getByTestId('lesson-node-dies').click();
  await expect(page.getByTestId('editor')).toHaveValue(/name: node-dies/);
  await expect.poll(() => page.url()).toMatch(/#example\/node-dies$/);
  await page.getByTestId('share').click();
  await expect(page.getByTestId('share-url')).toHaveValue(/#example\/node-dies$/);
});

test('a truncated link shows the friendly message and keeps the previous text', async ({ page }) => {
  test.setTimeout(90_000);
  await page.clock.install();
  await open(page, '/');
  const mine = '# my own work in progress\napiVersion: v1\nkind: Namespace\nmetadata: {name: mine}\n';
  await page.getByTestId('editor').fill(mine);
  // The address bar follows the edit (debounced) before the reader pastes a link.
  await page.clock.runFor(DEBOUNCE_PASSED);
  await expect.poll(() => page.url()).toContain('#k1:');
  const good = k1({ y: SCENARIO });
  const truncated = good.slice(0, good.length - 9);

  // Pasted into the address bar of the open page: only the fragment changes.
  await page.goto(`/#${truncated}`);
  const banner = page.getByTestId('link-error');
  await expect(banner).toBeVisible();
  await expect(banner).toContainText('This link could not be opened.');
  await expect(banner).toContainText('looks incomplete');
  await expect(banner).toContainText('your own scenario is still here');
  await expect(page.getByTestId('editor')).toHaveValue(mine);

  // Opened fresh (a reload): the autosaved text is back, the link refused the same way.
  await page.reload();
  await appReady(page);
  await expect(page.getByTestId('link-error')).toContainText('looks incomplete');
  await expect(page.getByTestId('editor')).toHaveValue(mine);
  expect(await page.evaluate(() => localStorage.getItem('kubeloop.editor.v1'))).toBe(mine);
  await page.getByTestId('link-error').getByRole('button', { name: 'Dismiss' }).click();
  await expect(page.getByTestId('link-error')).toHaveCount(0);
});

test('a reload re-opens the linked run where it rests, with its seed, keeping the edits made to it', async ({ page, context }) => {
  test.setTimeout(150_000); // four page loads
  // No fake clock here: it fakes `performance` too, which tells a reload from an opened link.
  const link = `/#${k1({ y: SCENARIO, s: 7 })}`;
  const errors = await open(page, link);
  await expect(page.getByTestId('editor')).toHaveValue(SCENARIO);
  await expect(page.getByTestId('clock')).toHaveText('00:00.0');
  // Advanced while paused, the run rests at 45 s, and the address bar names it there (as it does
  // after a pause or an action), so a reload from now on reopens that moment.
  await page.evaluate(() => window.kubeloop.advance('45s'));
  const run = await snapshot(page);
  expect(run.now).toBe(45000);
  await expect.poll(() => page.url()).toMatch(/#k2:/);
  const rested = page.url();

  // An edit that changes nothing in the run (a comment), then a reload right away. The address
  // bar catches up with the edit 500 ms after typing stops, so the reload comes before or after
  // it, depending on the machine; the outcome is the same either way: the edit is kept, and the
  // run reopens at the moment it rested (the next test pins a reload the address bar cannot
  // catch up with: the switch is off).
  const edited = `${SCENARIO}# my note: same cluster\n`;
  await page.getByTestId('editor').fill(edited);
  await expect.poll(() => page.evaluate(() => localStorage.getItem('kubeloop.editedLink.v1'))).not.toBeNull();
  await page.reload();
  await appReady(page);
  await expect(page.getByTestId('editor')).toHaveValue(edited);
  await expect(page.getByTestId('link-error')).toHaveCount(0);
  await expect(page.getByTestId('clock')).toHaveText('00:45.0');
  expect(await snapshot(page)).toEqual(run);
  // The address bar now names what is open: the run at 45 s, with the edited text.
  await expect.poll(() => page.url()).not.toBe(rested);
  const now = page.url();
  expect(now).toMatch(/#k2:/);

  // …so a later reload opens that link: the same text, the same run at the same moment, and
  // from there the run goes on as it did before the reloads.
  await page.reload();
  await appReady(page);
  await expect(page.getByTestId('editor')).toHaveValue(edited);
  await expect(page.getByTestId('clock')).toHaveText('00:45.0');
  expect(page.url()).toBe(now);
  expect(await snapshot(page)).toEqual(run);
  await page.evaluate(() => window.kubeloop.advance('15s'));
  const later = await snapshot(page);
  expect(later.now).toBe(60000);
  expect(errors).toEqual([]);

  // Opening the original link fresh (not a reload) shows exactly the link, from t=0, and plays
  // out the same run.
  const other = await context.newPage();
  await open(other, link);
  await expect(other.getByTestId('editor')).toHaveValue(SCENARIO);
  await expect(other.getByTestId('clock')).toHaveText('00:00.0');
  await other.evaluate(() => window.kubeloop.advance('60s'));
  expect(await snapshot(other)).toEqual(later);
  await other.close();
});

test('with the address-bar switch off, a reload of an opened link still keeps the edits', async ({ page }) => {
  test.setTimeout(90_000);
  await open(page, '/');
  await page.getByTestId('share').click();
  await page.getByTestId('share-track').uncheck();
  await page.keyboard.press('Escape');
  const link = `/#${k1({ y: SCENARIO })}`;
  await page.goto(link); // pasted into the address bar: the link opens, and stays there
  await expect(page.getByTestId('editor')).toHaveValue(SCENARIO);
  const edited = SCENARIO.replace('replicas: 4', 'replicas: 5');
  await page.getByTestId('editor').fill(edited);
  await expect.poll(() => page.evaluate(() => localStorage.getItem('kubeloop.editedLink.v1'))).not.toBeNull();
  await page.reload();
  await appReady(page);
  expect(page.url()).toBe(new URL(link, page.url()).href); // the switch is off: the URL is untouched
  await expect(page.getByTestId('editor')).toHaveValue(edited);
  await expect(page.getByTestId('clock')).toHaveText('00:00.0');
  // Re-run from t=0 with the edits applied.
  await page.evaluate(() => window.kubeloop.advance('45s'));
  await expect(page.locator('[data-testid^="pod-"][data-ready="true"]')).toHaveCount(5);
});

test('a decompression bomb, a newer format and an unknown example are refused, as text', async ({ page }) => {
  await open(page, '/');
  const mine = 'kind: Mine\n';
  await page.getByTestId('editor').fill(mine);
  // 64 MiB of 'a' deflates to ~64 KB: far past the 1 MiB inflate cap.
  const bomb = 'k1:' + b64url(zlib.deflateRawSync(Buffer.alloc(64 << 20, 97), { level: 9 }));
  await page.goto(`/#${bomb}`);
  await expect(page.getByTestId('link-error')).toContainText('more than 1024 KiB');
  await expect(page.getByTestId('editor')).toHaveValue(mine);

  await page.goto('/#k9:AAAA');
  await expect(page.getByTestId('link-error')).toContainText('newer version of Kubeloop');

  await page.goto('/#example/<img src=x onerror="window.pwned=1">');
  await expect(page.getByTestId('link-error')).toContainText('There is no built-in example called');
  await expect(page.locator('[data-testid="link-error"] img')).toHaveCount(0);
  expect(await page.evaluate(() => window.pwned)).toBeUndefined();
  await expect(page.getByTestId('editor')).toHaveValue(mine);
});

test('a link navigated to is opened even when the address bar changed again before its hashchange ran', async ({ page }) => {
  // The race behind a once-flaky test: the editor's debounced link was written into the address
  // bar between a navigation and its hashchange, which then opened the editor's link instead.
  // Here the event names a link the address bar no longer shows, as it did in that race.
  await open(page, '/');
  const mine = 'kind: Mine\n';
  await page.getByTestId('editor').fill(mine);
  await page.evaluate(() => {
    const base = location.href.split('#')[0];
    window.dispatchEvent(new HashChangeEvent('hashchange', { oldURL: location.href, newURL: `${base}#k9:AAAA` }));
  });
  await expect(page.getByTestId('link-error')).toContainText('newer version of Kubeloop');
  await expect(page.getByTestId('editor')).toHaveValue(mine);
});

test('Ctrl+S shares, long links are flagged, and the address bar follows the editor unless switched off', async ({ page, context }) => {
  test.setTimeout(90_000);
  await context.grantPermissions(['clipboard-read', 'clipboard-write']);
  await page.clock.install();
  await open(page, '/');
  // Incompressible text makes a link past 8 KB.
  const noise = Array.from({ length: 600 }, (_, i) => `# ${i} ${Math.random().toString(36).slice(2)}${Math.random().toString(36).slice(2)}`).join('\n');
  const big = `${noise}\napiVersion: v1\nkind: Namespace\nmetadata: {name: big}\n`;
  await page.getByTestId('editor').fill(big);
  await page.keyboard.press('Control+s');
  await expect(page.getByTestId('share-popover')).toBeVisible();
  const len = (await page.getByTestId('share-url').inputValue()).length;
  expect(len).toBeGreaterThan(8192);
  await expect(page.getByTestId('share-warning')).toContainText('longer than 8 KB');

  // The address bar caught up with the edit (debounced), and reopening it restores the text.
  await page.clock.runFor(DEBOUNCE_PASSED);
  await expect.poll(() => page.url()).toContain('#k1:');
  const tracked = page.url();
  const other = await context.newPage();
  await other.goto(tracked);
  await appReady(other);
  await expect(other.getByTestId('editor')).toHaveValue(big);
  await other.close();

  // Switched off: the fragment goes, and edits no longer rewrite the URL.
  await page.getByTestId('share-track').uncheck();
  await expect.poll(() => page.url()).not.toContain('#');
  await page.keyboard.press('Escape');
  await expect(page.getByTestId('share-popover')).toHaveCount(0);
  await page.getByTestId('editor').fill('kind: Changed\n');
  await page.clock.runFor(DEBOUNCE_PASSED * 3); // well past the debounce: still nothing
  expect(page.url()).not.toContain('#');
  expect(await page.evaluate(() => localStorage.getItem('kubeloop.trackUrl.v1'))).toBe('0');
});

test('a script that advances many times in one go has the address bar rewritten once, after it', async ({ page }) => {
  const errors = await open(page, `/#${k1({ y: SCENARIO, s: 7 })}`);
  await expect(page.getByTestId('clock')).toHaveText('00:00.0');
  // Each rewrite encodes the whole run: at 10,000 pods, once per advance was a sixth of the time.
  const during = await page.evaluate(() => {
    window.__addressWrites = 0;
    const replace = history.replaceState.bind(history);
    history.replaceState = (...args) => {
      window.__addressWrites += 1;
      return replace(...args);
    };
    for (let i = 0; i < 20; i += 1) window.kubeloop.advance('1s');
    return window.__addressWrites;
  });
  expect(during).toBe(0);
  await expect.poll(() => page.url()).toMatch(/#k2:/);
  expect(await page.evaluate(() => window.__addressWrites)).toBe(1);
  expect(await page.evaluate(() => window.kubeloop.now())).toBe(20_000);
  expect(errors).toEqual([]);
});

test('an embedded playground never rewrites its URL and never writes localStorage', async ({ page }) => {
  test.setTimeout(90_000);
  await page.clock.install();
  await open(page, '/?embed=1#example/thermostat');
  const url = page.url();
  await expect(page.getByTestId('editor')).toHaveValue(/name: thermostat/);
  await page.getByTestId('editor').fill('kind: EditedInEmbed\n');
  await page.clock.runFor(DEBOUNCE_PASSED * 3); // well past the debounce, and its 250 ms ticks
  expect(page.url()).toBe(url);
  expect(await page.evaluate(() => Object.keys(localStorage))).toEqual([]);
  // No Share button in an embed: an "Open in Kubeloop" link to the full playground instead.
  await expect(page.getByTestId('share')).toHaveCount(0);
  const link = page.getByTestId('open-full');
  await expect(link).toHaveAttribute('href', /\/#k1:/);
  const href = await link.getAttribute('href');
  expect(href).not.toContain('embed=1');
  const full = await page.context().newPage();
  await full.goto(/** @type {string} */ (href));
  await appReady(full);
  await expect(full.getByTestId('editor')).toHaveValue('kind: EditedInEmbed\n');
  await expect(full.locator('.is-embed')).toHaveCount(0);
});

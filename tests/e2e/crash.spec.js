// The panic boundary in the real page: a genuine Rust panic (window.kubeloop.debugPanic, which
// panics while holding the model's RefCell borrowed) shows the crash screen with the message and
// where it happened, keeps the editor text, copies a link that opens the same text, and Restart
// reloads the page with the text back in the editor. An embed never writes localStorage, a link
// that crashes never overwrites the reader's own autosave, a wasm trap without a panic still gets
// a screen, and a wasm that fails to download gets a message instead of a blank page.
// @ts-check
const { test, expect } = require('@playwright/test');
const zlib = require('zlib');

const b64url = (buf) => buf.toString('base64').replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
/** A `k1:` fragment made independently of the app (Node's zlib, raw deflate). */
const k1 = (text) => 'k1:' + b64url(zlib.deflateRawSync(Buffer.from(JSON.stringify({ y: text }))));

const AUTOSAVE = 'kubeloop.editor.v1';

const MINE = `# typed just before the crash
apiVersion: apps/v1
kind: Deployment
metadata: {name: crash-test, labels: {app: crash-test}}
spec:
  replicas: 2
  selector: {matchLabels: {app: crash-test}}
  template:
    metadata: {labels: {app: crash-test}}
    spec:
      containers: [{name: web, image: "nginx:1.27"}]
`;

/** A panic message quoting user text that must stay text. */
const HOSTILE = 'test panic: <img src=x onerror="window.__pwned=1"> & <b>not bold</b>';

/** Opens a page and waits for the app and its JS API (generous: a debug build on a busy machine). */
async function open(page, path) {
  await page.goto(path);
  await expect(page.getByTestId('app')).toBeVisible({ timeout: 30_000 });
  await page.waitForFunction(() => typeof window.kubeloop === 'object' && window.kubeloop !== null);
}

/** Causes a genuine Rust panic through the page; returns what the JS caller saw. */
const panic = (page, message) =>
  page.evaluate((m) => {
    try {
      window.kubeloop.debugPanic(m);
      return 'returned';
    } catch (e) {
      return String(e);
    }
  }, message);

/** The editor text after the page comes back from a Restart. */
async function restartAndWait(page, via) {
  const crashed = page.url();
  await Promise.all([page.waitForEvent('load'), via()]);
  await expect(page.getByTestId('app')).toBeVisible({ timeout: 30_000 });
  await page.waitForFunction(() => typeof window.kubeloop === 'object' && window.kubeloop !== null);
  await expect(page.getByTestId('crash')).toHaveCount(0);
  return crashed;
}

test('a panic shows the crash screen, its link opens the same text, and Restart brings the text back', async ({ browser }) => {
  test.setTimeout(150_000); // three page loads
  const context = await browser.newContext();
  await context.grantPermissions(['clipboard-read', 'clipboard-write']);
  const page = await context.newPage();
  await open(page, '/');
  await page.getByTestId('editor').fill(MINE);
  expect(await page.evaluate((k) => localStorage.getItem(k), AUTOSAVE)).toBe(MINE);

  const seen = await panic(page, HOSTILE);
  expect(seen).toMatch(/RuntimeError|unreachable/); // the instance really trapped

  const dialog = page.getByRole('alertdialog', { name: 'Kubeloop stopped working' });
  await expect(dialog).toBeVisible();
  await expect(dialog).toContainText('A bug in the playground stopped the simulation');
  await expect(page.getByTestId('crash-message')).toHaveText(HOSTILE);
  await expect(page.getByTestId('crash-location')).toHaveText(/^src\/ui\/js_api\.rs:\d+:\d+$/);
  await expect(page.getByTestId('crash-text')).toHaveValue(MINE);
  // The message stayed text: no element was made from it, no handler ran.
  await expect(page.locator('.kl-crash img, .kl-crash b')).toHaveCount(0);
  expect(await page.evaluate(() => /** @type {any} */ (window).__pwned)).toBeUndefined();
  // The dead app underneath is out of reach; focus is in the dialog, on the link button.
  await expect(page.getByTestId('app')).toHaveAttribute('inert', '');
  await expect(page.getByTestId('crash-copy-link')).toBeFocused();
  await expect(page.getByTestId('crash-link-status')).toHaveText(/holds your whole scenario/);
  await page.screenshot({ animations: 'disabled', path: 'docs/screenshots/crash.png' });
  // Reduced motion: the colours switch at once instead of mid-transition in the picture.
  await page.emulateMedia({ colorScheme: 'dark', reducedMotion: 'reduce' });
  await page.screenshot({ animations: 'disabled', path: 'docs/screenshots/crash-dark.png' });
  await page.emulateMedia({ colorScheme: 'light', reducedMotion: null });

  // Keyboard: Tab moves through the dialog's controls and wraps around inside it.
  await page.keyboard.press('Tab');
  await expect(page.getByTestId('crash-restart')).toBeFocused();
  await page.keyboard.press('Shift+Tab');
  await page.keyboard.press('Shift+Tab');
  await expect(page.getByTestId('crash-text')).toBeFocused(); // the last control: the scenario's text
  await page.keyboard.press('Tab');
  await expect(page.getByTestId('crash-copy-link')).toBeFocused();

  // The link button copies a link to the full playground with the scenario in it.
  await page.keyboard.press('Enter');
  await expect(page.getByTestId('crash-link-status')).toHaveText(/Link copied/);
  const url = await page.getByTestId('crash-link').inputValue();
  expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/#k1:[A-Za-z0-9_-]+$/);
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(url);
  // ...which opens the same text for someone else (a fresh browser: no autosave to fall back on).
  const reader = await browser.newContext();
  const other = await reader.newPage();
  await open(other, url.replace(/^http:\/\/127\.0\.0\.1:\d+/, ''));
  await expect(other.getByTestId('editor')).toHaveValue(MINE);
  await reader.close();

  // Restart (from the keyboard) reloads the page with the same text and a working simulation.
  await page.getByTestId('crash-restart').focus();
  await restartAndWait(page, () => page.keyboard.press('Enter'));
  await expect(page.getByTestId('editor')).toHaveValue(MINE);
  expect(page.url()).not.toContain('#');
  expect(await page.evaluate(() => Object.keys(sessionStorage).filter((k) => k.startsWith('kubeloop.restore')))).toEqual([]);
  expect(await page.evaluate(() => window.kubeloop.apply(document.querySelector('textarea').value))).toEqual([]);
  await expect(page.locator('[data-testid^="gap-crash-test"]')).toHaveCount(1);
  await context.close();
});

test('a link that crashes the page never overwrites the reader\'s own autosave', async ({ page }) => {
  test.setTimeout(120_000);
  const theirs = 'apiVersion: v1\nkind: Namespace\nmetadata: {name: from-a-link}\n';
  await open(page, '/');
  await page.getByTestId('editor').fill(MINE);
  await page.goto(`/#${k1(theirs)}`);
  await expect(page.getByTestId('editor')).toHaveValue(theirs);

  await panic(page, 'a bug met while opening a link');
  await expect(page.getByRole('alertdialog')).toBeVisible();
  await expect(page.getByTestId('crash-text')).toHaveValue(theirs);
  await expect(page.getByRole('alertdialog')).not.toContainText('saved in this browser');
  expect(await page.evaluate((k) => localStorage.getItem(k), AUTOSAVE)).toBe(MINE);

  await restartAndWait(page, () => page.getByTestId('crash-restart').click());
  await expect(page.getByTestId('editor')).toHaveValue(theirs);
  expect(await page.evaluate((k) => localStorage.getItem(k), AUTOSAVE)).toBe(MINE);
});

test('an embed that panics never writes localStorage and Restart keeps its edited text', async ({ page }) => {
  test.setTimeout(120_000);
  await open(page, '/?embed=1#example/thermostat');
  const edited = 'kind: EditedInEmbed\n';
  await page.getByTestId('editor').fill(edited);

  expect(await panic(page, 'a bug inside an embed')).toMatch(/RuntimeError|unreachable/);
  const dialog = page.getByRole('alertdialog', { name: 'Kubeloop stopped working' });
  await expect(dialog).toBeVisible();
  await expect(page.getByTestId('crash-text')).toHaveValue(edited);
  await expect(page.getByTestId('crash-link-status')).toHaveText(/holds your whole scenario/);
  // The link is for the full playground, never the embed.
  const url = await page.getByTestId('crash-link').inputValue();
  expect(url).toMatch(/\/#k1:/);
  expect(url).not.toContain('embed=1');
  await page.setViewportSize({ width: 640, height: 480 });
  await page.screenshot({ animations: 'disabled', path: 'docs/screenshots/crash-embed.png' });
  expect(await page.evaluate(() => Object.keys(localStorage))).toEqual([]);

  const crashed = await restartAndWait(page, () => page.getByTestId('crash-restart').click());
  expect(page.url()).toBe(crashed.split('#')[0]); // still the embed; the lesson's fragment is gone
  await expect(page.locator('.is-embed')).toHaveCount(1);
  await expect(page.getByTestId('editor')).toHaveValue(edited);
  expect(await page.evaluate(() => Object.keys(localStorage))).toEqual([]);
});

test('a WebAssembly trap without a panic still gets the crash screen and a working link', async ({ page }) => {
  test.setTimeout(120_000);
  await open(page, '/');
  await page.getByTestId('editor').fill(MINE);
  // What an out-of-memory abort looks like from outside: an uncaught RuntimeError, no report.
  await page.evaluate(() => setTimeout(() => { throw new WebAssembly.RuntimeError('unreachable'); }, 0));
  await expect(page.getByRole('alertdialog', { name: 'Kubeloop stopped working' })).toBeVisible();
  await expect(page.getByTestId('crash-message')).toHaveText(/RuntimeError: unreachable .*without a panic message/);
  await expect(page.getByTestId('crash-location')).toHaveCount(0);
  await expect(page.getByTestId('crash-text')).toHaveValue(MINE);
  await expect(page.getByTestId('crash-copy-link')).toBeEnabled();
  const url = await page.getByTestId('crash-link').inputValue();
  const other = await page.context().newPage();
  await open(other, url.replace(/^http:\/\/127\.0\.0\.1:\d+/, ''));
  await expect(other.getByTestId('editor')).toHaveValue(MINE);
});

test('a wasm that cannot be downloaded shows why instead of a blank page', async ({ page }) => {
  await page.route('**/*.wasm', (route) => route.fulfill({ status: 404, contentType: 'text/plain', body: 'gone' }));
  await page.goto('/');
  const dialog = page.getByRole('alertdialog', { name: 'Kubeloop could not start' });
  await expect(dialog).toBeVisible();
  await expect(page.getByTestId('boot-reason')).toHaveText(/could not be downloaded|could not start the playground/);
  await expect(page.getByTestId('boot-error-message')).not.toBeEmpty();
  await expect(page.getByTestId('boot-reload')).toBeFocused();
  await page.screenshot({ animations: 'disabled', path: 'docs/screenshots/boot-error.png' });
});

// Embedding, end to end: the course page's two labs driven through the SDK (apply, inject, state,
// events, the converged checkpoint, click-to-load), auto-resize, the origin and source checks
// (a popup and a page on another port are ignored), hostile messages, click-to-load and read-only.
// Saves docs/screenshots/course-example.png.
// @ts-check
const { test, expect } = require('@playwright/test');
const http = require('http');

const COURSE = '/www/course-example.html';

/** Records console errors and warnings of the page and all its frames. */
function watchConsole(page) {
  const log = { errors: [], warnings: [] };
  page.on('pageerror', (err) => log.errors.push(`pageerror: ${err.message}`));
  page.on('console', (msg) => {
    if (msg.type() === 'error') log.errors.push(msg.text());
    if (msg.type() === 'warning') log.warnings.push(msg.text());
  });
  return log;
}

/** Waits until the lab's playground has answered the handshake and mounted its app. */
async function labLoaded(page, id) {
  await page.waitForFunction(() => !!window.Kubeloop);
  await page.evaluate(
    (labId) => new Promise((resolve) => window.Kubeloop.get(labId).on('loaded', () => resolve(true))),
    id,
  );
}

/** Calls an SDK method of a lab from the course page. */
const sdk = (page, id, method, ...args) =>
  page.evaluate(({ labId, m, a }) => window.Kubeloop.get(labId)[m](...a), { labId: id, m: method, a: args });

test.describe.configure({ timeout: 120_000 });

test('the course page: two labs driven through the SDK, with a checkpoint that turns green', async ({ page }) => {
  const log = watchConsole(page);
  await page.goto(COURSE);
  await expect(page.locator('h1')).toContainText('Say what should be true');
  await expect(page.locator('#lab1 iframe')).toHaveCount(1);
  await expect(page.locator('#lab2 iframe')).toHaveCount(1);
  await labLoaded(page, 'lab1');
  await expect(page.locator('[data-lab1="play"]')).toBeEnabled();
  const lab1 = page.frameLocator('#lab1 iframe');

  // The inline YAML arrived through the URL fragment, loaded at t=0 with nothing running yet.
  await expect(lab1.getByTestId('editor')).toHaveValue(/replicas: 3/);
  const s0 = await sdk(page, 'lab1', 'getState');
  expect(s0.time).toBe(0);
  expect(s0.deployments).toEqual([expect.objectContaining({ name: 'web', replicas: 3, ready: 0 })]);
  expect(s0.nodes.map((n) => n.name)).toEqual(['node-1', 'node-2', 'node-3']);
  await expect(page.locator('#lab1-check')).toHaveAttribute('data-state', 'pending');

  // Run it forward: the converged event turns the checkpoint green.
  expect(await sdk(page, 'lab1', 'advance', '60s')).toBe(60_000);
  await expect(page.locator('#lab1-check')).toHaveAttribute('data-state', 'done');
  await expect(page.locator('#lab1-check-detail')).toContainText('3 of 3 replicas ready');
  await expect(page.locator('#lab1-ready')).toHaveText('3');
  await expect(page.locator('#lab1-event')).not.toHaveText(/nothing yet/);

  // "Delete a running pod": the page picks one from getState and injects DeletePod.
  const before = (await sdk(page, 'lab1', 'getState')).pods.map((p) => p.name);
  const faults = page.evaluate(() => new Promise((r) => window.Kubeloop.get('lab1').on('fault', r)));
  await page.locator('[data-lab1="kill"]').first().click();
  const fault = await faults;
  expect(fault.fault).toBe('DeletePod');
  await expect(page.locator('#lab1-say')).toContainText('Deleted web-');
  await sdk(page, 'lab1', 'pause');
  await sdk(page, 'lab1', 'advance', '60s');
  await expect(page.locator('#lab1-check')).toHaveAttribute('data-state', 'done');
  const after = (await sdk(page, 'lab1', 'getState')).pods.filter((p) => p.ready).map((p) => p.name);
  expect(after).toHaveLength(3);
  expect(after.filter((n) => !before.includes(n))).toHaveLength(1);

  // apply() through the SDK: refused with positioned diagnostics, or applied; the lab's editor
  // shows what was applied.
  const refused = await sdk(page, 'lab1', 'apply', 'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec: {replicas: many}\n');
  expect(refused.ok).toBe(false);
  expect(refused.diagnostics[0]).toEqual(expect.objectContaining({ line: 4, severity: 'error' }));
  const yaml4 = (await page.evaluate(() => window.Kubeloop.get('lab1').text)).replace('replicas: 3', 'replicas: 4');
  const applied = await sdk(page, 'lab1', 'apply', yaml4);
  expect(applied).toEqual(expect.objectContaining({ ok: true, lines: ['deployment.apps/web configured'] }));
  await expect(lab1.getByTestId('editor')).toHaveValue(/replicas: 4/);
  await expect(sdk(page, 'lab1', 'inject', { type: 'NodeDown', node: 'node-9' })).rejects.toThrow(/node-9/);
  const out = await sdk(page, 'lab1', 'kubectl', 'get deployment web');
  expect(out.ok).toBe(true);
  expect(out.stdout).toContain('web');
  // The lab's run (an apply, a refused fault, a command) travels in the link: format 2.
  const share = await sdk(page, 'lab1', 'getShareUrl');
  expect(share).toMatch(/\/index\.html#k2:/);
  expect(share).not.toContain('embed=1');

  // The clock button says what it does next: start the clock, then pause it.
  const clock1 = page.locator('[data-lab1="play"]');
  await expect(clock1).toHaveText('▶ Start the clock');
  await clock1.click();
  await expect(clock1).toHaveText('❚❚ Pause the clock');
  await clock1.click();
  await expect(clock1).toHaveText('▶ Start the clock');
  expect((await sdk(page, 'lab1', 'getState')).playing).toBe(false);

  // Lab 2 is click-to-load: nothing runs and the buttons wait until the reader clicks it.
  await expect(page.locator('[data-lab2="down"]')).toBeDisabled();
  const lab2 = page.frameLocator('#lab2 iframe');
  await expect(lab2.getByTestId('click-to-load')).toBeVisible();
  await expect(lab2.getByTestId('click-to-load')).toContainText('A node dies');
  await expect(lab2.getByTestId('app')).toHaveCount(0);
  await expect(sdk(page, 'lab2', 'getState')).rejects.toThrow(/not been loaded/);
  await lab2.getByTestId('click-to-load-button').click();
  await labLoaded(page, 'lab2');
  await expect(page.locator('#lab2-checks li')).toHaveCount(6);
  // The page's buttons follow the lesson's steps: no power-off before web is Available, and the
  // checks that follow it say what they wait for.
  const down = page.locator('[data-lab2="down"]');
  await expect(page.locator('[data-lab2="play"]')).toBeEnabled();
  await expect(down).toBeDisabled();
  await expect(down).toHaveAttribute('title', 'Comes after “web is Available before the failure” passes');
  await expect(page.locator('#lab2-checks li[data-state="not-started"]')).toHaveCount(5);
  await expect(page.locator('#lab2-checks li').nth(1)).toContainText('after you power off node-2');

  // Following the page's buttons in order: start the clock, power off node-2 once it is offered,
  // play at 20×. Every check that can pass by then passes; none goes red.
  await page.locator('[data-lab2="play"]').click();
  await expect(page.locator('[data-lab2="play"]')).toHaveText('❚❚ Pause the clock');
  await sdk(page, 'lab2', 'advance', '30s');
  await expect(down).toBeEnabled();
  await down.click();
  await expect(page.locator('#lab2-say')).toContainText('node-2');
  await expect(down).toBeDisabled();
  await page.locator('[data-lab2="fast"]').click();
  await sdk(page, 'lab2', 'pause');
  await sdk(page, 'lab2', 'advance', '7m');
  await expect(page.locator('#lab2-checks li[data-state="passed"]')).toHaveCount(5);
  await expect(page.locator('#lab2-checks li[data-state="failed"]')).toHaveCount(0);
  await expect(page.locator('[data-lab2="up"]')).toBeEnabled();
  const s2 = await sdk(page, 'lab2', 'getState');
  expect(s2.nodes.find((n) => n.name === 'node-2').up).toBe(false);
  const checks = await sdk(page, 'lab2', 'runChecks');
  expect(checks.filter((c) => c.passed === true)).toHaveLength(5);

  // The screenshot: the first lab converged after a pod was replaced, the second mid-lesson.
  await sdk(page, 'lab1', 'advance', '30s');
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.waitForTimeout(600); // toasts and the iframe's height transition settle
  const lab1Box = await page.locator('#lab1-check').boundingBox();
  await page.screenshot({
    animations: 'disabled',
    path: 'docs/screenshots/course-example.png',
    fullPage: true,
    clip: { x: 0, y: 0, width: 1280, height: Math.ceil((lab1Box?.y ?? 1500) + (lab1Box?.height ?? 0) + 40) },
  });
  const lab2Box = await page.locator('#patience').boundingBox();
  const lab2End = await page.locator('#lab2-checks').boundingBox();
  await page.screenshot({
    animations: 'disabled',
    path: 'docs/screenshots/course-example-lab2.png',
    fullPage: true,
    clip: { x: 0, y: Math.floor(lab2Box?.y ?? 0) - 20, width: 1280, height: Math.ceil((lab2End?.y ?? 0) + (lab2End?.height ?? 0) - (lab2Box?.y ?? 0) + 60) },
  });
  expect(log.errors).toEqual([]);
});

test('auto-resize: the iframe follows the height of the playground', async ({ page }) => {
  await page.goto(COURSE);
  await labLoaded(page, 'lab1');
  const iframe = page.locator('#lab1 iframe');
  const height = () => iframe.evaluate((f) => f.getBoundingClientRect().height);
  await expect.poll(height).not.toBe(620); // the placeholder height, replaced by the real one
  const h1 = await height();
  const frame = await (await iframe.elementHandle())?.contentFrame();
  if (!frame) throw new Error('no frame');
  await frame.evaluate(() => {
    const d = document.createElement('div');
    d.id = 'grow';
    d.style.height = '300px';
    document.body.appendChild(d);
  });
  await expect.poll(height, { timeout: 5000 }).toBeGreaterThanOrEqual(h1 + 299);
  const grown = await height();
  await frame.evaluate(() => document.getElementById('grow').remove());
  // Back down to the playground's own height at that moment, not to h1: its layout can still
  // settle after the first resize (a clean clone's run once ended 8 px taller than h1).
  const body = () => frame.evaluate(() => Math.ceil(document.body.getBoundingClientRect().height));
  const followed = async () => {
    const h = await height();
    return Math.abs(h - (await body())) <= 1 && h <= grown - 250;
  };
  await expect.poll(followed, { timeout: 5000 }).toBe(true);
});

test('a playground that reloads shakes hands again and keeps answering', async ({ page }) => {
  await page.goto(COURSE);
  await labLoaded(page, 'lab1');
  await sdk(page, 'lab1', 'advance', '10s');
  const frame = await (await page.locator('#lab1 iframe').elementHandle())?.contentFrame();
  if (!frame) throw new Error('no frame');
  await page.evaluate(() => {
    let seen = 0;
    window.reready = new Promise((r) => window.Kubeloop.get('lab1').on('ready', () => { if (++seen === 2) r(true); }));
  });
  await frame.evaluate(() => location.reload());
  await page.evaluate(() => window.reready);
  const s = await sdk(page, 'lab1', 'getState');
  expect(s.time).toBe(0); // the reloaded playground opened its link afresh
  expect(s.deployments[0].name).toBe('web');
});

test('messages from a popup or another origin are ignored; malformed ones too', async ({ page, context }) => {
  const log = watchConsole(page);
  await page.goto(COURSE);
  await labLoaded(page, 'lab1');
  const id = await page.evaluate(() => window.Kubeloop.get('lab1').id);
  const evil = 'apiVersion: v1\nkind: Namespace\nmetadata: {name: evil}\n';
  const namespaces = async () =>
    (await sdk(page, 'lab1', 'getState')).objects.filter((o) => o.kind === 'Namespace').map((o) => o.metadata.name);

  // 1. An about:blank popup of the course page: same origin, but not the embedding window.
  const popupPromise = context.waitForEvent('page');
  await page.evaluate(() => { window.evilPopup = window.open('about:blank'); });
  const popup = await popupPromise;
  await popup.evaluate(({ labId, yaml }) => {
    const target = window.opener.document.querySelector('#lab1 iframe').contentWindow;
    target.postMessage({ type: 'kubeloop:init', id: 'evil' }, '*');
    target.postMessage({ type: 'kubeloop:call', id: labId, callId: 1, method: 'apply', args: [yaml] }, '*');
  }, { labId: id, yaml: evil });

  // 2. A page on another port opens the course page and writes to its lab.
  const other = http.createServer((req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/html' });
    res.end('<!doctype html><title>elsewhere</title><p>another origin</p>');
  });
  await new Promise((r) => other.listen(0, '127.0.0.1', r));
  const port = /** @type {any} */ (other.address()).port;
  const attacker = await context.newPage();
  await attacker.goto(`http://127.0.0.1:${port}/`);
  const victimPromise = context.waitForEvent('page');
  await attacker.evaluate((url) => { window.victim = window.open(url); }, page.url());
  const victim = await victimPromise;
  const victimLog = watchConsole(victim);
  await labLoaded(victim, 'lab1');
  const victimId = await victim.evaluate(() => window.Kubeloop.get('lab1').id);
  await attacker.evaluate(({ labId, yaml }) => {
    const frame = window.victim.frames[0];
    frame.postMessage({ type: 'kubeloop:init', id: labId }, '*');
    frame.postMessage({ type: 'kubeloop:call', id: labId, callId: 7, method: 'apply', args: [yaml] }, '*');
  }, { labId: victimId, yaml: evil });
  await expect.poll(() => victimLog.warnings.join('\n')).toContain('did not come from the page embedding this playground');
  const victimNs = (await victim.evaluate(() => window.Kubeloop.get('lab1').getState())).objects
    .filter((o) => o.kind === 'Namespace').map((o) => o.metadata.name);
  expect(victimNs).not.toContain('evil');
  other.close();

  // 3. The embedding page itself, breaking the schema: ignored with a warning, or an error reply.
  const replies = await page.evaluate(async ({ labId }) => {
    const frame = document.querySelector('#lab1 iframe');
    const got = [];
    const listen = (e) => { if (e.source === frame.contentWindow && e.data.type === 'kubeloop:result') got.push(e.data); };
    window.addEventListener('message', listen);
    const post = (m) => frame.contentWindow.postMessage(m, new URL(frame.src).origin);
    post({ type: 'kubeloop:call', id: labId, method: 'apply', args: ['x'] }); // no callId
    post({ type: 'kubeloop:call', id: labId, callId: 'big', method: 'apply', args: ['#'.repeat(2 << 20)] });
    post({ type: 'kubeloop:call', id: 'someone-else', callId: 5, method: 'play' });
    post({ type: 'kubeloop:call', id: labId, callId: 'bad-arg', method: 'setSpeed', args: ['fast'] });
    post({ type: 'kubeloop:call', id: labId, callId: 'rm', method: 'deleteEverything' });
    post({ type: 'kubeloop:nonsense', id: labId });
    post('just a string');
    await new Promise((r) => setTimeout(r, 1500));
    window.removeEventListener('message', listen);
    return got;
  }, { labId: id });
  expect(replies.map((r) => r.callId).sort()).toEqual(['bad-arg', 'rm']);
  expect(replies.every((r) => r.ok === false)).toBe(true);
  expect(replies.find((r) => r.callId === 'rm').error).toContain('unknown method');

  expect(await namespaces()).not.toContain('evil');
  const state = await sdk(page, 'lab1', 'getState');
  expect(state.playing).toBe(false);
  expect(state.speed).toBe(1);
  const warnings = log.warnings.join('\n');
  expect(warnings).toContain('did not come from the page embedding this playground');
  expect(warnings).toContain('callId must be');
  expect(warnings).toContain('larger than');
  expect(warnings).toContain('no handshake with that id');
  expect(log.errors).toEqual([]);
});

test('a host page whose origin is not in ?origins= gets no handshake', async ({ page, baseURL }) => {
  // (The served CSP's frame-ancestors 'self' keeps other sites from framing the playground at
  // all, so the allow-list is checked from a same-origin host that is not on it.)
  const log = watchConsole(page);
  const app = new URL('/index.html', baseURL);
  await page.route('**/www/other-host.html', (route) =>
    route.fulfill({
      contentType: 'text/html',
      body: `<!doctype html><iframe id="f" style="width:800px;height:600px"
        src="${app.href}?embed=1&origins=https%3A%2F%2Fcourse.example"></iframe>
        <script>
          window.got = [];
          addEventListener('message', (e) => window.got.push(e.data && e.data.type));
          const f = document.getElementById('f');
          setInterval(() => f.contentWindow.postMessage({type: 'kubeloop:init', id: 'x'}, '${app.origin}'), 300);
        </script>`,
    }),
  );
  await page.goto(new URL('/www/other-host.html', baseURL).href);
  await expect.poll(() => log.warnings.join('\n'), { timeout: 30_000 }).toContain('is not allowed to drive this playground');
  const got = await page.evaluate(() => window.got);
  expect(got).toContain('kubeloop:hello');
  expect(got).not.toContain('kubeloop:ready');
});

test('click-to-load: nothing is built or run until the reader clicks', async ({ page }) => {
  const log = watchConsole(page);
  await page.goto('/index.html?embed=1&ctl=1#example/thermostat');
  const placeholder = page.getByTestId('click-to-load');
  await expect(placeholder).toBeVisible();
  await expect(placeholder).toContainText('The thermostat');
  await page.waitForTimeout(1000);
  await expect(page.getByTestId('app')).toHaveCount(0);
  expect(await page.evaluate(() => typeof window.kubeloop)).toBe('undefined');
  await page.getByTestId('click-to-load-button').click();
  await expect(page.getByTestId('app')).toBeVisible();
  await expect(placeholder).toHaveCount(0);
  await expect(page.getByTestId('editor')).toHaveValue(/name: thermostat/);
  expect(await page.evaluate(() => window.kubeloop.now())).toBe(0);
  expect(log.errors).toEqual([]);
});

test('read-only embeds cannot be edited but still apply; flags pick panels, theme and speed', async ({ page }) => {
  await page.goto('/index.html?embed=1&readonly=1&view=editor,cluster,chart&theme=dark&faults=0&speed=10#example/thermostat');
  const editor = page.getByTestId('editor');
  await expect(editor).toHaveValue(/name: thermostat/);
  const text = await editor.inputValue();
  await expect(editor).toHaveAttribute('readonly', '');
  await editor.click();
  await page.keyboard.type('typed!');
  await page.keyboard.press('Tab');
  await page.keyboard.press('Enter');
  await expect(editor).toHaveValue(text);
  await expect(page.getByTestId('lessons-menu')).toBeHidden();
  await page.getByTestId('apply').click();
  await expect(page.getByTestId('diagnostics')).toContainText('deployment.apps/web unchanged');

  await expect(page.locator('html')).toHaveAttribute('data-theme', 'dark');
  await expect(page.getByTestId('faults-toggle')).toBeHidden();
  await expect(page.getByTestId('tab-chart')).toHaveAttribute('aria-selected', 'true');
  await expect(page.getByTestId('tab-events')).toBeHidden();
  await expect(page.locator('.loop-panel')).toBeHidden();
  await expect(page.getByTestId('speed')).toHaveValue('10');
  const bg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  expect(bg).toBe('rgb(13, 17, 23)');
});

test('?autoplay runs the linked scenario from its start, embedded or not, without a press of Play', async ({ page }) => {
  for (const url of ['/index.html?autoplay=1#example/thermostat', '/index.html?embed=1&autoplay=1#example/thermostat']) {
    await page.goto(url);
    await expect(page.getByTestId('editor')).toHaveValue(/name: thermostat/);
    await expect(page.getByTestId('pause')).toBeVisible();
    await page.waitForFunction(() => window.kubeloop && window.kubeloop.now() > 0);
    // It plays the scenario the link opened: the lesson's Deployment exists.
    const kinds = await page.evaluate(() => window.kubeloop.state().items.map(o => `${o.kind}/${o.metadata.name}`));
    expect(kinds).toContain('Deployment/web');
  }
});

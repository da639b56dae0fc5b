// The playground end to end, in the real page: apply the example Deployment, watch it converge,
// delete a pod and see the ReplicaSet controller replace it. Time is driven deterministically
// through window.kubeloop.advance() (same seed + same inputs = same run), so nothing here waits on
// wall-clock simulation speed. Saves the README screenshot to docs/screenshots/playground.png.
// @ts-check
const { test, expect } = require('@playwright/test');
const { open, hideNotices, advance } = require('./helpers');

const READY = '[data-testid^="pod-"][data-phase="Running"][data-ready="true"]';

/** Deterministic fast-forward; resolves to the new clock in ms. */

/** Names of the pods that are Running and Ready. */
const readyPods = (page) =>
  page.locator(READY).evaluateAll((els) => els.map((e) => e.getAttribute('data-testid').slice('pod-'.length)));

test('apply converges to three ready pods, and a deleted pod is replaced by a new one', async ({ page }) => {
  const errors = await open(page);
  await expect(page.getByTestId('editor')).toHaveValue(/kind: Deployment/);
  await expect(page.locator('[data-testid^="node-"]')).toHaveCount(3);
  await expect(page.locator('[data-testid^="node-"][data-ready="true"]')).toHaveCount(3);

  await page.getByTestId('apply').click();
  await expect(page.getByTestId('diagnostics')).toContainText('deployment.apps/web created');

  await advance(page, '60s');
  await expect(page.locator(READY)).toHaveCount(3);
  await expect(page.getByTestId('clock')).toHaveText(/^01:0\d\.\d$/);
  const before = await readyPods(page);
  expect(new Set(before).size).toBe(3);

  // The per-pod Delete action (a DeletePod fault, as `kubectl delete pod`).
  const victim = before[0];
  await page.getByTestId(`pod-${victim}`).hover();
  await page.getByTestId(`delete-pod-${victim}`).click();
  await expect(page.locator('.notice').last()).toContainText(`pod "${victim}" deleted`);

  // A moment later: the victim is terminating, its replacement exists but is not ready yet.
  await advance(page, '1500ms');
  await expect(page.locator('[data-testid^="pod-"]:not([data-testid^="pod-' + victim + '"])')).toHaveCount(3);

  await advance(page, '60s');
  await expect(page.locator(READY)).toHaveCount(3);
  await expect(page.getByTestId(`pod-${victim}`)).toHaveCount(0);
  const after = await readyPods(page);
  expect(after).not.toContain(victim);
  const replacement = after.filter((n) => !before.includes(n));
  expect(replacement).toHaveLength(1);

  // The events list tells the story in kubectl's words.
  const events = page.getByTestId('events');
  await expect(events).toContainText('SuccessfulCreate');
  await expect(events).toContainText(`pod/${replacement[0]}`);
  await expect(events.locator('th')).toHaveText(['LAST SEEN', 'TYPE', 'REASON', 'OBJECT', 'MESSAGE']);
  // Filtered by object: only the replacement pod's own story.
  const filter = page.getByTestId('events-filter');
  await filter.fill(replacement[0]);
  const objects = events.locator('tbody tr td:nth-child(4)');
  await expect(objects.first()).toHaveText(`pod/${replacement[0]}`);
  expect(new Set(await objects.allTextContents())).toEqual(new Set([`pod/${replacement[0]}`]));
  await expect(events).toContainText('Scheduled');
  await filter.fill('statefulset/');
  await expect(events).toContainText('No events about an object matching “statefulset/”.');
  await filter.fill('');
  await expect(events).toContainText('SuccessfulCreate');

  await page.screenshot({ animations: 'disabled', path: 'docs/screenshots/playground-converged.png' });

  // The chart shows the gap the deletion opened and the loop closing it again.
  await page.getByTestId('tab-chart').click();
  await expect(page.getByTestId('chart')).toContainText('desired 3');
  await expect(page.getByTestId('chart')).toContainText('no gap');
  await hideNotices(page);
  await page.screenshot({ animations: 'disabled', path: 'docs/screenshots/chart.png' });
  expect(errors, 'no errors in the browser console').toEqual([]);
});

test('after Apply on a paused clock the page points at Play, until the clock runs', async ({ page }) => {
  const errors = await open(page);
  const play = page.getByTestId('play');
  const hint = page.locator('.apply-hint');
  await expect(hint).toContainText('Start here');
  await expect(play).not.toHaveClass(/is-hint/);

  await page.getByTestId('apply').click();
  await expect(page.getByTestId('diagnostics')).toContainText('deployment.apps/web created');
  // Nothing acts on a paused clock: Play rings and the line beside Apply says so.
  await expect(play).toHaveClass(/is-hint/);
  await expect(play).toHaveAttribute('title', /nothing acts on what you applied/);
  await expect(hint).toContainText('press Play');
  await expect(page.getByTestId('apply')).not.toHaveClass(/is-hint/);

  await play.click();
  await expect(page.getByTestId('clock')).not.toHaveText('00:00.0');
  await page.getByTestId('pause').click();
  await expect(page.getByTestId('play')).not.toHaveClass(/is-hint/);
  await expect(hint).not.toContainText('press Play');
  expect(errors, 'no errors in the browser').toEqual([]);
});

test('README screenshot: a pod replaced mid-flight, with the API conversation', async ({ page }) => {
  const errors = await open(page);
  await page.getByTestId('apply').click();
  await advance(page, '45s');
  const [victim] = await readyPods(page);
  await page.getByTestId(`pod-${victim}`).hover();
  await page.getByTestId(`delete-pod-${victim}`).click();
  // 25 ms later: the old pod is terminating, the ReplicaSet controller has seen the gap and
  // created a replacement that waits for the scheduler, and the conversation is on screen.
  await advance(page, '25ms');
  await page.getByTestId('tab-sequence').click();
  await expect(page.getByTestId('sequence')).toContainText('reconcile');
  await page.mouse.move(0, 0);
  await hideNotices(page); // transient toasts
  await page.waitForTimeout(600); // let the entry animations settle
  await page.screenshot({ animations: 'disabled', path: 'docs/screenshots/playground.png' });
  expect(errors).toEqual([]);
});

test('play advances the clock, pause stops it, speed and step work', async ({ page }) => {
  await open(page);
  const clock = page.getByTestId('clock');
  await expect(clock).toHaveText(/^00:0\d\.\d$/);
  const start = (await clock.textContent()) ?? '';
  await page.getByTestId('speed').selectOption('10');
  await page.getByTestId('play').click();
  await expect(page.getByTestId('pause')).toBeVisible();
  await expect(clock).not.toHaveText(start);
  await page.getByTestId('pause').click();
  await expect(page.getByTestId('play')).toBeVisible();
  const stopped = await clock.textContent();
  await page.waitForTimeout(300);
  await expect(clock).toHaveText(stopped ?? '');

  await page.getByTestId('apply').click();
  const t0 = await page.evaluate(() => window.kubeloop.now());
  await page.getByTestId('step').click();
  await page.getByTestId('step').click();
  const t1 = await page.evaluate(() => window.kubeloop.now());
  expect(t1).toBeGreaterThan(t0);
  await page.getByTestId('tab-sequence').click();
  await expect(page.getByTestId('sequence')).toContainText('deployment/web');
});

test('a broken manifest is refused with line:col diagnostics, applied with Ctrl+Enter', async ({ page }) => {
  await open(page);
  const editor = page.getByTestId('editor');
  await editor.fill(
    'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: three\n  selector:\n    matchLabels:\n      app: web\n',
  );
  await editor.press('Control+Enter');
  const diags = page.getByTestId('diagnostics');
  await expect(diags.getByTestId('diagnostic').first()).toBeVisible();
  await expect(diags.getByTestId('diagnostic').first()).toHaveAttribute('data-line', /^\d+$/);
  await expect(diags).toContainText(/\d+:\d+/);
  const state = await page.evaluate(() => window.kubeloop.state());
  expect(state.kind).toBe('List');
  expect(state.items.filter((o) => o.kind === 'Deployment')).toHaveLength(0);
  await page.screenshot({ animations: 'disabled', path: 'docs/screenshots/diagnostics.png' });
});

test('the JS API: apply, kubectl, inject, state and events', async ({ page }) => {
  await open(page);
  const api = await page.evaluate(async () => {
    const k = window.kubeloop;
    const t0 = k.now();
    const yaml = document.querySelector('[data-testid=editor]').value;
    const diagnostics = k.apply(yaml);
    k.advance('30s');
    const get = k.kubectl('get pods');
    const bad = k.kubectl('frobnicate');
    const msg = k.inject({ type: 'NodeDown', node: 'node-2' });
    let refused = '';
    try {
      k.inject({ type: 'NodeDown', nod: 'x' });
    } catch (e) {
      refused = String(e.message || e);
    }
    k.advance('90s');
    const state = k.state();
    return {
      diagnostics,
      get,
      bad,
      msg,
      refused,
      kinds: [...new Set(state.items.map((o) => o.kind))].sort(),
      events: k.events().length,
      elapsed: k.now() - t0,
    };
  });
  expect(api.diagnostics).toEqual([]);
  expect(api.get.ok).toBe(true);
  expect(api.get.stdout).toContain('NAME');
  expect(api.bad.ok).toBe(false);
  expect(api.msg).toContain('node-2');
  expect(api.refused).not.toBe('');
  expect(api.kinds).toEqual(expect.arrayContaining(['Deployment', 'Node', 'Pod', 'ReplicaSet']));
  expect(api.events).toBeGreaterThan(0);
  expect(api.elapsed).toBe(120_000);
  // node-2 stopped heartbeating: the node controller no longer reports it Ready.
  await expect(page.getByTestId('node-node-2')).not.toHaveAttribute('data-ready', 'true');
  await expect(page.getByTestId('node-node-1')).toHaveAttribute('data-ready', 'true');
  await page.screenshot({ animations: 'disabled', path: 'docs/screenshots/node-down.png' });
});

// What was one long walk through the faults and the inspector is four tests, each well inside the
// default budget on a loaded machine: the node menu, the fault panel, the inspector, and what a
// powered-off node becomes.

/** Opens the page with the example applied and settled 30 s in. */
async function settled(page) {
  await open(page);
  await page.getByTestId('apply').click();
  await advance(page, '30s');
}

test('the node menu powers a node off and cordons another', async ({ page }) => {
  await settled(page);
  await page.getByTestId('menu-node-node-3').click();
  await page.getByTestId('nodedown-node-3').click();
  await expect(page.locator('.notice').last()).toContainText('node-3');
  // …and kubectl from the same menu: cordon.
  await page.getByTestId('menu-node-node-1').click();
  await page.getByTestId('cordon-node-1').click();
  // The pill keeps the readiness; the cordon gets its own line, which a narrow card does not cut.
  await expect(page.getByTestId('cordoned-node-1')).toHaveText(/SchedulingDisabled/);
  await expect(page.getByTestId('cordoned-node-1')).toBeVisible();
  await expect(page.getByTestId('node-node-1').locator('.node-status')).toHaveText(/^\S*Ready$/);
  const fits = await page.getByTestId('cordoned-node-1').evaluate((el) => el.scrollWidth <= el.clientWidth);
  expect(fits, 'the cordon line shows whole').toBe(true);
  await expect(page.getByTestId('cordon-node-1')).toHaveCount(0); // the menu closed and now offers Uncordon
});

test('the fault panel offers every fault with its parameters and says why one is refused', async ({ page }) => {
  await settled(page);
  await page.getByTestId('faults-toggle').click();
  const panel = page.getByTestId('fault-panel');
  await expect(panel).toBeVisible();
  expect(await panel.getByTestId('fault-type').locator('option').count()).toBe(24);
  await panel.getByTestId('fault-type').selectOption('DeletePod');
  await panel.getByTestId('fault-inject').click();
  await expect(panel.getByRole('alert')).toContainText('name a pod or a label selector');
  await panel.getByTestId('fault-field-selector').fill('app=web');
  await panel.getByTestId('fault-inject').click();
  await expect(page.locator('.notice').last()).toContainText('deleted');
  await page.keyboard.press('Escape');
  await expect(panel).toHaveCount(0);
});

test("the inspector shows a Deployment's spec beside its status, and its conditions", async ({ page }) => {
  await settled(page);
  await page.getByTestId('tab-ownership').click();
  await page.getByTestId('ownership').getByRole('button', { name: 'web', exact: true }).click();
  const insp = page.getByTestId('inspector');
  await expect(insp).toBeVisible();
  await expect(insp).toContainText('spec wants');
  await expect(insp).toContainText('readyReplicas');
  await advance(page, '60s');
  await page.screenshot({ animations: 'disabled', path: 'docs/screenshots/inspector.png' });
  await insp.getByRole('tab', { name: /Conditions/ }).click();
  await expect(insp).toContainText('Available');
  await page.getByTestId('inspector-close').click();
  await expect(insp).toHaveCount(0);
});

test('a powered-off node reads NotReady, whole in its card, and is then tainted unreachable', async ({ page }) => {
  await settled(page);
  await page.getByTestId('menu-node-node-3').click();
  await page.getByTestId('nodedown-node-3').click();
  await advance(page, '60s');
  // Its Ready condition is Unknown: the pill says NotReady, as `kubectl get nodes` does, whole in
  // a 165-px card; its taints break between words.
  const node3 = page.getByTestId('node-node-3');
  await expect(node3.locator('.node-status')).toHaveText(/NotReady$/);
  const pillFits = await node3.locator('.node-status').evaluate((el) => el.scrollWidth <= el.clientWidth);
  expect(pillFits, 'the NotReady pill shows whole').toBe(true);
  expect(await page.evaluate(() => window.kubeloop.kubectl('get node node-3 --no-headers').stdout)).toMatch(/node-3\s+NotReady\s/);
  await advance(page, '10s'); // the node lifecycle controller's next pass taints it
  const taint = node3.locator('.taint', { hasText: 'unreachable:NoExecute' });
  await expect(taint).toHaveText('node.kubernetes.io/unreachable:NoExecute');
  expect(await taint.evaluate((el) => el.getClientRects().length === 1 && el.offsetHeight < 30), 'two lines at most').toBe(true);
});

test("a pod's inspector replays the scheduler's decision", async ({ page }) => {
  await open(page);
  await page.getByTestId('apply').click();
  await advance(page, '30s');
  const insp = page.getByTestId('inspector');
  const [pod] = await readyPods(page);
  await page.getByTestId(`pod-${pod}`).locator('.pod-main').click();
  await expect(insp).toContainText(pod);
  await insp.getByRole('tab', { name: 'Scheduling' }).click();
  await expect(insp).toContainText(/\d of 3 nodes fit/);
  await expect(insp).toContainText('node-3');
  await page.screenshot({ animations: 'disabled', path: 'docs/screenshots/inspector-scheduling.png' });
  await page.keyboard.press('Escape');
  await expect(insp).toHaveCount(0);
});

test('the editor text is autosaved and restored, but never in embed mode', async ({ page }) => {
  await open(page);
  const editor = page.getByTestId('editor');
  await editor.fill('# my notes\n');
  await page.reload();
  await expect(page.getByTestId('editor')).toHaveValue('# my notes\n');

  await page.goto('/?embed=1');
  await expect(page.getByTestId('editor')).toHaveValue(/kind: Deployment/);
  await page.getByTestId('editor').fill('# embedded edit\n');
  await page.goto('/');
  await expect(page.getByTestId('editor')).toHaveValue('# my notes\n');
});

test('dark theme follows the system preference', async ({ browser }) => {
  const context = await browser.newContext({ colorScheme: 'dark', viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  await open(page);
  const bg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  expect(bg).not.toBe('rgb(243, 245, 248)');
  await page.getByTestId('apply').click();
  await advance(page, '40s');
  await page.getByTestId('tab-sequence').click();
  await page.waitForTimeout(500);
  await page.screenshot({ animations: 'disabled', path: 'docs/screenshots/playground-dark.png' });
  await context.close();
});

test('a lesson opens from the menu, offers its actions and ticks its checks', async ({ page }) => {
  const errors = await open(page);
  await page.getByTestId('lessons-menu').click();
  await page.getByTestId('lesson-thermostat').click();
  const lesson = page.getByTestId('lesson');
  await expect(lesson).toContainText('Lesson 3');
  await expect(lesson).toContainText('Try this');
  await expect(page.getByTestId('editor')).toHaveValue(/kind: Scenario/);
  await advance(page, '40s');
  await expect(page.locator(READY)).toHaveCount(3);
  await page.getByTestId('try-0').click(); // Delete every web pod
  await advance(page, '60s');
  await expect(lesson.locator('.check-passed').first()).toBeVisible();
  await hideNotices(page);
  await page.screenshot({ animations: 'disabled', path: 'docs/screenshots/lesson.png' });
  expect(errors).toEqual([]);
});

test('a lesson follows the learner: steps are offered in turn, checks start when their step is done, by any means', async ({ page }) => {
  const errors = await open(page, '/#example/thermostat');
  const lesson = page.getByTestId('lesson');
  const first = page.getByTestId('try-0');
  // At 0:00 nothing can be broken yet: the step waits for web, and says so and when its timeline runs it.
  await expect(first).toBeDisabled();
  await expect(page.getByTestId('try-when-0')).toHaveText('after “web is Available before anything breaks” passes');
  const gap = lesson.locator('.check-row').filter({ has: page.locator('.check-name', { hasText: /^deleting pods opens a gap/ }) });
  await expect(gap).toHaveClass(/check-not-started/);
  await expect(gap).toContainText('waits until you delete every web pod');
  // Every check state is drawn (an SVG icon), never a glyph a font may lack.
  await expect(lesson.locator('.check-glyph svg')).toHaveCount(await lesson.locator('.check-row').count());
  await expect(lesson).not.toContainText('⧗');

  await advance(page, '30s');
  await expect(first).toBeEnabled();
  await expect(page.getByTestId('try-when-0')).toHaveText('timeline: 0:40');
  // Minutes later, the gap check still waits: it follows the learner, not the clock.
  await advance(page, '3m');
  await expect(gap).toHaveClass(/check-not-started/);
  // The console's delete is the step: the card marks it done and the check starts watching.
  await page.getByTestId('tab-console').click();
  const input = page.getByTestId('console-input');
  await input.fill('delete pods -l app=web');
  await input.press('Enter');
  await expect(page.getByTestId('try-when-0')).toHaveText(/✓ done at 3:3\d/);
  await advance(page, '30s');
  await expect(gap).toHaveClass(/check-passed/);
  await expect(page.getByTestId('try-1')).toBeEnabled();
  await hideNotices(page);
  await page.screenshot({ animations: 'disabled', path: 'test-results/lesson-follows.png' });

  // "Play the lesson": its timeline does the steps left, and every check goes green.
  await page.getByTestId('play-lesson').click();
  await expect(page.getByTestId('playing-lesson')).toBeVisible();
  await page.evaluate(() => window.kubeloop.pause());
  await advance(page, '12m');
  await expect(page.getByTestId('try-when-2')).toHaveText(/✓ done at/);
  await expect(lesson.locator('.check-failed')).toHaveCount(0);
  await expect(lesson.locator('.check-passed')).toHaveCount(await lesson.locator('.check-row').count());
  expect(errors).toEqual([]);
});

test('the kubectl console runs commands, recalls them with the arrow keys and completes names with Tab', async ({ page }) => {
  const errors = await open(page);
  await page.getByTestId('apply').click();
  await advance(page, '30s');
  await page.getByTestId('tab-console').click();
  const input = page.getByTestId('console-input');
  const console_ = page.getByTestId('console');

  // A notice (here a cordon from a node's menu) rises above the console's input line.
  await page.getByTestId('menu-node-node-1').click();
  await page.getByTestId('cordon-node-1').click();
  const notice = page.locator('.notice').last();
  await expect(notice).toContainText('cordoned');
  const [n, i] = [await notice.boundingBox(), await input.boundingBox()];
  expect(n.y + n.height, 'the notice ends above the input').toBeLessThan(i.y - 30);

  // Tab fills in a command and a resource type, then lists the pods, which share "web-…".
  await input.fill('desc');
  await input.press('Tab');
  await expect(input).toHaveValue('describe ');
  await input.pressSequentially('po');
  await input.press('Tab');
  await expect(input).toHaveValue('describe pod');
  await input.pressSequentially('s ');
  await input.press('Tab');
  const candidates = page.getByTestId('console-candidates');
  await expect(candidates.locator('span')).toHaveCount(3);
  await expect(input).toHaveValue(/^describe pods web-[a-z0-9]+-$/);
  const pod = await candidates.locator('span').first().textContent();
  // One more letter makes it unique: Tab completes it whole, with a space, and the list goes.
  await input.fill(`describe pods ${pod.slice(0, -2)}`);
  await input.press('Tab');
  await expect(input).toHaveValue(`describe pods ${pod} `);
  await expect(candidates).toHaveCount(0);
  await input.press('Enter');
  await expect(console_.locator('.console-stdout').last()).toContainText(`Name:             ${pod}`);

  // A second Tab on the same candidates leaves the input, so the keyboard is never trapped.
  await input.fill('get ');
  await input.press('Tab');
  await expect(candidates).toContainText('deployments');
  await input.press('Tab');
  await expect(input).not.toBeFocused();

  // History: ArrowUp brings back the last command.
  await input.focus();
  await input.fill('');
  await input.press('ArrowUp');
  await expect(input).toHaveValue(`describe pods ${pod}`);
  expect(errors).toEqual([]);
});

test('the console prints kubectl JSONPath ranges and filters, and custom columns', async ({ page }) => {
  const errors = await open(page);
  await page.getByTestId('apply').click();
  await advance(page, '30s');
  await page.getByTestId('tab-console').click();
  const input = page.getByTestId('console-input');
  const out = page.getByTestId('console').locator('.console-stdout');
  await input.fill(`kubectl get nodes -o jsonpath='{range .items[*]}{.metadata.name}={.status.conditions[?(@.type=="Ready")].status};{end}'`);
  await input.press('Enter');
  await expect(out.last()).toHaveText('node-1=True;node-2=True;node-3=True;');
  await input.fill('kubectl get deploy -o custom-columns=NAME:.metadata.name,READY:.status.readyReplicas,IMAGE:.spec.template.spec.containers[0].image');
  await input.press('Enter');
  await expect(out.last()).toContainText(/NAME\s+READY\s+IMAGE\s+web\s+3\s+nginx:1\.27/);
  expect(errors).toEqual([]);
});

test('Reset with another seed replays the cluster with other pod names', async ({ page }) => {
  const errors = await open(page);
  const seed = page.getByTestId('seed');
  await expect(seed).toHaveValue('1');
  const podsAfterApply = async () => {
    await page.getByTestId('apply').click();
    await advance(page, '30s');
    await expect(page.locator(READY)).toHaveCount(3);
    return (await readyPods(page)).sort();
  };
  const first = await podsAfterApply();
  await seed.fill('42');
  await seed.press('Enter');
  await expect(page.locator('.notice').last()).toContainText('Cluster reset');
  await expect(seed).toHaveValue('42');
  const second = await podsAfterApply();
  expect(second).not.toEqual(first);
  // Reset keeps the seed: the same actions replay the same run. A field that holds no seed
  // (here negative) shows the one Reset keeps.
  await seed.fill('-3');
  await page.getByTestId('reset').click();
  await expect(seed).toHaveValue('42');
  expect(await podsAfterApply()).toEqual(second);
  expect(errors).toEqual([]);
});

test('a share link made after Reset with a seed opens with that seed', async ({ page, context }) => {
  const errors = await open(page);
  const seed = page.getByTestId('seed');
  await seed.fill('42');
  await seed.press('Enter');
  await expect(seed).toHaveValue('42');
  const link = await page.evaluate(() => window.kubeloop.shareLink());
  const other = await context.newPage();
  await other.goto(link);
  await expect(other.getByTestId('seed')).toHaveValue('42');
  expect(errors).toEqual([]);
});

test('window.kubeloop.reset(seed) starts again with that seed, and refuses a bad one', async ({ page }) => {
  await open(page);
  await page.evaluate(() => window.kubeloop.reset(7));
  await expect(page.getByTestId('seed')).toHaveValue('7');
  const refused = await page.evaluate(() => {
    try {
      window.kubeloop.reset(-1);
      return '';
    } catch (e) {
      return String(e.message || e);
    }
  });
  expect(refused).toContain('reset(seed): expected a whole number');
  await expect(page.getByTestId('seed')).toHaveValue('7');
  expect(await page.evaluate(() => window.kubeloop.shareLink())).toMatch(/#k1:/);
});

test('the toolbar fits on one row from a laptop down to the phone layout, every control still named', async ({ page }) => {
  await open(page);
  for (const width of [1280, 1100, 900, 760, 641]) {
    await page.setViewportSize({ width, height: 700 });
    const toolbar = page.locator('.toolbar');
    const fit = await toolbar.evaluate((t) => ({
      overflow: t.scrollWidth - t.clientWidth,
      outside: [...t.querySelectorAll('button, select, input')]
        .filter((e) => e.getBoundingClientRect().right > window.innerWidth + 0.5)
        .map((e) => e.dataset.testid || e.className),
    }));
    expect(fit, `at ${width} px`).toEqual({ overflow: 0, outside: [] });
    for (const name of ['Share', 'Faults', 'Reset', 'Step to the next action', 'Play the simulation']) {
      await expect(page.getByRole('button', { name, exact: true })).toBeVisible();
    }
    await expect(page.getByRole('spinbutton', { name: 'Seed for the next reset' })).toBeVisible();
  }
});

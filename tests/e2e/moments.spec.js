// Seeing the moment (issue #26): playing pauses where a lesson check passes or fails, the clock
// runs in slow motion right after the learner acts (and says so), a second step button runs to
// the next hand-off between components, and a pod no controller owns is marked in the cluster.
//
// Time moves with window.kubeloop.advance where the test asserts on simulated time; where the
// page plays on its own, the test waits for what playing shows (the Play button back, a notice),
// never for wall-clock time.
// @ts-check
const { test, expect } = require('@playwright/test');
const zlib = require('zlib');
const { open, advance, hideNotices } = require('./helpers');

const b64url = (buf) => buf.toString('base64').replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
/** A `k1:` share-link fragment for a scenario (raw deflate of the link's JSON). */
const k1 = (shared) => 'k1:' + b64url(zlib.deflateRawSync(Buffer.from(JSON.stringify(shared))));

// One check that passes a few simulated seconds in, one that fails after 20 s.
const CHECKED = `apiVersion: kubeloop.dev/v1alpha1
kind: Scenario
metadata: {name: moments}
spec:
  seed: 4
  checks:
  - name: web is Available
    wait: deployment/web --for=condition=Available --timeout=2m
  - name: ghost is Available
    wait: deployment/ghost --for=condition=Available --timeout=20s
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: nginx, image: "nginx:1.27"}]
`;

/** The simulated clock before and after two animation frames: time enough for a playing clock to move. */
const clockOverTwoFrames = (page) =>
  page.evaluate(async () => {
    const before = window.kubeloop.now();
    await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
    return [before, window.kubeloop.now()];
  });

test('a lesson pauses playing where a check passes, and says which', async ({ page }) => {
  const errors = await open(page, `/#${k1({ y: CHECKED, x: 10 })}`);
  await expect(page.getByRole('button', { name: 'Pause when a check changes' })).toHaveAttribute('aria-pressed', 'true');
  // Most of the way there deterministically (a check decided while not playing pauses
  // nothing), then the last seconds played at 10×.
  await advance(page, '2s');
  expect((await page.evaluate(() => window.kubeloop.checks())).map((c) => c.passed)).toEqual([null, null]);
  await page.getByTestId('play').click();
  // Paused by the check, with a notice naming it, and the clock stays there.
  await expect(page.getByTestId('play')).toBeVisible();
  await expect(page.locator('.notice').filter({ hasText: 'check “web is Available” passed' })).toBeVisible();
  expect((await page.evaluate(() => window.kubeloop.checks())).map((c) => c.passed)).toEqual([true, null]);
  const [before, after] = await clockOverTwoFrames(page);
  expect(after).toBe(before);
  await page.screenshot({ path: test.info().outputPath('pause-on-check.png') });
  expect(errors).toEqual([]);
});

test('with pausing switched off, a lesson plays through its checks', async ({ page }) => {
  const errors = await open(page, `/#${k1({ y: CHECKED, x: 10 })}`);
  const pauseOnCheck = page.getByRole('button', { name: 'Pause when a check changes' });
  await pauseOnCheck.click();
  await expect(pauseOnCheck).toHaveAttribute('aria-pressed', 'false');
  await advance(page, '18s');
  expect((await page.evaluate(() => window.kubeloop.checks())).map((c) => c.passed)).toEqual([true, null]);
  await page.getByTestId('play').click();
  // The ghost check fails at 20 s and the clock plays on.
  await expect.poll(() => page.evaluate(() => window.kubeloop.checks()[1].passed)).toBe(false);
  await expect(page.getByTestId('pause')).toBeVisible();
  const [before, after] = await clockOverTwoFrames(page);
  expect(after).toBeGreaterThan(before);
  expect(errors).toEqual([]);
});

test('after an action the clock runs in slow motion, says so, and returns to speed on its own', async ({ page }) => {
  const errors = await open(page);
  // The plain playground has no checks to pause on.
  await expect(page.getByRole('button', { name: 'Pause when a check changes' })).toHaveAttribute('aria-pressed', 'false');
  const badge = page.getByTestId('slow-motion');
  await expect(badge).toHaveCount(0);
  await page.getByTestId('apply').click();
  await expect(badge).toHaveText('slow-motion 0.25×');
  await expect(page.getByRole('button', { name: 'Slow motion after your actions' })).toHaveAttribute('aria-pressed', 'true');
  await page.locator('.toolbar').screenshot({ path: test.info().outputPath('slow-motion-toolbar.png') });
  // Three simulated seconds from the action, then the chosen speed again.
  await advance(page, '2900ms');
  await expect(badge).toBeVisible();
  await advance(page, '200ms');
  await expect(badge).toHaveCount(0);

  // Reading changes nothing; deleting a pod at 10× slows the clock to 2.5×.
  await advance(page, '30s');
  await page.evaluate(() => window.kubeloop.kubectl('get pods'));
  await expect(badge).toHaveCount(0);
  await page.getByTestId('speed').selectOption('10');
  const pod = await page.evaluate(() => window.kubeloop.state().items.find((o) => o.kind === 'Pod').metadata.name);
  await page.getByTestId(`pod-${pod}`).hover();
  await page.getByTestId(`delete-pod-${pod}`).click();
  await expect(badge).toHaveText('slow-motion 2.5×');
  await page.screenshot({ path: test.info().outputPath('slow-motion.png') });

  // Switched off: no slow motion, even right after an action.
  await page.getByRole('button', { name: 'Slow motion after your actions' }).click();
  await expect(badge).toHaveCount(0);
  await page.evaluate(() => window.kubeloop.kubectl('scale deployment web --replicas=2'));
  await expect(badge).toHaveCount(0);
  expect(errors).toEqual([]);
});

test('step to the next hand-off: the ReplicaSet, its pods, then their binding, one move per press', async ({ page }) => {
  const errors = await open(page);
  await page.getByTestId('apply').click();
  const handOff = page.getByRole('button', { name: 'Step to the next hand-off' });
  await expect(handOff).toHaveAttribute('aria-keyshortcuts', 'H');
  const kinds = () =>
    page.evaluate(() => {
      const items = window.kubeloop.state().items;
      return {
        replicaSets: items.filter((o) => o.kind === 'ReplicaSet').length,
        pods: items.filter((o) => o.kind === 'Pod').length,
        bound: items.filter((o) => o.kind === 'Pod' && o.spec.nodeName).length,
      };
    });

  await handOff.click();
  await expect(page.locator('.notice').last()).toContainText('deployment-controller created ReplicaSet web-');
  expect(await kinds()).toEqual({ replicaSets: 1, pods: 0, bound: 0 });
  // The API conversation, which a step changes, is on screen.
  await expect(page.getByTestId('sequence')).toContainText('ReplicaSet');

  // The keyboard shortcut: the ReplicaSet controller's three pods, waiting for a node.
  await page.keyboard.press('h');
  await expect(page.locator('.notice').last()).toContainText('replicaset-controller created Pod web-');
  expect(await kinds()).toEqual({ replicaSets: 1, pods: 3, bound: 0 });
  await expect(page.getByTestId('unscheduled')).toHaveAttribute('data-count', '3');
  await hideNotices(page);
  await page.screenshot({ path: test.info().outputPath('hand-off-pods.png') });

  // The scheduler binds them: at most three more presses.
  for (let press = 0; press < 3 && (await kinds()).bound < 3; press++) {
    await page.keyboard.press('h');
    await expect(page.locator('.notice').last()).toContainText('default-scheduler bound Pod web-');
  }
  expect(await kinds()).toEqual({ replicaSets: 1, pods: 3, bound: 3 });
  await expect(page.getByTestId('unscheduled')).toHaveAttribute('data-count', '0');
  expect(errors).toEqual([]);
});

test('a pod released by a relabel is marked an orphan on its chip and in the legend', async ({ page }) => {
  const errors = await open(page);
  await page.getByTestId('apply').click();
  await advance(page, '30s');
  await expect(page.getByTestId('legend-orphan')).toHaveCount(0);
  const pods = await page.evaluate(() =>
    window.kubeloop.state().items.filter((o) => o.kind === 'Pod').map((o) => o.metadata.name));
  const victim = pods[0];
  const out = await page.evaluate((p) => window.kubeloop.kubectl(`label pod ${p} app=debug --overwrite`), victim);
  expect(out.ok).toBe(true);
  await advance(page, '5s');

  const chip = page.getByTestId(`pod-${victim}`);
  await expect(chip).toHaveClass(/\bis-orphan\b/);
  await expect(page.getByTestId(`orphan-pod-${victim}`)).toHaveText('orphan');
  await expect(page.getByRole('button', { name: /orphan: no controller owns this pod/ })).toHaveCount(1);
  await expect(chip.getByRole('button', { name: /orphan: no controller owns this pod/ })).toBeVisible();
  // Its replacement and the others have a controller.
  await expect(page.locator('.pod.is-orphan')).toHaveCount(1);
  await expect(page.getByTestId('legend-orphan')).toContainText('no controller owns the pod');
  await hideNotices(page);
  await page.mouse.move(0, 0);
  await page.locator('.cluster-panel').screenshot({ path: test.info().outputPath('orphan.png') });
  expect(errors).toEqual([]);
});

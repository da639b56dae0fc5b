// The kubectl console as a learner uses it: a lesson's kubectl steps land in it, it keeps the
// newest output on screen, each lesson starts it clean, `drain` prints its evictions as simulated
// time runs, and `apply -f -` reads the editor's text or a pasted here-document. Simulated time
// moves only through window.kubeloop.advance(), so every wait is on an observable state.
// @ts-check
const { test, expect } = require('@playwright/test');
const { open, advance, hideNotices } = require('./helpers');

/** Where the console's transcript is scrolled: its box, and each entry's place in it. */
const scrollState = (page) =>
  page.getByTestId('console').locator('.console-out').evaluate((el) => ({
    top: el.scrollTop,
    height: el.clientHeight,
    full: el.scrollHeight,
    last: (() => {
      const e = el.lastElementChild;
      return e ? { top: e.offsetTop, height: e.offsetHeight } : null;
    })(),
  }));

/** True when the transcript shows its end. */
const atBottom = (s) => s.top + s.height >= s.full - 2;

/** Runs one command in the console and waits for its entry. */
async function run(page, command) {
  const entries = page.getByTestId('console').locator('.console-out > .console-entry');
  const before = await entries.count();
  const input = page.getByTestId('console-input');
  await input.fill(command);
  await input.press('Enter');
  await expect(input).toHaveValue('');
  if (before < 200) await expect(entries).toHaveCount(before + 1);
  return entries.last();
}

test("a lesson's kubectl step opens the console and shows its whole output there", async ({ page }) => {
  const errors = await open(page, '/#example/fix-the-spec');
  await advance(page, '40s');
  await expect(page.getByTestId('tab-events')).toHaveAttribute('aria-selected', 'true');
  const web = await page.evaluate(
    () => window.kubeloop.state().items.filter((o) => o.kind === 'Pod' && o.metadata.labels.app === 'web').length,
  );
  expect(web).toBeGreaterThan(1);

  await page.getByTestId('try-0').click(); // kubectl label pods -l app=web app=web-debug --overwrite
  await expect(page.getByTestId('tab-console')).toHaveAttribute('aria-selected', 'true');
  const entry = page.getByTestId('console').locator('.console-entry').last();
  await expect(entry.locator('.console-cmd')).toHaveText('$ kubectl label pods -l app=web app=web-debug --overwrite');
  // One line per pod labelled, as kubectl prints them, not a toast with the first one.
  await expect(entry.locator('.console-stdout')).toHaveText(new RegExp(`^(pod/web-\\S+ labeled\\s*){${web}}$`));
  await expect(entry).toBeInViewport();
  await expect(page.locator('.notice', { hasText: 'labeled' })).toHaveCount(0);

  // The next step's output lands under it, on screen, even with another tab open in between
  // (at the lesson's pace: the ReplicaSet has replaced the relabelled pods by then).
  await advance(page, '20s');
  await page.getByTestId('tab-events').click();
  await page.getByTestId('try-1').click(); // kubectl set image pods -l app=web nginx=nginx:1.28
  await expect(page.getByTestId('tab-console')).toHaveAttribute('aria-selected', 'true');
  const next = page.getByTestId('console').locator('.console-entry').last();
  await expect(next.locator('.console-stdout')).toContainText('image updated');
  await expect(next).toBeInViewport();
  expect(errors).toEqual([]);
});

test('each lesson starts the console clean, with the commands before it folded away', async ({ page }) => {
  const errors = await open(page);
  await page.getByTestId('tab-console').click();
  await run(page, 'get nodes');
  await run(page, 'version');
  const console_ = page.getByTestId('console');
  await expect(console_.locator('.console-earlier')).toHaveCount(0);

  await page.getByTestId('lessons-menu').click();
  await page.getByTestId('lesson-thermostat').click();
  await expect(page.getByTestId('lesson')).toContainText('Lesson 3');
  const earlier = console_.getByTestId('console-earlier');
  await expect(earlier.locator('summary')).toHaveText('2 earlier commands');
  await expect(earlier.locator('.console-entry').first()).toBeHidden();
  await expect(console_.locator('.console-out > .console-entry')).toHaveCount(0);
  await expect(console_.locator('.console-intro')).toBeVisible();

  // Reset starts the lesson over, and the console with it; the earlier commands stay one click away.
  await run(page, 'get pods');
  await page.getByTestId('reset').click();
  await expect(earlier.locator('summary')).toHaveText('3 earlier commands');
  await earlier.locator('summary').click();
  await expect(earlier.locator('.console-entry').first()).toContainText('get nodes');
  expect(errors).toEqual([]);
});

test('the console scrolls to every new output, however long the transcript or the output', async ({ page }) => {
  const errors = await open(page);
  await page.getByTestId('apply').click();
  await advance(page, '30s');
  await page.getByTestId('tab-console').click();
  // The transcript at its cap of 200 commands: a new one replaces the oldest.
  await page.evaluate(() => {
    for (let i = 0; i < 200; i++) window.kubeloop.kubectl('get nodes');
  });
  const console_ = page.getByTestId('console');
  await expect(console_.locator('.console-out > .console-entry')).toHaveCount(200);

  const short = await run(page, 'get deploy,rs,pods');
  await expect(short).toContainText('deployment.apps/web');
  await expect.poll(async () => atBottom(await scrollState(page))).toBe(true);

  // An output taller than the panel is shown from its command line.
  const tall = await run(page, 'describe nodes');
  await expect(tall).toContainText(/Name:\s+node-3/);
  await expect.poll(async () => {
    const s = await scrollState(page);
    return s.last.height > s.height && s.top === s.last.top;
  }).toBe(true);
  await expect(tall.locator('.console-cmd')).toBeInViewport();
  expect(errors).toEqual([]);
});

test("kubectl drain prints kubectl's own lines into the console as simulated time runs", async ({ page }) => {
  const errors = await open(page, '/#example/inconsistent');
  await advance(page, '40s');
  await page.getByTestId('try-0').click(); // kubectl drain node-1 --ignore-daemonsets
  const entry = page.getByTestId('console').locator('.console-entry').last();
  await expect(entry.locator('.console-stdout').first()).toHaveText('node/node-1 cordoned');
  await expect(entry).toHaveAttribute('data-running', 'true');

  // Each eviction is refused by the budget and retried every 5 s, on the console as kubectl says it.
  await advance(page, '1s');
  await expect(entry).toContainText(/evicting pod default\/web-\S+/);
  const refused =
    /error when evicting pods\/"web-\S+" -n "default" \(will retry after 5s\): Cannot evict pod as it would violate the pod's disruption budget\./;
  await expect(entry.locator('.console-stderr')).toContainText(refused);
  const evicting = () => entry.evaluate((e) => (e.textContent.match(/evicting pod /g) || []).length);
  const first = await evicting();
  await advance(page, '10s');
  await expect.poll(evicting).toBeGreaterThan(first);
  await expect.poll(async () => atBottom(await scrollState(page))).toBe(true);

  // Fixing the budget lets the same drain finish: the pods go one by one and kubectl says so.
  await page.getByTestId('try-1').click(); // minAvailable: 4
  await advance(page, '3m');
  await expect(entry.locator('.console-stdout').last()).toContainText(/pod\/web-\S+ evicted\s+node\/node-1 drained$/);
  await expect(entry).toHaveAttribute('data-running', 'false');
  await expect.poll(async () => atBottom(await scrollState(page))).toBe(true);

  // With --timeout, kubectl gives up with its own error once the time is up.
  await run(page, 'uncordon node-1');
  await page.evaluate(() => window.kubeloop.applyReport(
    'apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: web}\nspec:\n  minAvailable: 10\n  selector: {matchLabels: {app: web}}\n',
  ));
  await advance(page, '5s');
  const timed = await run(page, 'drain node-2 --ignore-daemonsets --timeout=12s');
  await advance(page, '20s');
  await expect(timed.locator('.console-stderr').last()).toContainText(
    /error when evicting pods\/"web-\S+" -n "default": global timeout reached: 12s/,
  );
  await expect(timed.locator('.console-stderr').last()).toContainText(
    /There are pending nodes to be drained:\s+node-2\s+error: /,
  );
  await expect(timed).toHaveAttribute('data-running', 'false');
  expect(errors).toEqual([]);
});

test("kubectl apply -f - applies the editor's text, and a pasted or typed here-document its own", async ({ page }) => {
  const errors = await open(page);
  await page.getByTestId('tab-console').click();
  const applied = await run(page, 'apply -f -');
  await expect(applied.locator('.console-stdout')).toHaveText('deployment.apps/web created');

  // A paste keeps its lines: the here-document is the standard input.
  const input = page.getByTestId('console-input');
  await input.fill(
    'kubectl apply -f - <<EOF\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: api\nspec:\n  replicas: 2\n' +
      '  selector:\n    matchLabels: {app: api}\n  template:\n    metadata:\n      labels: {app: api}\n    spec:\n' +
      '      containers: [{name: api, image: "nginx:1.27"}]\nEOF',
  );
  await input.press('Enter');
  const pasted = page.getByTestId('console').locator('.console-entry').last();
  await expect(pasted.locator('.console-stdout')).toHaveText('deployment.apps/api created');
  await expect(pasted.locator('.console-cont')).toHaveCount(14);

  // Typed line by line: while the here-document is open, Enter starts a new line, as bash's `>`.
  await input.pressSequentially('apply -f - <<EOF');
  await input.press('Enter');
  for (const line of ['apiVersion: v1', 'kind: Service', 'metadata: {name: api}', 'spec: {selector: {app: api}, ports: [{port: 80}]}']) {
    await input.pressSequentially(line);
    await input.press('Enter');
  }
  await expect(input).toHaveValue(/^apply -f - <<EOF\napiVersion: v1\n[^]*\n$/);
  await input.pressSequentially('EOF');
  await input.press('Enter');
  await expect(input).toHaveValue('');
  await expect(page.getByTestId('console').locator('.console-entry').last().locator('.console-stdout')).toHaveText('service/api created');
  expect(await page.evaluate(() => window.kubeloop.state().items.filter((o) => o.metadata.name === 'api').map((o) => o.kind).sort()))
    .toEqual(['Deployment', 'Service']);
  expect(errors).toEqual([]);
});

test('kubectl explain fetches its descriptions on first use, outside the first paint, and prints as kubectl does', async ({ page }) => {
  const fetched = [];
  page.on('request', (r) => { if (r.url().includes('/www/explain/')) fetched.push(r.url()); });
  const errors = await open(page);
  await page.getByTestId('tab-console').click();
  expect(fetched).toEqual([]);

  const entry = await run(page, 'explain pods.spec.containers');
  const out = entry.locator('.console-stdout');
  await expect(out).toContainText('FIELD: containers <[]Container>');
  await expect(out).toContainText('A single application container that you want to run within a pod.');
  await expect(out).toContainText(/name\s+<string> -required-/);
  expect(fetched).toHaveLength(1);

  // The descriptions stay: the next explain, a CRD's included, needs no second fetch.
  const next = await run(page, 'explain deployments.apps --recursive');
  await expect(next.locator('.console-stdout')).toContainText(/GROUP:\s+apps/);
  expect(fetched).toHaveLength(1);
  expect(errors).toEqual([]);
});

test('a look at the console: a drain streaming its evictions and a here-document applied', async ({ page }) => {
  await open(page, '/#example/inconsistent');
  await advance(page, '40s');
  await page.getByTestId('try-0').click();
  await advance(page, '12s');
  const input = page.getByTestId('console-input');
  await input.fill('kubectl apply -f - <<EOF\napiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec:\n  selector: {app: web}\n  ports: [{port: 80}]\nEOF');
  await input.press('Enter');
  await advance(page, '6s');
  await hideNotices(page);
  await page.getByTestId('console').screenshot({ path: 'test-results/console-drain-and-heredoc.png' });
  await page.getByTestId('console').locator('.console-out').evaluate((el) => { el.scrollTop = 0; });
  await page.getByTestId('console').screenshot({ path: 'test-results/console-drain-start.png' });
});

// The fault timeline and the per-Deployment chart, end to end in the real page: apply two
// Deployments, inject a fault through window.kubeloop, fast-forward deterministically with
// window.kubeloop.advance(), and read the timeline the page draws — the fault, the pods it hit
// and the pods made in answer (names checked against the page's own trace) and the time to
// recovery. Saves docs/screenshots/fault-timeline.png and docs/screenshots/chart-deployment.png.
// @ts-check
const { test, expect } = require('@playwright/test');
const { open, hideNotices, advance, apply } = require('./helpers');

const READY = '[data-testid^="pod-"][data-phase="Running"][data-ready="true"]';

const TWO_DEPLOYMENTS = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: nginx, image: "nginx:1.27", resources: {requests: {cpu: 100m, memory: 128Mi}}}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: api}
spec:
  replicas: 2
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec:
      containers: [{name: api, image: "nginx:1.27", resources: {requests: {cpu: 100m, memory: 128Mi}}}]
`;

const BARE_POD = `apiVersion: v1
kind: Pod
metadata: {name: debug}
spec:
  containers: [{name: shell, image: "busybox:1.36"}]
`;

const inject = (page, fault) => page.evaluate((f) => window.kubeloop.inject(f), fault);
/** Pod names that are Running and Ready on the page, with a prefix. */
const readyPods = (page, prefix) =>
  page
    .locator(READY)
    .evaluateAll((els) => els.map((e) => e.getAttribute('data-testid').slice('pod-'.length)))
    .then((names) => names.filter((n) => n.startsWith(prefix)));

test('a deleted pod, its replacement and the time to recovery are on the fault timeline', async ({ page }) => {
  // Two minutes of simulated time and two panels: more than the default on a busy 2-core machine.
  test.setTimeout(90_000);
  const errors = await open(page);
  expect(await apply(page, TWO_DEPLOYMENTS)).toEqual([]);
  await advance(page, '60s');
  await expect(page.locator(READY)).toHaveCount(5);
  const [victim] = await readyPods(page, 'web-');
  expect(await inject(page, { type: 'DeletePod', pod: victim })).toContain(`pod "${victim}" deleted`);
  await advance(page, '30s');
  await expect(page.locator(READY)).toHaveCount(5);

  // The page's own trace says who replaced it: the ReplicaSet controller's create after the fault.
  const trace = await page.evaluate(() => window.kubeloop.trace(0));
  const fault = trace.find((e) => e.type === 'fault' && e.fault === 'DeletePod');
  expect(fault).toBeTruthy();
  const created = trace
    .filter((e) => e.seq > fault.seq && e.type === 'api' && e.verb === 'create' && e.code === 201)
    .filter((e) => e.actor === 'replicaset-controller' && e.object.startsWith('Pod/default/web-'))
    .map((e) => e.object.split('/')[2]);
  expect(created).toHaveLength(1);
  const [replacement] = created;
  expect(trace.some((e) => e.type === 'api' && e.verb === 'delete' && e.object === `Pod/default/${victim}`)).toBe(true);

  await page.getByTestId('tab-timeline').click();
  const card = page.getByTestId('timeline-incident');
  await expect(card).toHaveCount(1);
  await expect(card).toHaveAttribute('data-fault', 'DeletePod');
  await expect(card).toContainText(`pod ${victim}`);
  await expect(card.getByTestId(`timeline-row-${victim}`)).toContainText('deleted');
  await expect(card.getByTestId(`timeline-row-${victim}`)).toContainText('owned by ReplicaSet web-');
  const rep = card.getByTestId(`timeline-row-${replacement}`);
  await expect(rep).toContainText('created');
  await expect(rep).toContainText(/scheduled → node-\d/);
  await expect(rep).toContainText('Ready');
  await expect(rep).toContainText('created by replicaset-controller for ReplicaSet web-');
  await expect(card.getByTestId('timeline-verdict')).toHaveText(/recovered after \d+\.\ds/);
  await expect(card).toHaveAttribute('data-verdict', 'recovered');
  await expect(card).toContainText('deployment/web');
  await expect(card.getByTestId('timeline-recovery-bar')).toBeVisible();
  // Only web was hit: api is not part of this incident.
  await expect(card).not.toContainText('deployment/api');

  // Clicking an object on the timeline selects it in the inspector.
  await rep.locator('.tl-name button').click();
  await expect(page.getByTestId('inspector')).toContainText(replacement);
  await page.keyboard.press('Escape');
  await page.evaluate(() => /** @type {HTMLElement} */ (document.activeElement)?.blur());
  await expect(page.getByTestId('inspector')).toHaveCount(0);

  await page.mouse.move(0, 0);
  await hideNotices(page);
  // A taller window for the picture, so the whole incident card shows.
  await page.setViewportSize({ width: 1280, height: 1000 });
  await page.locator('.tl-body').evaluate((el) => el.scrollTo(0, 0));
  await page.screenshot({ animations: 'disabled', path: 'docs/screenshots/fault-timeline.png' });
  await page.setViewportSize({ width: 1280, height: 800 });

  // The chart: the sum over both Deployments, then api alone, kept across re-renders and tabs.
  await page.getByTestId('tab-chart').click();
  const chart = page.getByTestId('chart');
  await expect(chart).toContainText('desired 5');
  await expect(chart).toContainText('ready 5');
  await page.getByTestId('chart-deployment').selectOption('api');
  await expect(chart).toContainText('desired 2');
  await expect(chart).toContainText('ready 2');
  await expect(chart).toContainText('deployment/api');
  await expect(chart).toHaveAttribute('data-deployment', 'api');
  await inject(page, { type: 'DeletePod', selector: 'app=api' });
  await advance(page, '250ms');
  await expect(page.getByTestId('chart-deployment')).toHaveValue('api');
  await expect(chart).toContainText('desired 2');
  await expect(chart).toContainText(/gap [12]/);
  await page.getByTestId('tab-events').click();
  await page.getByTestId('tab-chart').click();
  await expect(page.getByTestId('chart-deployment')).toHaveValue('api');
  await advance(page, '30s');
  await expect(page.getByTestId('chart')).toContainText('ready 2');
  await expect(page.getByTestId('chart')).toContainText('no gap');
  await page.getByTestId('chart-deployment').selectOption('web');
  await expect(page.getByTestId('chart')).toContainText('desired 3');
  await page.mouse.move(0, 0);
  await hideNotices(page);
  await page.getByTestId('chart-deployment').selectOption('api');
  await page.screenshot({ animations: 'disabled', path: 'docs/screenshots/chart-deployment.png' });
  expect(errors, 'no errors in the browser console').toEqual([]);
});

test('a deleted bare pod is not recovered, and the timeline says why', async ({ page }) => {
  const errors = await open(page);
  expect(await apply(page, BARE_POD)).toEqual([]);
  await advance(page, '20s');
  await inject(page, { type: 'DeletePod', pod: 'debug' });
  await advance(page, '40s');
  await page.getByTestId('tab-timeline').click();
  await expect(page.getByTestId('tab-timeline')).toContainText('1');
  const card = page.getByTestId('timeline-incident');
  await expect(card).toHaveAttribute('data-verdict', 'not-recovered');
  await expect(card.getByTestId('timeline-row-debug')).toContainText('no controller');
  await expect(card.getByTestId('timeline-verdict')).toHaveText(/not recovered/);
  await expect(card.getByTestId('timeline-why')).toContainText('heals only what it watches');
  await expect(card.locator('[data-testid^="timeline-row-"]')).toHaveCount(1);
  expect(errors).toEqual([]);
});

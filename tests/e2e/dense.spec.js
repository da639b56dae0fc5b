// The cluster view at scale, in the real page: a cluster past the dense threshold (more than 60
// nodes) opens as one tile per node with pods counted by state, and those counts must equal what
// window.kubeloop.state() says; the person can switch to cards and back, find a node by name,
// move between tiles with the arrow keys, and inspect a node by clicking its tile. Time is driven
// with advance() (deterministic), never by waiting. Saves docs/screenshots/dense.png.
// @ts-check
const { test, expect } = require('@playwright/test');
const { open } = require('./helpers');

const BIG_NODES = 65; // past the 60-node threshold (src/viewmodel/cluster.rs DENSE_NODES)
const PER_NODE = 4; // pods each big node takes
const REPLICAS = BIG_NODES * PER_NODE + 20; // 20 more than fit: they wait for a node

/** 65 small nodes in a pool, and a Deployment that asks for 20 more pods than the pool holds. */
function bigCluster() {
  let y = '';
  for (let i = 1; i <= BIG_NODES; i++) {
    const name = `big-${String(i).padStart(2, '0')}`;
    y += `---\napiVersion: v1\nkind: Node\nmetadata: {name: ${name}, labels: {pool: big, kubernetes.io/hostname: ${name}}}\n` +
      `status: {capacity: {cpu: "4", memory: 8Gi, pods: "${PER_NODE}"}, allocatable: {cpu: "4", memory: 8Gi, pods: "${PER_NODE}"}}\n`;
  }
  y += `---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: wide}\nspec:\n  replicas: ${REPLICAS}\n` +
    '  selector: {matchLabels: {app: wide}}\n  template:\n    metadata: {labels: {app: wide}}\n    spec:\n' +
    '      nodeSelector: {pool: big}\n' +
    '      containers: [{name: app, image: "nginx:1.27", resources: {requests: {cpu: 10m, memory: 16Mi}}}]\n';
  return y;
}

/** The aggregate row's buckets, counted independently from the Kubernetes objects. */
function expectedCounts() {
  const pods = window.kubeloop.state().items.filter((o) => o.kind === 'Pod');
  const c = { ready: 0, pending: 0, notready: 0, failing: 0, terminating: 0, unknown: 0, completed: 0 };
  for (const p of pods) {
    const st = p.status || {};
    const ready = (st.conditions || []).some((x) => x.type === 'Ready' && x.status === 'True');
    const waiting = (st.containerStatuses || []).map((s) => (s.state && s.state.waiting && s.state.waiting.reason) || '');
    if (p.metadata.deletionTimestamp) {
      if (st.reason === 'NodeLost') c.unknown++; else c.terminating++;
    } else if (st.phase === 'Unknown') c.unknown++;
    else if (st.phase === 'Failed' || waiting.some((r) => /BackOff|Err|Error/.test(r))) c.failing++;
    else if (st.phase === 'Succeeded') c.completed++;
    else if (st.phase === 'Running') { if (ready) c.ready++; else c.notready++; }
    else c.pending++;
  }
  return { counts: c, total: pods.length, nodes: window.kubeloop.state().items.filter((o) => o.kind === 'Node').length };
}

test('a big cluster opens dense, its counts match the cluster state, and a tile inspects its node', async ({ page }) => {
  // Building 68 nodes and 280 pods is a few seconds of simulation; the machine may be shared.
  test.setTimeout(120_000);
  const errors = await open(page);
  await page.evaluate((yaml) => {
    window.kubeloop.pause();
    const errs = window.kubeloop.apply(yaml).filter((d) => d.severity === 'error');
    if (errs.length) throw new Error(JSON.stringify(errs));
  }, bigCluster());
  await page.evaluate(() => window.kubeloop.advance('60s'));
  // Break a few things so more than one bucket and tile state shows: a machine powered off
  // (its node goes Unknown, its pods not ready) and a cordoned node.
  await page.evaluate(() => {
    window.kubeloop.inject({ type: 'NodeDown', node: 'big-05' });
    window.kubeloop.kubectl('cordon big-09');
    window.kubeloop.advance('60s');
  });

  const dense = page.getByTestId('cluster-dense');
  await expect(dense).toBeVisible();
  await expect(page.getByTestId('layout-dense')).toHaveAttribute('aria-pressed', 'true');
  const want = await page.evaluate(expectedCounts);
  expect(want.total).toBe(REPLICAS);
  await expect(page.locator('[data-testid^="node-"]')).toHaveCount(want.nodes);
  await expect(page.getByTestId('cluster-summary')).toContainText(`${want.nodes} nodes · ${REPLICAS} pods`);
  for (const [id, n] of Object.entries(want.counts)) {
    if (id === 'completed' && n === 0) continue; // shown only when there are any
    await expect(page.getByTestId(`dense-count-${id}`), id).toHaveAttribute('data-count', String(n));
  }
  expect(want.counts.pending).toBeGreaterThanOrEqual(20);
  expect(want.counts.notready).toBeGreaterThan(0); // big-05's pods, marked not ready by the node controller
  // The tray: a count, the oldest six as chips, and how many more.
  const tray = page.getByTestId('unscheduled');
  await expect(tray).toHaveAttribute('data-count', String(want.counts.pending));
  await expect(tray.locator('[data-testid^="pod-"]')).toHaveCount(6);
  await expect(page.getByTestId('unscheduled-more')).toContainText(`${want.counts.pending - 6} more`);
  // Tile states: glyph and border differ, not only colour; per-tile pod counts add up.
  await expect(page.getByTestId('node-big-05')).toHaveClass(/node--down/);
  await expect(page.getByTestId('node-big-09')).toHaveClass(/is-cordoned/);
  await expect(page.getByTestId('node-big-01')).toHaveAttribute('data-pods', String(PER_NODE));
  const onTiles = await page.locator('[data-testid^="node-"]').evaluateAll((els) =>
    els.reduce((s, e) => s + Number(e.getAttribute('data-pods')), 0));
  expect(onTiles + Number(await tray.getAttribute('data-count'))).toBe(REPLICAS);

  // The README's picture: the cluster panel on a taller window, so the tiles show under the counts.
  await page.evaluate(() => document.querySelectorAll('.notices').forEach((n) => n.style.setProperty('display', 'none')));
  await page.setViewportSize({ width: 1280, height: 1100 });
  await page.locator('.cluster-panel').screenshot({ animations: 'disabled', path: 'docs/screenshots/dense.png' });
  await page.setViewportSize({ width: 1280, height: 800 });

  // Clicking a tile inspects its node.
  await page.getByTestId('node-big-07').click();
  await expect(page.getByTestId('inspector')).toBeVisible();
  await expect(page.getByTestId('inspector')).toHaveAttribute('aria-label', /big-07/);
  await expect(page.getByTestId('node-big-07')).toHaveAttribute('aria-pressed', 'true');

  // Keyboard: arrows move between tiles, Enter inspects the focused one.
  await page.getByTestId('node-big-07').focus();
  await page.keyboard.press('ArrowRight');
  await expect(page.getByTestId('node-big-08')).toBeFocused();
  await page.keyboard.press('ArrowLeft');
  await page.keyboard.press('ArrowLeft');
  await expect(page.getByTestId('node-big-06')).toBeFocused();
  await page.keyboard.press('Enter');
  await expect(page.getByTestId('inspector')).toHaveAttribute('aria-label', /big-06/);

  // Finding a node by name: the grid narrows, Enter inspects the first match.
  await page.getByTestId('dense-filter').fill('big-3');
  await expect(page.locator('.dense-grid [data-testid^="node-"]')).toHaveCount(10);
  await page.getByTestId('dense-filter').press('Enter');
  await expect(page.getByTestId('inspector')).toHaveAttribute('aria-label', /big-30/);
  await page.getByTestId('dense-filter').fill('');
  await page.getByTestId('inspector-close').click();

  // Cards on request: one chip per pod again; and back to dense.
  await page.getByTestId('layout-cards').click();
  await expect(dense).toHaveCount(0);
  await expect(page.locator('.nodes [data-testid^="pod-"], [data-testid="unscheduled"] [data-testid^="pod-"]')).toHaveCount(REPLICAS);
  await page.getByTestId('layout-dense').click();
  await expect(dense).toBeVisible();
  expect(errors, 'no errors in the browser').toEqual([]);
});

test('a lesson-sized cluster stays in cards and can be shown dense on request', async ({ page }) => {
  const errors = await open(page);
  await expect(page.getByTestId('layout-cards')).toHaveAttribute('aria-pressed', 'true');
  await page.getByTestId('apply').click();
  await page.evaluate(() => window.kubeloop.advance('60s'));
  await expect(page.locator('[data-testid^="pod-"][data-ready="true"]')).toHaveCount(3);
  await expect(page.getByTestId('cluster-dense')).toHaveCount(0);

  await page.getByTestId('layout-dense').click();
  await expect(page.getByTestId('cluster-dense')).toBeVisible();
  await expect(page.getByTestId('dense-count-ready')).toHaveAttribute('data-count', '3');
  const onTiles = await page.locator('[data-testid^="node-"]').evaluateAll((els) =>
    els.map((e) => Number(e.getAttribute('data-pods'))));
  expect(onTiles).toHaveLength(3);
  expect(onTiles.reduce((a, b) => a + b, 0)).toBe(3);
  await page.getByTestId('layout-cards').click();
  await expect(page.locator('[data-testid^="pod-"][data-ready="true"]')).toHaveCount(3);
  expect(errors, 'no errors in the browser').toEqual([]);
});

test('cards chosen by hand for a big cluster stop at a bounded number and point to the dense view', async ({ page }) => {
  test.setTimeout(120_000);
  const errors = await open(page);
  // 130 empty nodes: past the 120 cards the card layout draws (src/viewmodel/cluster.rs CARD_NODES_MAX).
  let y = '';
  for (let i = 1; i <= 130; i++) {
    y += `---\napiVersion: v1\nkind: Node\nmetadata: {name: n-${String(i).padStart(3, '0')}}\n` +
      'status: {capacity: {cpu: "4", memory: 8Gi, pods: "110"}}\n';
  }
  await page.evaluate((yaml) => {
    window.kubeloop.pause();
    const errs = window.kubeloop.apply(yaml).filter((d) => d.severity === 'error');
    if (errs.length) throw new Error(JSON.stringify(errs));
    window.kubeloop.advance('5s');
  }, y);
  await expect(page.getByTestId('cluster-dense')).toBeVisible();
  await page.getByTestId('layout-cards').click();
  // Three default nodes from the page's start plus the 130.
  await expect(page.locator('.nodes > [data-testid^="node-"]')).toHaveCount(120);
  const more = page.getByTestId('cards-more');
  await expect(more).toContainText('120 of 133 nodes drawn as cards');
  await more.getByRole('button', { name: 'Show every node in the dense view' }).click();
  await expect(page.getByTestId('cluster-dense')).toBeVisible();
  await expect(page.locator('.dense-grid [data-testid^="node-"]')).toHaveCount(133);
  expect(errors, 'no errors in the browser').toEqual([]);
});

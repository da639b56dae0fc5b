#!/usr/bin/env node
// The wasm half of `make bench`: drives the real, release-built page in headless Chromium through
// window.kubeloop and times how long the simulation takes to converge a Deployment (wall time in
// the page, performance.now()), with the simulated time it covered and the JS heap afterwards.
// Prints median and spread; asserts nothing about speed (the machines are shared and noisy).
// Usage: node scripts/browser-bench.js [--quick|--full]   (run `make build` first)
'use strict';
const { spawn } = require('child_process');
const path = require('path');
const { chromium } = require('@playwright/test');

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const full = args.includes('--full');
const runs = quick ? 1 : 3;

function nodes(n, cpu, memory, pods) {
  let out = '';
  for (let i = 1; i <= n; i++) {
    out += `---\napiVersion: v1\nkind: Node\nmetadata: {name: bench-${i}, labels: {kubernetes.io/hostname: bench-${i}}}\n` +
      `status: {capacity: {cpu: "${cpu}", memory: ${memory}, pods: "${pods}"}, allocatable: {cpu: "${cpu}", memory: ${memory}, pods: "${pods}"}}\n`;
  }
  return out;
}

function deployment(replicas) {
  return `---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: bench}\nspec:\n  replicas: ${replicas}\n` +
    `  selector: {matchLabels: {app: bench}}\n  template:\n    metadata: {labels: {app: bench}}\n    spec:\n` +
    `      containers: [{name: app, image: "nginx:1.27", resources: {requests: {cpu: 10m, memory: 16Mi}}}]\n`;
}

const cases = [
  { name: 'converge 100 replicas / 10 nodes', nodes: 10, replicas: 100 },
  quick ? { name: 'converge 1,000 replicas / 100 nodes', nodes: 100, replicas: 1000 }
        : { name: 'converge 10,000 replicas / 1,000 nodes', nodes: 1000, replicas: 10000 },
];
// The playground's ceiling (src/sim/limits.rs): MAX_REPLICAS on MAX_NODES nodes.
cases.push(quick ? { name: 'schedule 1,000 pods / 100 nodes', nodes: 100, replicas: 1000, schedule: true }
                 : { name: 'schedule 10,000 pods / 1,000 nodes', nodes: 1000, replicas: 10000, schedule: true });
if (full) cases.push({ name: 'converge 20,000 replicas / 5,000 nodes', nodes: 5000, replicas: 20000 });

async function runCase(page, c) {
  await page.goto('/?bench=1');
  await page.waitForFunction(() => window.kubeloop && window.kubeloop.apply, null, { timeout: 30000 });
  return page.evaluate(async ({ manifest, replicas, schedule }) => {
    const k = window.kubeloop;
    k.pause && k.pause();
    const diags = k.apply(manifest);
    const errors = (diags || []).filter((d) => (d.severity || '').toLowerCase() === 'error');
    if (errors.length) return { error: JSON.stringify(errors.slice(0, 3)) };
    const count = (field) => Number((k.kubectl(`get deployment bench -o jsonpath={.status.${field}}`).stdout || '0').trim() || 0);
    // Scheduling: every pod created and none left without a node; converging: every pod Ready.
    const unbound = () => (k.kubectl('get pods --field-selector=spec.nodeName= -o name').stdout || '').trim().split('\n').filter(Boolean).length;
    const ready = schedule ? () => (count('replicas') >= replicas && unbound() === 0 ? replicas : 0) : () => count('readyReplicas');
    const t0 = performance.now();
    const sim0 = k.now();
    let guard = 0;
    while (ready() < replicas) {
      k.advance(schedule ? '100ms' : '1s');
      if (++guard > 18000) return { error: `not converged: ${ready()} of ${replicas} ready` };
    }
    const wall = (performance.now() - t0) / 1000;
    const heap = performance.memory ? performance.memory.usedJSHeapSize / 1048576 : NaN;
    return { wall, sim: k.now() - sim0, heap };
  }, { manifest: nodes(c.nodes, 64, '256Gi', 250) + deployment(c.replicas), replicas: c.replicas, schedule: !!c.schedule });
}

(async () => {
  const port = 41000 + Math.floor(Math.random() * 2000);
  const server = spawn(process.execPath, [path.join(__dirname, 'serve-dist.js'), 'dist', String(port)], { stdio: 'ignore' });
  await new Promise((r) => setTimeout(r, 500));
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--enable-precise-memory-info'],
  });
  const page = await browser.newPage({ baseURL: `http://127.0.0.1:${port}` });
  const rows = [];
  for (const c of cases) {
    process.stderr.write(`running (wasm): ${c.name}\n`);
    const samples = [];
    let last;
    for (let i = 0; i < runs; i++) {
      last = await runCase(page, c);
      if (last.error) { process.stderr.write(`  failed: ${last.error}\n`); break; }
      samples.push(last.wall);
    }
    rows.push({ c, samples, last });
  }
  await browser.close();
  server.kill();
  const pad = (s, n) => String(s).padEnd(n);
  const num = (x) => (Number.isFinite(x) ? x.toFixed(3) : 'n/a').padStart(10);
  console.log(`\n${pad('case (wasm, headless Chromium)', 42)} ${'median s'.padStart(10)} ${'min s'.padStart(10)} ${'max s'.padStart(10)}  detail`);
  let failed = false;
  for (const { c, samples, last } of rows) {
    if (!samples.length) { failed = true; console.log(`${pad(c.name, 42)} FAILED: ${last && last.error}`); continue; }
    const sorted = [...samples].sort((a, b) => a - b);
    const median = sorted[Math.floor(sorted.length / 2)];
    console.log(`${pad(c.name, 42)} ${num(median)} ${num(sorted[0])} ${num(sorted[sorted.length - 1])}  ` +
      `${(last.sim / 1000).toFixed(0)}s simulated, ${(c.replicas / median).toFixed(0)} pods/wall-s, JS heap ${last.heap.toFixed(0)} MiB`);
  }
  process.exit(failed ? 1 : 0);
})().catch((e) => { console.error(e); process.exit(2); });

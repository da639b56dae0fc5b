// @ts-check
// Learners' controllers in the page: a learner types a Controller document into the editor and
// applies it; the page fetches the JavaScript engine (a second wasm file, not part of the first
// paint), runs the controller as a component with its own loop card and log, and the cluster shows
// its result. A pass that throws is underlined in the editor at the line of the source that threw.
const { test, expect } = require('@playwright/test');
const fs = require('fs');
const path = require('path');
const { open, advance } = require('./helpers');

const FILE = fs.readFileSync(path.join(__dirname, '../fixtures/controllers/website.yaml'), 'utf8');

test('a controller typed into the editor loads the engine on Apply, runs its loop and makes its Deployment', async ({ page }) => {
  const errors = await open(page);
  const engineRequests = [];
  page.on('request', (r) => {
    if (r.url().includes('kubeloop-engine')) engineRequests.push(r.url());
  });
  expect(engineRequests, 'the engine is not part of the first paint').toEqual([]);

  const editor = page.getByTestId('editor');
  await editor.fill(FILE.replace('  if (!site) return;', '  if (!site) return;\n      ctx.log(`want ${site.spec.replicas} replicas of ${site.spec.image}`);'));
  await editor.press('Control+Enter');
  const diagnostics = page.getByTestId('diagnostics');
  await expect(diagnostics).toContainText('controller.kubeloop.dev/website created');
  await expect(diagnostics).toContainText('website.example.com/web created');
  expect(engineRequests.some((u) => u.endsWith('.wasm')), 'the engine was fetched on Apply').toBe(true);

  await advance(page, '60s');
  const card = page.getByTestId('loop-controller-website');
  await expect(card).toBeVisible();
  await expect(card).toContainText('want 2 replicas of nginx:1.27');
  const deployment = await page.evaluate(() => window.kubeloop.kubectl('get deployment web -o jsonpath={.spec.replicas}/{.metadata.ownerReferences[0].kind}'));
  expect(deployment.stdout).toBe('2/Website');
  const status = await page.evaluate(() => window.kubeloop.kubectl('get website web -o jsonpath={.status.availableReplicas}'));
  expect(status.stdout).toBe('2');
  expect(errors).toEqual([]);
});

test('texts applied while the engine loads are applied in the order they were asked for, and the loading notice gives way to the outcome', async ({ page }) => {
  const errors = await open(page);
  // The second text changes the Website the first one creates: applied first, it would be refused
  // (its kind is not served yet) and the first would then set 2 replicas.
  const website = FILE.slice(FILE.lastIndexOf('kind: Website'));
  const second = 'apiVersion: example.com/v1\n' + website.replace('replicas: 2', 'replicas: 3');
  expect(second).toContain('replicas: 3');
  const answers = await page.evaluate(([a, b]) => [a, b].map((text) => {
    try {
      window.kubeloop.apply(text);
      return 'applied';
    } catch (e) {
      return String(e.message || e);
    }
  }), [FILE, second]);
  expect(answers[0]).toContain('is loading');
  expect(answers[1]).toContain('is loading');
  // The engine may have loaded by now (the notice is then gone already): what is certain is the
  // outcome, and that the progress notice did not outlive it.
  const notices = page.locator('.notice');
  await expect(page.getByTestId('diagnostics')).toContainText('website.example.com/web configured');
  await expect(notices.filter({ hasText: 'Loading the JavaScript engine' })).toHaveCount(0);
  const replicas = await page.evaluate(() => window.kubeloop.kubectl('get website web -o jsonpath={.spec.replicas}'));
  expect(replicas.stdout).toBe('3');
  expect(errors).toEqual([]);
});

test('a pass that throws is underlined at the line of the source that threw, and a syntax error at its place before anything runs', async ({ page }) => {
  const errors = await open(page);
  const editor = page.getByTestId('editor');
  const broken = FILE.replace('  const want = site.spec.replicas ?? 1;', '  const want = site.spec.nothing.replicas;');
  await editor.fill(broken);
  await editor.press('Control+Enter');
  await expect(page.getByTestId('diagnostics')).toContainText('controller.kubeloop.dev/website created');
  await advance(page, '20s');
  const line = broken.split('\n').findIndex((l) => l.includes('site.spec.nothing.replicas')) + 1;
  await expect(page.getByTestId('diagnostics')).toContainText('its last pass threw TypeError');
  const mark = page.locator(`[data-testid="diag-mark"][data-line="${line}"]`);
  await expect(mark).toHaveCount(1);

  const syntax = FILE.replace('  const want = site.spec.replicas ?? 1;', '  const want = ;');
  await editor.fill(syntax);
  await editor.press('Control+Enter');
  const syntaxLine = syntax.split('\n').findIndex((l) => l.includes('const want = ;')) + 1;
  await expect(page.getByTestId('diagnostics')).toContainText('spec.source:');
  await expect(page.locator(`[data-testid="diag-mark"][data-line="${syntaxLine}"]`)).toHaveCount(1);
  expect(errors).toEqual([]);
});

test('Check my controller loads the checker on first use and gives a good controller three green rows', async ({ page }) => {
  const errors = await open(page);
  await page.getByTestId('editor').fill(FILE);
  await page.getByTestId('check-controller').click();
  await expect(page.getByTestId('check-card')).toBeVisible();
  for (const p of ['convergent', 'level-triggered', 'idempotent']) {
    await expect(page.getByTestId(`check-${p}`)).toHaveAttribute('data-passed', 'true');
  }
  await expect(page.getByTestId('check-card').locator('a')).toHaveCount(0);
  // A pass's row says what held once, not the question and then its answer.
  await expect(page.getByTestId('check-card').locator('.verdict-asks')).toHaveCount(0);
  expect(errors).toEqual([]);
});

test('Check my controller fails a generateName controller as not idempotent, and its link opens the run with the duplicate', async ({ page }) => {
  const errors = await open(page);
  const generateName = fs.readFileSync(path.join(__dirname, '../fixtures/controllers/website-generate-name.yaml'), 'utf8');
  await page.getByTestId('editor').fill(generateName);
  await page.getByTestId('check-controller').click();
  await expect(page.getByTestId('check-idempotent')).toHaveAttribute('data-passed', 'false');
  await expect(page.getByTestId('check-idempotent')).toContainText('2 Deployments are owned by Website web');
  await expect(page.getByTestId('check-idempotent').locator('.verdict-asks')).toContainText('creates no duplicates');
  const href = await page.getByTestId('check-link-idempotent').getAttribute('href');
  expect(href).toContain('#k1:');

  // The link opens the failing run: the duplicate is there once the crash has happened.
  await page.goto(href.replace(/^https?:\/\/[^/]+/, ''));
  await page.waitForFunction(() => typeof window.kubeloop === 'object' && window.kubeloop !== null);
  await expect(page.getByTestId('editor')).toHaveValue(/CrashMidReconcile/);
  await page.waitForFunction(() => window.kubeloop.state().items.some((o) => o.kind === 'Website'));
  await advance(page, '3m');
  const owned = await page.evaluate(() => window.kubeloop.kubectl('get deployments -o name'));
  expect(owned.stdout.trim().split('\n').length).toBe(2);
  expect(errors).toEqual([]);
});

test('a controller run through the page\'s engine module gives the trace the native run gives, entry for entry', async ({ page }) => {
  const errors = await open(page);
  const scenario = fs.readFileSync(path.join(__dirname, '../fixtures/controllers/website-scenario.yaml'), 'utf8');
  const expected = fs.readFileSync(path.join(__dirname, '../snapshots/page-controller-fingerprint.txt'), 'utf8').trim();
  const editor = page.getByTestId('editor');
  await editor.fill(scenario);
  await editor.press('Control+Enter');
  await expect(page.getByTestId('diagnostics')).toContainText('controller.kubeloop.dev/website created');
  // Opened from t=0 as a link opens it (Playground::load_scenario), then three minutes.
  await page.getByTestId('run-scenario').click();
  await expect(page.getByTestId('editor')).toHaveValue(/website-determinism/);
  await page.waitForFunction(() => window.kubeloop.now() === 0);
  await advance(page, '3m');
  expect(await page.evaluate(() => window.kubeloop.fingerprint())).toBe(expected);
  expect(errors).toEqual([]);
});

// Runs you can share: a link holds what the learner did, each action at its moment, and opens
// paused at the moment it was taken, the actions replayed deterministically. What the JS API does
// (apply, inject, kubectl) is an action like a button's; a reload keeps the action log.
//
// No test waits for wall time: the simulation moves with window.kubeloop.advance.
// @ts-check
const { test, expect } = require('@playwright/test');
const { open, appReady, deployment } = require('./helpers');


/** What a run shows: the clock, the objects and the events. */
const snapshot = (page) =>
  page.evaluate(() => ({ now: window.kubeloop.now(), state: window.kubeloop.state(), events: window.kubeloop.events() }));

const readyPods = (page) =>
  page.evaluate(() => Number(window.kubeloop.kubectl('get deployment web -o jsonpath={.status.readyReplicas}').stdout));

test('an apply through the JS API is in the share link, which opens on its four replicas at the same moment', async ({ browser }) => {
  const author = await browser.newPage();
  const errors = await open(author, '/');
  await author.evaluate((y) => window.kubeloop.apply(y), deployment(4));
  await author.evaluate(() => window.kubeloop.advance('60s'));
  const link = await author.evaluate(() => window.kubeloop.shareLink());
  expect(link).toMatch(/#k2:[A-Za-z0-9_-]+$/);
  const before = await snapshot(author);
  expect(await readyPods(author)).toBe(4);

  const reader = await browser.newPage();
  const readerErrors = await open(reader, link.slice(link.indexOf('/#')));
  await expect(reader.locator('.notice').filter({ hasText: 'Opened the run at 01:0' })).toHaveCount(1);
  expect(await snapshot(reader)).toEqual(before);
  expect(await readyPods(reader)).toBe(4);
  expect(errors).toEqual([]);
  expect(readerErrors).toEqual([]);
});

test('a node failure at 0:30 watched to 2:00 opens at 2:00 with the node not ready and the same pods', async ({ browser }) => {
  const author = await browser.newPage();
  const errors = await open(author, '/');
  await author.evaluate((y) => window.kubeloop.apply(y), deployment(3));
  await author.evaluate(() => window.kubeloop.advance('30s'));
  await author.evaluate(() => window.kubeloop.inject({ type: 'NodeDown', node: 'node-2' }));
  await author.evaluate(() => window.kubeloop.advance('90s'));
  const link = await author.evaluate(() => window.kubeloop.shareLink());
  const before = await snapshot(author);
  const pods = (page) => page.evaluate(() => window.kubeloop.kubectl('get pods -o wide').stdout);
  const authorPods = await pods(author);

  const reader = await browser.newPage();
  const readerErrors = await open(reader, link.slice(link.indexOf('/#')));
  expect(await snapshot(reader)).toEqual(before);
  expect(await reader.evaluate(() => window.kubeloop.now())).toBeGreaterThanOrEqual(120_000);
  const node = await reader.evaluate(() => window.kubeloop.kubectl('get node node-2').stdout);
  expect(node).toMatch(/node-2\s+NotReady/);
  expect(await pods(reader)).toBe(authorPods);
  expect(errors).toEqual([]);
  expect(readerErrors).toEqual([]);
});

test('a reload keeps the action log in the address bar and reopens the run where it was', async ({ page }) => {
  const errors = await open(page, '/');
  await page.evaluate((y) => window.kubeloop.apply(y), deployment(4));
  await page.evaluate(() => window.kubeloop.advance('20s'));
  await page.evaluate(() => window.kubeloop.kubectl('scale deployment web --replicas=2'));
  const at = await page.evaluate(() => window.kubeloop.now());
  await expect.poll(() => page.url()).toContain('#k2:');
  const before = await page.evaluate(() => window.kubeloop.kubectl('get deployment web -o jsonpath={.spec.replicas}').stdout);
  expect(before).toBe('2');
  await page.reload();
  await appReady(page);
  expect(await page.evaluate(() => window.kubeloop.now())).toBe(at);
  const after = await page.evaluate(() => window.kubeloop.kubectl('get deployment web -o jsonpath={.spec.replicas}').stdout);
  expect(after).toBe('2');
  expect(errors).toEqual([]);
});

test('the scrubber drags the run back to an earlier moment and forward again, and an action there branches it', async ({ browser }) => {
  const page = await browser.newPage();
  const errors = await open(page, '/');
  const replicas = () => page.evaluate(() => window.kubeloop.kubectl('get deployment web -o jsonpath={.spec.replicas}').stdout);
  await page.evaluate((y) => window.kubeloop.apply(y), deployment(2));
  await page.evaluate(() => window.kubeloop.advance('10s'));
  await page.evaluate(() => window.kubeloop.kubectl('scale deployment web --replicas=5'));
  await page.evaluate(() => window.kubeloop.advance('20s'));
  const end = await page.evaluate(() => window.kubeloop.now());
  const atEnd = await snapshot(page);

  const scrubber = page.getByTestId('scrubber');
  await scrubber.fill('5000');
  await expect(page.getByTestId('clock')).toHaveText('00:05.0');
  await expect(scrubber).toHaveClass(/is-behind/);
  // What changes between here and the run's end, as kubectl diff prints it.
  await page.getByTestId('changes-ahead').click();
  const card = page.getByTestId('changes-card');
  await expect(card).toContainText('What changes from 00:05.0 to');
  await expect(card.getByTestId('change-deployment/web')).toContainText('+   replicas: 5');
  // Any two moments of the run, typed as the clock shows them or as durations.
  await page.getByTestId('changes-from').fill('00:01');
  await page.getByTestId('changes-to').fill('8s');
  await page.getByTestId('changes-compare').click();
  await expect(card.locator('h2')).toHaveText('What changes from 00:01.0 to 00:08.0');
  await expect(card.getByTestId('change-deployment/web')).not.toContainText('replicas: 5');
  await page.getByTestId('changes-from').fill('1:75');
  await page.getByTestId('changes-compare').click();
  await expect(page.locator('.notice').filter({ hasText: '"1:75" is not a time of the run' })).toHaveCount(1);
  await expect(page.getByTestId('changes-from')).toHaveValue('1:75');
  await page.getByTestId('changes-close').click();
  await expect(card).toHaveCount(0);
  expect(await replicas()).toBe('2');
  await scrubber.fill(String(end));
  expect(await snapshot(page)).toEqual(atEnd);
  await expect(scrubber).not.toHaveClass(/is-behind/);

  expect(await page.evaluate(() => window.kubeloop.seek('5s'))).toBe(5000);
  await page.evaluate(() => window.kubeloop.kubectl('scale deployment web --replicas=1'));
  await expect(page.locator('.notice').filter({ hasText: 'Branched at 00:05.0' })).toHaveCount(1);
  await page.evaluate(() => window.kubeloop.advance('10s'));
  const branch = await page.evaluate(() => window.kubeloop.shareLink());
  const before = await snapshot(page);

  const reader = await browser.newPage();
  const readerErrors = await open(reader, branch.slice(branch.indexOf('/#')));
  expect(await snapshot(reader)).toEqual(before);
  expect(await reader.evaluate(() => window.kubeloop.kubectl('get deployment web -o jsonpath={.spec.replicas}').stdout)).toBe('1');
  expect(errors).toEqual([]);
  expect(readerErrors).toEqual([]);
});

test('a fault\'s card in the timeline takes the run back to just before it, and going forward replays the fault', async ({ page }) => {
  const errors = await open(page, '/');
  await page.evaluate((y) => window.kubeloop.apply(y), deployment(3));
  await page.evaluate(() => window.kubeloop.advance('30s'));
  const faultAt = await page.evaluate(() => window.kubeloop.now());
  await page.evaluate(() => window.kubeloop.inject({ type: 'NodeDown', node: 'node-2' }));
  await page.evaluate(() => window.kubeloop.advance('90s'));
  const atEnd = await snapshot(page);
  const node2 = () => page.evaluate(() => window.kubeloop.kubectl('get node node-2').stdout);
  expect(await node2()).toMatch(/node-2\s+NotReady/);

  await page.getByTestId('tab-timeline').click();
  await page.getByTestId('timeline-rewind').click();
  await expect(page.getByTestId('timeline')).toContainText('No faults yet.');
  expect(await page.evaluate(() => window.kubeloop.now())).toBe(faultAt - 1);
  await expect(page.getByTestId('scrubber')).toHaveClass(/is-behind/);
  expect(await node2()).toMatch(/node-2\s+Ready/);

  // Forward again: the fault happens at its moment, and the run ends as it did.
  await page.evaluate((t) => window.kubeloop.seek(t), atEnd.now);
  expect(await snapshot(page)).toEqual(atEnd);
  await expect(page.getByTestId('timeline-incident')).toHaveCount(1);
  expect(errors).toEqual([]);
});

test('the course example page links to a moment of a lesson, which opens there paused', async ({ page }) => {
  await page.goto('/www/course-example.html');
  const href = await page.getByTestId('moment-link').getAttribute('href');
  expect(href).toMatch(/^\.\.\/index\.html#k2:/);
  const errors = await open(page, new URL(href, page.url()).pathname + new URL(href, page.url()).hash);
  await expect(page.getByTestId('clock')).toHaveText('01:30.0');
  const node = await page.evaluate(() => window.kubeloop.kubectl('get node node-2').stdout);
  expect(node).toMatch(/node-2\s+NotReady/);
  expect(errors).toEqual([]);
});

// Drawing cost in the real page, checked by DOM identity rather than by time: when one pod
// changes, the chips of the other pods (and the other node cards and tiles) must stay the very
// same DOM elements. Yew diffs an unkeyed child list by position, so a keyed list that shares its
// parent's child list with anything else silently turns into "recreate everything after the
// change"; a rollout of a few hundred pods then spent most of each frame rebuilding chips.
// Time is driven with advance() (deterministic), never by waiting.
// @ts-check
const { test, expect } = require('@playwright/test');
const { open, advance, apply, deployment } = require('./helpers');


/** Applies the web Deployment with `replicas` pods; the manifest must have no errors. */
const applyWeb = async (page, replicas, cpu) =>
  expect((await apply(page, deployment(replicas, cpu))).filter((d) => d.severity === 'error')).toEqual([]);

/** Applies the web Deployment and advances a minute, until its `replicas` chips are Ready. */
const convergeWeb = async (page, replicas, cpu) => {
  await applyWeb(page, replicas, cpu);
  await advance(page, '60s');
  await expect(page.locator('.nodes [data-testid^="pod-"][data-ready="true"]')).toHaveCount(replicas);
};

/** Marks every element matching `selector` and returns how many were not marked before. */
const stamp = (page, selector) => page.evaluate((sel) => {
  let fresh = 0;
  for (const e of document.querySelectorAll(sel)) {
    if (!e.__kubeloopStamp) { e.__kubeloopStamp = true; fresh++; }
  }
  return fresh;
}, selector);

test('deleting one pod redraws its own chip and nothing else in the cluster view', async ({ page }) => {
  const errors = await open(page);
  await page.evaluate(() => window.kubeloop.pause());
  await convergeWeb(page, 12);
  expect(await stamp(page, '.nodes .pod, .nodes .node')).toBe(15); // 12 chips, 3 cards
  await advance(page, '5s');
  expect(await stamp(page, '.nodes .pod, .nodes .node'), 'an idle cluster redraws nothing').toBe(0);

  const before = await page.locator('.nodes .pod').evaluateAll((els) => els.map((e) => e.dataset.testid));
  // The oldest pod of the first node: every chip after it in that card used to be recreated.
  const victim = await page.locator('.nodes .node').first().locator('.pod').first().getAttribute('data-testid');
  await page.evaluate((name) => window.kubeloop.kubectl(`delete pod ${name}`), String(victim).replace(/^pod-/, ''));
  await advance(page, '100ms');
  await advance(page, '60s');
  await expect(page.locator('.nodes [data-testid^="pod-"][data-ready="true"]')).toHaveCount(12);
  // Every chip drawn anew since the stamp: only the replacement, which was not there before.
  const redrawn = await page.locator('.nodes .pod, .nodes .node').evaluateAll((els) =>
    els.filter((e) => !e.__kubeloopStamp).map((e) => e.dataset.testid));
  expect(redrawn).toHaveLength(1);
  expect(before).not.toContain(redrawn[0]);
  expect(errors, 'no errors in the browser').toEqual([]);
});

test('in the dense view a change on one node redraws that tile only', async ({ page }) => {
  test.setTimeout(120_000);
  const errors = await open(page);
  let nodes = '';
  for (let i = 1; i <= 64; i++) {
    nodes += `---\napiVersion: v1\nkind: Node\nmetadata: {name: d-${String(i).padStart(2, '0')}}\n` +
      'status: {capacity: {cpu: "4", memory: 8Gi, pods: "110"}}\n';
  }
  await page.evaluate(() => window.kubeloop.pause());
  expect((await apply(page, nodes + '---\n' + deployment(64))).filter((d) => d.severity === 'error')).toEqual([]);
  await advance(page, '60s');
  await expect(page.getByTestId('cluster-dense')).toBeVisible();
  const tiles = '.dense-grid [data-testid^="node-"]';
  expect(await stamp(page, tiles)).toBe(67);
  // Chromium checks each `content-visibility: auto` element against the viewport on every frame
  // the page changes (the clock changes it every frame): a thousand tiles made that an idle cost.
  const observed = await page.$$eval(tiles, (els) =>
    els.filter((e) => getComputedStyle(e).contentVisibility === 'auto').length);
  expect(observed, 'no tile is checked against the viewport on every frame').toBe(0);
  await page.evaluate(() => window.kubeloop.kubectl('cordon d-01'));
  await advance(page, '1s');
  await expect(page.getByTestId('node-d-01')).toHaveClass(/is-cordoned/);
  expect(await stamp(page, tiles), 'a changed tile is redrawn in place').toBe(0);
  // A node whose name sorts near the front: one new tile, the 60-odd after it only move.
  await apply(page, 'apiVersion: v1\nkind: Node\nmetadata: {name: d-01b}\nstatus: {capacity: {cpu: "4", memory: 8Gi, pods: "110"}}\n');
  await advance(page, '1s');
  await expect(page.locator(tiles)).toHaveCount(68);
  expect(await stamp(page, tiles), 'only the new tile is new').toBe(1);
  expect(errors, 'no errors in the browser').toEqual([]);
});

test('a chip draws its delete and menu buttons once the pointer or the focus reaches it', async ({ page }) => {
  const errors = await open(page);
  await page.evaluate(() => window.kubeloop.pause());
  await applyWeb(page, 3);
  await advance(page, '60s');
  const chips = page.locator('.nodes [data-testid^="pod-"][data-ready="true"]');
  await expect(chips).toHaveCount(3);
  const nameOf = async (chip) => String(await chip.getAttribute('data-testid')).replace(/^pod-/, '');
  const [first, second] = [chips.nth(0), chips.nth(1)];
  const [a, b] = [await nameOf(first), await nameOf(second)];
  const drawn = () => page.locator('.nodes .pod-delete, .nodes .pod-menu').count();
  const shown = () => page.evaluate(() => [...document.querySelectorAll('.nodes .pod-delete, .nodes .pod-menu')]
    .filter((e) => getComputedStyle(e).display !== 'none').length);
  // New chips are drawn without them: half of a chip's elements, created for every new pod.
  expect(await drawn(), 'no chip was approached').toBe(0);
  await first.hover();
  await expect(page.getByTestId(`delete-pod-${a}`)).toBeVisible();
  await expect(page.getByTestId(`menu-pod-${a}`)).toBeVisible();
  expect(await drawn(), 'the hovered chip only').toBe(2);
  // Once drawn they stay, hidden (display none: no style, layout or paint) until hovered again.
  await page.mouse.move(0, 0);
  await expect(page.getByTestId(`delete-pod-${a}`)).toBeHidden();
  expect(await shown()).toBe(0);
  // The keyboard gets them too: focus inside a chip draws and shows them.
  await second.locator('.pod-main').focus();
  await expect(page.getByTestId(`delete-pod-${b}`)).toBeVisible();
  await page.getByTestId(`delete-pod-${b}`).click();
  await expect(page.locator('.notice').last()).toContainText(`pod "${b}" deleted`);
  expect(errors, 'no errors in the browser').toEqual([]);
});

test('while playing, the events table takes in new Events at most four times a second', async ({ page }) => {
  const errors = await open(page);
  await page.evaluate(() => window.kubeloop.pause());
  await applyWeb(page, 30);
  await advance(page, '60s');
  // Play a rollout at 10×: dozens of Events a second. Count the animation frames in which the
  // table gained rows, against the real time that passed (a slow machine draws fewer frames,
  // which only lowers the count).
  const { refreshes, elapsed, events } = await page.evaluate(async () => {
    const k = window.kubeloop;
    const tbody = () => document.querySelector('[data-testid="events"] tbody');
    let refreshes = 0;
    let changed = false;
    const mo = new MutationObserver((ms) => { if (ms.some((m) => m.addedNodes.length)) changed = true; });
    mo.observe(tbody(), { childList: true });
    const before = k.events().length;
    k.setSpeed(10);
    k.kubectl('set image deployment/web app=nginx:1.28');
    const t0 = performance.now();
    k.play();
    await new Promise((resolve) => {
      const tick = () => {
        if (changed) { refreshes++; changed = false; }
        if (performance.now() - t0 < 2000) requestAnimationFrame(tick); else resolve();
      };
      requestAnimationFrame(tick);
    });
    k.pause();
    mo.disconnect();
    return { refreshes, elapsed: performance.now() - t0, events: k.events().length - before };
  });
  expect(events, 'the rollout recorded Events while playing').toBeGreaterThan(20);
  expect(refreshes).toBeGreaterThan(0);
  expect(refreshes).toBeLessThanOrEqual(Math.ceil(elapsed / 250) + 1);
  // Paused, the table is current at once.
  const newest = await page.evaluate(() => window.kubeloop.events().length);
  await expect(page.getByTestId('events')).toContainText(`${newest} events`);
  expect(errors, 'no errors in the browser').toEqual([]);
});

test('a chip keeps its place in its card through a rollout', async ({ page }) => {
  // 200 steps, each reading every pod's creationTimestamp: near 30 s on a loaded machine.
  test.setTimeout(120_000);
  const errors = await open(page);
  await page.evaluate(() => window.kubeloop.pause());
  // A card orders its pods as `kubectl get pods --sort-by=.metadata.creationTimestamp` does (then
  // by name). Had a pod's creationTimestamp changed after its creation (the clock's milliseconds,
  // dropped by the first write's round trip), its chip would have jumped among its siblings,
  // replaying its entry animation.
  await applyWeb(page, 30);
  await advance(page, '60s');
  const { moved, misplaced } = await page.evaluate(async () => {
    const k = window.kubeloop;
    const removed = new WeakSet();
    const moved = [];
    const misplaced = [];
    const mo = new MutationObserver((ms) => {
      for (const m of ms) {
        for (const n of m.removedNodes) if (n instanceof Element && n.classList.contains('pod')) removed.add(n);
        for (const n of m.addedNodes) {
          if (n instanceof Element && n.classList.contains('pod') && removed.has(n)) moved.push(n.dataset.testid);
        }
      }
    });
    mo.observe(document.querySelector('.nodes'), { childList: true, subtree: true });
    k.kubectl('set image deployment/web app=nginx:1.28');
    for (let i = 0; i < 200; i++) {
      k.advance('100ms');
      await new Promise((r) => requestAnimationFrame(r));
      const created = new Map(k.state().items.filter((o) => o.kind === 'Pod')
        .map((o) => [o.metadata.name, o.metadata.creationTimestamp]));
      for (const card of document.querySelectorAll('.nodes .node')) {
        // A pod deleted since the last paint is no longer in the store; its chip leaves with the
        // next frame and has no place to keep.
        const order = [...card.querySelectorAll('.pod')].map((e) => String(e.dataset.testid).slice(4))
          .filter((name) => created.has(name))
          .map((name) => `${created.get(name)} ${name}`);
        const sorted = [...order].sort();
        if (order.join() !== sorted.join()) misplaced.push(order.join(', '));
      }
    }
    mo.disconnect();
    return { moved, misplaced };
  });
  await expect(page.locator('.nodes [data-testid^="pod-"][data-ready="true"]')).toHaveCount(30);
  expect(misplaced, 'cards in creationTimestamp and name order').toEqual([]);
  expect(moved, 'chips moved within their card').toEqual([]);
  expect(errors, 'no errors in the browser').toEqual([]);
});

test("the latest kubelet's loop card is updated in place when another node's kubelet runs", async ({ page }) => {
  const errors = await open(page);
  await page.evaluate(() => window.kubeloop.pause());
  await applyWeb(page, 6);
  // Pods start on all three nodes, so the card shows one kubelet's pass, then another's.
  const { nodes, replaced } = await page.evaluate(async () => {
    const k = window.kubeloop;
    const card = () => document.querySelector('[data-testid^="loop-kubelet-"]');
    const nodes = [];
    let first = null;
    let replaced = 0;
    for (let i = 0; i < 300 && nodes.length < 3; i++) {
      k.advance('100ms');
      await new Promise((r) => requestAnimationFrame(r));
      const c = card();
      if (!c) continue;
      if (!first) first = c;
      if (c !== first) replaced++;
      if (nodes[nodes.length - 1] !== c.dataset.testid) nodes.push(c.dataset.testid);
    }
    return { nodes, replaced };
  });
  expect(new Set(nodes).size, 'the card followed kubelets of different nodes').toBeGreaterThan(1);
  expect(replaced, 'frames in which the card was a new element').toBe(0);
  expect(errors, 'no errors in the browser').toEqual([]);
});

test('starting chips keep moving at lesson size and hold still when dozens start at once', async ({ page }) => {
  const errors = await open(page);
  await page.evaluate(() => window.kubeloop.pause());
  const panel = page.locator('.cluster-panel');
  /** Advances 100 ms at a time until more than `min` chips are starting; returns how many are
   *  and how many of their stripes the browser animates (null if that never happened). */
  const startingMoreThan = (min) => page.evaluate(async (min) => {
    for (let i = 0; i < 200; i++) {
      const chips = [...document.querySelectorAll('.nodes .pod.tone-starting')];
      if (chips.length > min) {
        const names = chips.map((c) => getComputedStyle(c.querySelector('.pod-main'), '::before').animationName);
        return { starting: chips.length, animated: names.filter((n) => n !== 'none').length };
      }
      window.kubeloop.advance('100ms');
      await new Promise((r) => requestAnimationFrame(r));
    }
    return null;
  }, min);

  await applyWeb(page, 3);
  const lesson = await startingMoreThan(0);
  expect(lesson, 'the lesson-sized rollout had starting pods').not.toBeNull();
  expect(lesson.animated, 'every starting chip moves').toBe(lesson.starting);
  await expect(panel).not.toHaveClass(/calm-motion/);

  // 37 more at once: more than 24 start together, so their stripes hold still.
  await applyWeb(page, 40);
  const burst = await startingMoreThan(24);
  expect(burst, 'the burst had more than 24 starting pods').not.toBeNull();
  await expect(panel).toHaveClass(/calm-motion/);
  expect(burst.animated, 'no starting chip moves').toBe(0);
  await expect(page.locator('.legend-item.tone-starting')).toHaveAttribute('title', /more than 24 pods/);

  // Once they are running the cluster is back to normal, with no note.
  await advance(page, '60s');
  await expect(page.locator('.nodes [data-testid^="pod-"][data-ready="true"]')).toHaveCount(40);
  await expect(panel).not.toHaveClass(/calm-motion/);
  expect(await page.locator('.legend-item.tone-starting').getAttribute('title')).toBeNull();

  // Crossing the cap restyles only what it stills. The browser picks the elements a class change
  // may restyle by the rightmost part of each selector under that class, so no rule under
  // `.calm-motion` may end in a part every chip has: one ending in `.pod-main` restyled all the
  // chips whenever a rollout crossed the cap (several times a second at 100×, 10-35 ms each).
  const broad = await page.evaluate(() => {
    const rules = [];
    const walk = (list) => { for (const r of list) { if (r.selectorText) rules.push(r.selectorText); if (r.cssRules) walk(r.cssRules); } };
    for (const sheet of document.styleSheets) walk(sheet.cssRules);
    const parts = [...document.querySelectorAll('.nodes .pod[data-ready="true"]')]
      .flatMap((chip) => [chip, ...chip.querySelectorAll('*')]);
    const calm = rules.flatMap((text) => text.split(',')).map((s) => s.trim()).filter((s) => s.startsWith('.calm-motion'));
    return {
      rules: calm.length,
      broad: calm.filter((s) => {
        const last = s.split(/[\s>+~]+/).pop().replace(/::?[a-z-]+$/, '');
        return parts.some((el) => el.matches(last));
      }),
    };
  });
  expect(broad.rules, 'rules under .calm-motion').toBeGreaterThan(0);
  expect(broad.broad, 'rules under .calm-motion that name a part of a ready chip').toEqual([]);
  expect(errors, 'no errors in the browser').toEqual([]);
});

test('at 25× and faster chips change state without animating, and slower they animate again', async ({ page }) => {
  const errors = await open(page);
  await page.evaluate(() => window.kubeloop.pause());
  await convergeWeb(page, 3);
  const panel = page.locator('.cluster-panel');
  /** Scales the web Deployment to `replicas` at `speed` and plays 2 s in steps; returns the
   *  animations of the new chips and those of every starting chip's stripes on the way. */
  const grow = (replicas, speed) => page.evaluate(async ({ replicas, speed }) => {
    const k = window.kubeloop;
    k.setSpeed(speed);
    const chips = () => [...document.querySelectorAll('.cluster-panel .pod')];
    const before = new Set(chips().map((c) => c.dataset.testid));
    k.kubectl(`scale deployment web --replicas=${replicas}`);
    const stripes = [];
    for (let i = 0; i < 20; i++) {
      k.advance('100ms');
      await new Promise((r) => requestAnimationFrame(r));
      for (const s of document.querySelectorAll('.cluster-panel .pod-stripes')) stripes.push(getComputedStyle(s, '::before').animationName);
    }
    await new Promise((r) => requestAnimationFrame(r));
    const fresh = chips().filter((c) => !before.has(c.dataset.testid));
    return { chips: fresh.map((c) => getComputedStyle(c).animationName), stripes };
  }, { replicas, speed });

  // At 100× a 0.45-s entrance would outlast the pod's whole start.
  const fast = await grow(6, 100);
  expect(fast.chips).toEqual(['none', 'none', 'none']);
  expect(fast.stripes.length, 'starting chips at 100×').toBeGreaterThan(0);
  expect(fast.stripes.every((n) => n === 'none'), 'their stripes hold still').toBe(true);
  await expect(panel).toHaveClass(/brisk-motion/);
  await expect(page.locator('.legend')).toHaveAttribute('title', /25× and faster/);

  // At 10× and slower every new chip makes its entrance again.
  const slow = await grow(9, 10);
  expect(slow.chips).toEqual(['pod-in', 'pod-in', 'pod-in']);
  expect(slow.stripes.length, 'starting chips at 10×').toBeGreaterThan(0);
  expect(slow.stripes.every((n) => n === 'stripes'), 'their stripes move').toBe(true);
  await expect(panel).not.toHaveClass(/brisk-motion/);
  expect(await page.locator('.legend').getAttribute('title')).toBeNull();
  expect(errors, 'no errors in the browser').toEqual([]);
});

test('with more than 150 chips on the cards they change state without animating, and fewer animate again', async ({ page }) => {
  const errors = await open(page);
  await page.evaluate(() => window.kubeloop.pause());
  await convergeWeb(page, 3);
  const panel = page.locator('.cluster-panel');
  /** Scales web to `replicas` at 1× and returns the animations of the chips that appeared. */
  const scale = (replicas) => page.evaluate(async (replicas) => {
    const k = window.kubeloop;
    k.setSpeed(1);
    const chips = () => [...document.querySelectorAll('.cluster-panel .pod')];
    const before = new Set(chips().map((c) => c.dataset.testid));
    k.kubectl(`scale deployment web --replicas=${replicas}`);
    k.advance('2s');
    await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
    return chips().filter((c) => !before.has(c.dataset.testid)).map((c) => getComputedStyle(c).animationName);
  }, replicas);

  // 160 pods on three 4-CPU nodes: 120 fit, the rest wait in the tray; all are chips.
  const crowded = await scale(160);
  expect(crowded.length).toBe(157);
  expect(crowded.every((n) => n === 'none'), 'no entrance among hundreds').toBe(true);
  await expect(panel).toHaveClass(/brisk-motion/);
  await expect(page.locator('.legend')).toHaveAttribute('title', /more than 150 pods/);

  await scale(3);
  await page.evaluate(() => window.kubeloop.advance('60s'));
  const calm = await scale(6);
  expect(calm).toEqual(['pod-in', 'pod-in', 'pod-in']);
  await expect(panel).not.toHaveClass(/brisk-motion/);
  expect(errors, 'no errors in the browser').toEqual([]);
});

test('new Events fade in a few at a time, and a burst of them arrives without fading', async ({ page }) => {
  const errors = await open(page);
  await page.evaluate(() => window.kubeloop.pause());
  await convergeWeb(page, 3);
  /** Rows of the events table that the browser fades in, and how many rows there are. */
  const fades = () => page.evaluate(() => {
    const rows = [...document.querySelectorAll('.event-row')];
    return { rows: rows.length, fading: rows.filter((r) => getComputedStyle(r).animationName === 'row-in').length };
  });
  const before = await fades();
  expect(before.fading, 'the rows the table opened with').toBe(0);

  // One pod deleted: its replacement's few Events arrive over a few updates, and fade in.
  const pod = await page.locator('.nodes [data-testid^="pod-"]').first().getAttribute('data-testid');
  await page.evaluate((name) => window.kubeloop.kubectl(`delete pod ${name}`), pod.slice('pod-'.length));
  const small = await page.evaluate(async () => {
    let most = 0;
    for (let i = 0; i < 30; i++) {
      window.kubeloop.advance('100ms');
      await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
      const rows = [...document.querySelectorAll('.event-row')];
      most = Math.max(most, rows.filter((r) => getComputedStyle(r).animationName === 'row-in').length);
    }
    return most;
  });
  expect(small, 'rows fading in after one pod was replaced').toBeGreaterThan(0);

  // 60 more pods in one step: well over a hundred Events in one update, none of them fading.
  await page.evaluate(() => window.kubeloop.kubectl('scale deployment web --replicas=63'));
  await advance(page, '30s');
  await expect(page.locator('.nodes [data-testid^="pod-"][data-ready="true"]')).toHaveCount(63);
  const burst = await fades();
  expect(burst.rows).toBeGreaterThan(50);
  expect(burst.fading, 'rows of the burst fading in').toBe(0);
  expect(errors, 'no errors in the browser').toEqual([]);
});

test('each panel paints apart from the page, and nothing fixed on screen sits inside one', async ({ page }) => {
  const errors = await open(page);
  await page.evaluate(() => window.kubeloop.pause());
  await convergeWeb(page, 3);
  // Open what floats over the page: the inspector and the fault panel (menus open in the top layer).
  await page.locator('.nodes [data-testid^="pod-"]').first().click();
  await expect(page.getByTestId('inspector')).toBeVisible();
  await page.getByTestId('faults-toggle').click();
  await expect(page.getByTestId('fault-panel')).toBeVisible();
  const found = await page.evaluate(() => ({
    panels: [...document.querySelectorAll('.panel')].map((p) => getComputedStyle(p).isolation),
    // A panel is its own stacking context: a `fixed` element inside one would be painted under
    // the panels after it.
    fixedInPanels: [...document.querySelectorAll('.panel *')]
      .filter((e) => getComputedStyle(e).position === 'fixed')
      .map((e) => e.className),
  }));
  expect(found.panels.length).toBeGreaterThanOrEqual(4);
  expect(new Set(found.panels), 'every panel is its own paint layer').toEqual(new Set(['isolate']));
  expect(found.fixedInPanels).toEqual([]);
  expect(errors, 'no errors in the browser').toEqual([]);
});

test('a pod chip changes colour at once and a node bar fills by the share it shows', async ({ page }) => {
  const errors = await open(page);
  await page.evaluate(() => window.kubeloop.pause());
  // A full CPU each, so that every node's CPU bar shows a share (one pod per node: they spread).
  await convergeWeb(page, 3, '1');
  const chip = page.locator('.nodes [data-testid^="pod-"]').first();
  await expect(chip).toBeVisible();
  // Colour transitions run on the main thread on every frame; a rollout changes dozens of chips
  // a second, so a chip's new state shows at once (only its selection ring eases in).
  const transitions = await chip.evaluate((c) => ({
    chip: getComputedStyle(c).transitionProperty,
    glyph: getComputedStyle(c.querySelector('.pod-glyph')).transitionDuration,
  }));
  expect(transitions).toEqual({ chip: 'box-shadow', glyph: '0s' });
  // The fill is scaled, not sized: its drawn width is the requested share of the track.
  const bar = page.locator('.nodes .bar-track').first();
  await expect.poll(() => bar.evaluate((t) => {
    const fill = t.querySelector('.bar-fill');
    const share = t.getBoundingClientRect().width * Number(t.getAttribute('aria-valuenow')) / 100;
    return {
      transition: getComputedStyle(fill).transitionProperty,
      drawn: Math.abs(fill.getBoundingClientRect().width - share) < 1,
      filled: Number(t.getAttribute('aria-valuenow')) > 0,
    };
  })).toEqual({ transition: 'transform', drawn: true, filled: true });
  expect(errors, 'no errors in the browser').toEqual([]);
});

test('an idle playground asks the browser for few frames, and an action brings every frame back', async ({ page }) => {
  const errors = await open(page);
  await page.evaluate(() => window.kubeloop.pause());
  await convergeWeb(page, 3);
  const seen = await page.evaluate(async () => {
    const k = window.kubeloop;
    // Counts the page's own requests for a frame while this test watches its own frames.
    const raf = window.requestAnimationFrame.bind(window);
    let asked = 0;
    window.requestAnimationFrame = (cb) => { asked += 1; return raf(cb); };
    const frames = (n) => new Promise((resolve) => {
      let i = 0;
      const tick = () => { i += 1; if (i >= n) resolve(); else raf(tick); };
      raf(tick);
    });
    k.play();
    await frames(30);
    asked = 0;
    const sim0 = k.now();
    const wall0 = performance.now();
    await frames(60);
    const idle = { asked, sim: k.now() - sim0, wall: performance.now() - wall0 };
    k.kubectl('scale deployment web --replicas=6');
    asked = 0;
    await frames(6);
    const woken = asked;
    k.pause();
    return { idle, woken };
  });
  // Drawn at the clock's tenths (about ten a second), not at every frame: counted against the
  // time the 60 frames took, which a busy machine stretches well past a second (a burst of
  // QUIET_FRAMES after a heartbeat changes a node is the slack).
  expect(seen.idle.asked).toBeLessThanOrEqual(Math.ceil(seen.idle.wall / 100) + 10);
  expect(seen.idle.asked).toBeGreaterThan(0);
  // The simulation keeps real time while the page sleeps.
  expect(seen.idle.sim).toBeGreaterThan(seen.idle.wall * 0.8);
  // The scale-up is drawn frame by frame from the next frame on.
  expect(seen.woken).toBeGreaterThanOrEqual(5);
  // Six frames are a tenth of a simulated second at 1×, which may end before the ReplicaSet's
  // creates: the rest of the scale-up is advanced deterministically, never waited for.
  await advance(page, '10s');
  await expect(page.locator('.nodes [data-testid^="pod-"]')).toHaveCount(6);
  expect(errors, 'no errors in the browser').toEqual([]);
});

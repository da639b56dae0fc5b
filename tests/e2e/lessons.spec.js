// Lessons in the page at the three paces a learner may take: the lesson's own timeline ("play the
// lesson"), every step the moment its button is enabled, and every step minutes late. Every check
// must end green at each pace. Saves test-results/lesson-<name>-<pace>.png to look at.
// @ts-check
const { test, expect } = require('@playwright/test');
const { open, hideNotices, advance } = require('./helpers');


test.describe.configure({ timeout: 120_000 });

/** The lesson card's step buttons (try-0, try-1, …), not their time labels. */
const stepButtons = (page) => page.locator('button[data-testid^="try-"]');

/** Presses each step in order as soon as it is offered, `late` after that (simulated time). */
async function doEveryStep(page, late) {
  const n = await stepButtons(page).count();
  for (let i = 0; i < n; i++) {
    const button = page.getByTestId(`try-${i}`);
    // A second at a time until the lesson offers it: one round trip, however long it takes.
    const offered = await page.evaluate((n) => {
      for (let s = 0; s < 20 * 60; s++) {
        if (window.kubeloop.lessonSteps()[n].enabled) return true;
        window.kubeloop.advance('1s');
      }
      return false;
    }, i);
    expect(offered, `step ${i} is offered within 20 minutes`).toBe(true);
    await expect(button).toBeEnabled();
    if (late) await advance(page, late);
    await button.click();
    await expect(page.getByTestId(`try-when-${i}`)).toHaveText(/✓ done at/);
  }
}

for (const name of ['thermostat', 'node-dies', 'fix-the-spec', 'run-to-completion', 'non-idempotent-world', 'at-most-one', 'operator-is-a-controller', 'finalizers-need-a-living-controller', 'crash-in-the-middle', 'your-first-controller', 'break-it-then-fix-it']) {
  for (const pace of ['timeline', 'immediate', 'slow']) {
    test(`${name}: every check passes when the steps are done at the ${pace} pace`, async ({ page }) => {
      const errors = await open(page, `/#example/${name}`);
      const lesson = page.getByTestId('lesson');
      await expect(lesson).toBeVisible();
      if (pace === 'timeline') {
        await page.getByTestId('play-lesson').click();
        await page.evaluate(() => window.kubeloop.pause());
      } else {
        await doEveryStep(page, pace === 'slow' ? '3m' : null);
      }
      const rows = lesson.locator('.check-row');
      const total = await rows.count();
      await page.evaluate(() => {
        for (let s = 0; s < 40 && window.kubeloop.checks().some((c) => c.passed == null); s++) {
          window.kubeloop.advance('30s');
        }
      });
      await expect(lesson.locator('.check-failed')).toHaveCount(0);
      await expect(lesson.locator('.check-passed')).toHaveCount(total);
      await hideNotices(page);
      await page.screenshot({ animations: 'disabled', path: `test-results/lesson-${name}-${pace}.png` });
      expect(errors).toEqual([]);
    });
  }
}

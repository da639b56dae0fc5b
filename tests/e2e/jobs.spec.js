// Jobs in the page: the cluster view's Job pill follows a Job through its failures, the
// back-off before its next pod, and its completion.
// @ts-check
const { test, expect } = require('@playwright/test');
const { open } = require('./helpers');

test('a Job pill shows its failures, the back-off countdown and then Complete', async ({ page }) => {
  const errors = await open(page, '/#example/run-to-completion');
  await expect(page.getByTestId('lesson')).toBeVisible();
  const pill = page.getByTestId('job-report');
  // Until the Job controller's first pass writes the Suspended condition, kubectl's STATUS says
  // Running, as it does on a cluster.
  await page.evaluate(() => window.kubeloop.advance('2s'));
  await expect(pill).toContainText('Suspended');
  await page.getByTestId('try-0').click();
  await page.getByTestId('try-1').click();
  // The first pod pulls its image, runs 5 s and fails near 11 s; the back-off then holds the
  // next one for 10 s. The run is deterministic (seed 14), so 15 s lands inside that wait.
  await page.evaluate(() => window.kubeloop.advance('13s'));
  await expect(pill).toContainText(/1 failed of 4 allowed · back-off: next pod in \d+s/);
  await page.evaluate(() => window.kubeloop.advance('90s'));
  await expect(pill).toContainText('Complete');
  await expect(pill).toContainText('1/1 done · 2 failed of 4 allowed');
  expect(errors).toEqual([]);
});

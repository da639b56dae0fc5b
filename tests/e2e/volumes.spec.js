// Volumes in the page: a node's card shows its zone, a pod's card shows a chip for each claim it
// mounts (its state, its size and the zone its disk pins the pod to), and the ownership view draws
// a StatefulSet's claims under it, marked as not owned, since they outlive its pods.
// @ts-check
const { test, expect } = require('@playwright/test');
const { open, advance } = require('./helpers');

const kubectl = (page, cmd) => page.evaluate((c) => window.kubeloop.kubectl(c), cmd);

test('db-0 shows its claim Bound then Resizing, and the ownership view draws data-db-0 under StatefulSet db', async ({ page }) => {
  const errors = await open(page, '/#example/non-idempotent-world');
  await expect(page.getByTestId('lesson')).toBeVisible();
  // The lesson spreads its nodes over zone-a, zone-b and zone-c; each card names its node's zone.
  await expect(page.getByTestId('node-node-2').locator('.node-zone')).toHaveText('zone-b');
  await advance(page, '90s');
  const chip = page.getByTestId('pod-db-0').getByTestId('claim-data-db-0');
  const state = chip.locator('.claim-state');
  await expect(chip.locator('.claim-name')).toHaveText('data-db-0');
  await expect(state).toHaveText('Bound');
  await expect(chip).toContainText(/1Gi in zone-[abc]$/);
  await expect(chip).toHaveAttribute(
    'title',
    /^claim data-db-0: Bound, 1Gi, volume pvc-\S+ pinned to zone zone-[abc]$/,
  );

  // Growing the claim changes its chip, though the pod itself does not change.
  const grown = await kubectl(page, `patch pvc data-db-0 -p '{"spec":{"resources":{"requests":{"storage":"2Gi"}}}}'`);
  expect(grown.ok, grown.stderr).toBe(true);
  await advance(page, '1s');
  await expect(state).toHaveText('Resizing');
  await expect(chip).toContainText('1Gi→2Gi');
  await advance(page, '15s');
  await expect(state).toHaveText('Bound');
  await expect(chip).toContainText(/2Gi in zone-[abc]$/);

  // The chip inspects its claim.
  await chip.click();
  await expect(page.getByTestId('inspector')).toContainText('data-db-0');
  await page.getByTestId('inspector-close').click();
  await expect(chip).toBeFocused();

  await page.getByTestId('tab-ownership').click();
  const claims = page.getByTestId('ownership').getByTestId('claims-of-db');
  await expect(claims).toContainText('not owned: made from volumeClaimTemplates');
  await expect(claims.getByRole('button', { name: 'data-db-0', exact: true })).toBeVisible();
  await expect(claims.getByRole('button', { name: 'data-db-1', exact: true })).toBeVisible();
  expect(errors).toEqual([]);
});

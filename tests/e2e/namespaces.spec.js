// @ts-check
// Namespaces in the page: a namespace made in the console, applied into from the editor, and
// deleted; the namespace controller's loop empties it pods first, and kubectl says what is left.
const { test, expect } = require('@playwright/test');
const { open, advance } = require('./helpers');

const kubectl = (page, cmd) => page.evaluate((c) => window.kubeloop.kubectl(c), cmd);

test('deleting a namespace leaves it Terminating while the namespace controller empties it, then it is gone', async ({ page }) => {
  const errors = await open(page);
  const refused = await page.evaluate(() =>
    window.kubeloop.applyReport('apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  namespace: shop\nspec:\n  containers: [{name: c, image: nginx}]\n'),
  );
  expect(refused.ok).toBe(false);
  expect(JSON.stringify(refused.diagnostics)).toContain('namespaces \\"shop\\" not found');

  expect((await kubectl(page, 'create namespace shop')).stdout).toBe('namespace/shop created\n');
  expect((await kubectl(page, 'create deployment web --image=nginx --replicas=2 -n shop')).ok).toBe(true);
  await advance(page, '20s');
  expect((await kubectl(page, 'get pods -n shop --no-headers')).stdout.trim().split('\n')).toHaveLength(2);

  expect((await kubectl(page, 'delete namespace shop --wait=false')).stdout).toBe('namespace "shop" deleted\n');
  await advance(page, '1s');
  expect((await kubectl(page, 'get ns shop --no-headers')).stdout).toMatch(/^shop\s+Terminating\s/);
  const card = page.getByTestId('loop-namespace-controller');
  await expect(card).toBeVisible();
  await expect(card).toContainText('Namespace controller');

  await advance(page, '60s');
  expect((await kubectl(page, 'get ns shop')).stderr).toBe('Error from server (NotFound): namespaces "shop" not found\n');
  expect(errors).toEqual([]);
});

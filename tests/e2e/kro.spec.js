// @ts-check
// kro in the page: in a cluster with kro installed, a learner applies a ResourceGraphDefinition
// and an instance from the editor in one go, and sees the graph's instance controller's loop, the
// instance's resources drawn as its ApplySet members down to their pods, and its status.
const { test, expect } = require('@playwright/test');
const { open, advance } = require('./helpers');

const GRAPH = `apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata:
  name: cache.kro.run
spec:
  schema:
    apiVersion: v1alpha1
    kind: Cache
    spec:
      replicas: integer | default=2
    status:
      availableReplicas: \${deployment.status.availableReplicas}
  resources:
  - id: deployment
    template:
      apiVersion: apps/v1
      kind: Deployment
      metadata:
        name: \${schema.metadata.name}
      spec:
        replicas: \${schema.spec.replicas}
        selector:
          matchLabels: {app: "\${schema.metadata.name}"}
        template:
          metadata:
            labels: {app: "\${schema.metadata.name}"}
          spec:
            containers:
            - name: redis
              image: redis:7
  - id: service
    template:
      apiVersion: v1
      kind: Service
      metadata:
        name: \${deployment.metadata.name}
      spec:
        selector: \${deployment.spec.selector.matchLabels}
        ports:
        - port: 6379
---
apiVersion: kro.run/v1alpha1
kind: Cache
metadata:
  name: sessions
spec: {}
`;

test('an RGD and its instance applied from the editor run a new loop, draw the instance over its members down to pods, and report its status', async ({ page }) => {
  const errors = await open(page, '/#example/operator-is-a-controller');
  await expect(page.getByTestId('editor')).toBeVisible();
  const editor = page.getByTestId('editor');
  await editor.fill(GRAPH);
  await editor.press('Control+Enter');
  const diagnostics = page.getByTestId('diagnostics');
  await expect(diagnostics).toContainText('resourcegraphdefinition.kro.run/cache.kro.run created');
  await expect(diagnostics).toContainText('cache.kro.run/sessions waiting: created once a CustomResourceDefinition serves Cache');
  await advance(page, '40s');

  await expect(page.getByTestId('loop-kro-cache.kro.run')).toBeVisible();
  await expect(page.getByTestId('loop-kro-cache.kro.run')).toContainText('kro instance controller (cache.kro.run)');

  await page.getByTestId('tab-ownership').click();
  const members = page.getByTestId('members-of-sessions');
  await expect(members).toContainText('ApplySet members, not owned');
  await expect(members.getByRole('button', { name: 'sessions', exact: true })).toHaveCount(2);
  await expect(members.locator('[data-testid^="tree-pod-"]')).toHaveCount(2);

  const status = await page.evaluate(() => window.kubeloop.kubectl('get cache sessions -o jsonpath={.status.state}/{.status.availableReplicas}'));
  expect(status.ok, status.stderr).toBe(true);
  expect(status.stdout).toBe('ACTIVE/2');
  const rgd = await page.evaluate(() => window.kubeloop.kubectl('get rgd'));
  expect(rgd.stdout).toMatch(/cache\.kro\.run\s+v1alpha1\s+Cache\s+Active\s+True/);
  expect(errors).toEqual([]);
});

// @ts-check
// A StatefulSet from the editor: its pods start one at a time in ordinal order, each with its own
// claim (bound to a volume kind's local-path provisioner makes), and its controller's loop has a
// card of its own.
const { test, expect } = require('@playwright/test');
const { open, advance } = require('./helpers');

const kubectl = (page, cmd) => page.evaluate((c) => window.kubeloop.kubectl(c), cmd);

const WEB = `apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: web
spec:
  serviceName: web
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: nginx, image: "nginx:1.27"}]
  volumeClaimTemplates:
  - metadata: {name: www}
    spec:
      accessModes: [ReadWriteOnce]
      resources: {requests: {storage: 1Gi}}
`;

test('a StatefulSet applied in the editor starts its pods in order, each after its claim', async ({ page }) => {
  const errors = await open(page);
  const editor = page.getByTestId('editor');
  await editor.fill(WEB);
  await editor.press('Control+Enter');
  await expect(page.getByTestId('diagnostics')).toContainText('statefulset.apps/web created');

  await advance(page, '3s');
  // OrderedReady: only web-0 exists until it is Running and Ready.
  expect((await kubectl(page, 'get pods -o name')).stdout).toBe('pod/web-0\n');
  expect((await kubectl(page, 'get pvc -o name')).stdout).toBe('persistentvolumeclaim/www-web-0\n');

  await advance(page, '2m');
  expect((await kubectl(page, 'get pods -o name')).stdout).toBe('pod/web-0\npod/web-1\npod/web-2\n');
  expect((await kubectl(page, 'get sts --no-headers')).stdout).toMatch(/^web\s+3\/3\s/);
  const claims = (await kubectl(page, 'get pvc -o jsonpath={.items[*].status.phase}')).stdout;
  expect(claims).toBe('Bound Bound Bound');
  const events = (await kubectl(page, 'get events -o jsonpath={.items[*].message}')).stdout;
  expect(events).toContain('create Claim www-web-2 Pod web-2 in StatefulSet web success');
  expect(events).toContain('create Pod web-2 in StatefulSet web successful');

  const card = page.getByTestId('loop-statefulset-controller');
  await expect(card).toBeVisible();
  await expect(card).toContainText('StatefulSet controller');
  expect(errors).toEqual([]);
});

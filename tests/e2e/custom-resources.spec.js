// @ts-check
// Custom resources in the page: a CustomResourceDefinition and an object of its kind applied from
// the editor in one go, listed by kubectl with the CRD's printer columns, and a type error in a
// custom object underlined at its line with the API server's words.
const { test, expect } = require('@playwright/test');
const { open, advance } = require('./helpers');

/** Applies YAML as the editor's Apply does and returns `{ok, lines, diagnostics}`. */
const applyReport = (page, yaml) => page.evaluate((y) => window.kubeloop.applyReport(y), yaml);

const CRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: crontabs.stable.example.com
spec:
  group: stable.example.com
  scope: Namespaced
  names: {plural: crontabs, singular: crontab, kind: CronTab, shortNames: [ct]}
  versions:
  - name: v1
    served: true
    storage: true
    additionalPrinterColumns:
    - {name: Spec, type: string, jsonPath: .spec.cronSpec}
    - {name: Replicas, type: integer, jsonPath: .spec.replicas}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              cronSpec: {type: string}
              image: {type: string}
              replicas: {type: integer, default: 1}
`;

const CRONTAB = `apiVersion: stable.example.com/v1
kind: CronTab
metadata:
  name: nightly
spec:
  cronSpec: "0 3 * * *"
  image: backup:1.0
`;

test('a CRD and a custom resource apply from the editor, kubectl lists them by the printer columns, and a type error is underlined', async ({ page }) => {
  const errors = await open(page);
  const editor = page.getByTestId('editor');
  await editor.fill(`${CRD}---\n${CRONTAB}`);
  await editor.press('Control+Enter');
  const diagnostics = page.getByTestId('diagnostics');
  await expect(diagnostics).toContainText('customresourcedefinition.apiextensions.k8s.io/crontabs.stable.example.com created');
  await expect(diagnostics).toContainText('crontab.stable.example.com/nightly created');
  await expect(diagnostics).toContainText('plain kubectl apply would refuse this CronTab the first time');

  await page.getByTestId('tab-console').click();
  const input = page.getByTestId('console-input');
  await input.fill('kubectl get ct');
  await input.press('Enter');
  const out = page.getByTestId('console').locator('.console-out > .console-entry').last().locator('.console-stdout');
  await expect(out).toContainText('NAME');
  const text = await out.innerText();
  expect(text.split('\n')[0].trim().split(/\s+/)).toEqual(['NAME', 'SPEC', 'REPLICAS']);
  expect(text).toMatch(/nightly\s+0 3 \* \* \*\s+1/);

  await editor.fill(CRONTAB.replace('image: backup:1.0', 'image: backup:1.0\n  replicas: three'));
  await editor.press('Control+Enter');
  const mark = page.getByTestId('diag-mark');
  await expect(mark).toHaveCount(1);
  await expect(mark).toHaveAttribute('data-line', '8');
  await expect(mark).toHaveText('replicas: three');
  await expect(page.getByTestId('diagnostic').first()).toContainText(
    'spec.replicas in body must be of type integer: "string"',
  );
  expect(errors).toEqual([]);
});

test('a custom resource that owns a Deployment heads its tree in the ownership view, says no controller acts on it, and takes the Deployment with it', async ({ page }) => {
  const errors = await open(page);
  const created = await applyReport(page, `${CRD}---\n${CRONTAB}`);
  expect(created.ok, JSON.stringify(created)).toBe(true);
  const uid = await page.evaluate(() => window.kubeloop.kubectl('get ct nightly -o jsonpath={.metadata.uid}'));
  expect(uid.ok, uid.stderr).toBe(true);
  const owned = await applyReport(page, `apiVersion: apps/v1
kind: Deployment
metadata:
  name: backup
  ownerReferences:
  - {apiVersion: stable.example.com/v1, kind: CronTab, name: nightly, uid: ${uid.stdout}, controller: true, blockOwnerDeletion: true}
spec:
  replicas: 2
  selector: {matchLabels: {app: backup}}
  template:
    metadata: {labels: {app: backup}}
    spec:
      containers: [{name: backup, image: backup:1.0}]
`);
  expect(owned.ok, JSON.stringify(owned)).toBe(true);
  await advance(page, '30s');

  await page.getByTestId('tab-ownership').click();
  const tree = page.getByTestId('ownership');
  const root = tree.locator('.tree > li').first();
  await expect(root.locator('> .tree-node .kind-badge')).toHaveText('CronTab');
  await expect(root.locator('> .tree-node button')).toHaveText('nightly');
  const deploy = root.locator('> .tree-children > li.tree-deploy');
  await expect(deploy.locator('> .tree-node button')).toHaveText('backup');
  await expect(deploy.locator('.tree-rs [data-testid^="tree-pod-"]')).toHaveCount(2);

  await root.locator('> .tree-node button').click();
  const insp = page.getByTestId('inspector');
  await expect(insp.getByTestId('inspector-note')).toContainText('no controller acts on it in the playground');

  const deleted = await page.evaluate(() => window.kubeloop.kubectl('delete ct nightly'));
  expect(deleted.ok, deleted.stderr).toBe(true);
  await advance(page, '60s');
  await expect(tree.getByRole('button', { name: 'backup', exact: true })).toHaveCount(0);
  await expect(tree.getByRole('button', { name: 'nightly', exact: true })).toHaveCount(0);
  expect(errors).toEqual([]);
});

// @ts-check
// Built-in kinds the playground stores without simulating them: a real manifest with a ConfigMap,
// a Secret and a ServiceAccount applies from the editor, kubectl lists them with their columns,
// the inspector says nothing acts on them, and a number where Go wants a string (an env value)
// is underlined at its line in the API server's words.
const { test, expect } = require('@playwright/test');
const { open } = require('./helpers');

const APP = `apiVersion: v1
kind: ConfigMap
metadata:
  name: web-config
data:
  PORT: "8080"
---
apiVersion: v1
kind: Secret
metadata:
  name: db
stringData:
  password: hunter2
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: web
`;

const DEPLOYMENT = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: nginx
        env:
        - name: PORT
          value: 8080
`;

test('a ConfigMap, a Secret and a ServiceAccount apply from the editor and kubectl lists them; an env value of the wrong type is underlined', async ({ page }) => {
  const errors = await open(page);
  const editor = page.getByTestId('editor');
  await editor.fill(APP);
  await editor.press('Control+Enter');
  const diagnostics = page.getByTestId('diagnostics');
  await expect(diagnostics).toContainText('configmap/web-config created');
  await expect(diagnostics).toContainText('secret/db created');
  await expect(diagnostics).toContainText('serviceaccount/web created');

  await page.getByTestId('tab-console').click();
  const input = page.getByTestId('console-input');
  await input.fill('kubectl get secrets');
  await input.press('Enter');
  const out = page.getByTestId('console').locator('.console-out > .console-entry').last().locator('.console-stdout');
  await expect(out).toContainText('NAME');
  const text = await out.innerText();
  expect(text.split('\n')[0].trim().split(/\s+/)).toEqual(['NAME', 'TYPE', 'DATA', 'AGE']);
  expect(text).toMatch(/db\s+Opaque\s+1/);

  await editor.fill(DEPLOYMENT);
  await editor.press('Control+Enter');
  const mark = page.getByTestId('diag-mark');
  await expect(mark).toHaveCount(1);
  await expect(mark).toHaveAttribute('data-line', '15');
  await expect(mark).toHaveText('value: 8080');
  await expect(page.getByTestId('diagnostic').first()).toContainText(
    'json: cannot unmarshal number into Go struct field EnvVar.spec.template.spec.containers.env.value of type string',
  );
  expect(errors).toEqual([]);
});

test('the inspector shows a stored ConfigMap\'s data and says it has no controller and that changing it restarts nothing', async ({ page }) => {
  const errors = await open(page);
  const created = await page.evaluate((y) => window.kubeloop.applyReport(y), APP);
  expect(created.ok, JSON.stringify(created)).toBe(true);
  await page.getByTestId('tab-ownership').click();
  const tree = page.getByTestId('ownership');
  await tree.getByRole('button', { name: 'web-config', exact: true }).click();
  const notes = page.getByTestId('inspector').getByTestId('inspector-note');
  await expect(notes.first()).toContainText('no controller acts on it in the playground');
  await expect(notes.nth(1)).toContainText('does not restart the pods that use it');
  // A ConfigMap has no spec or status: the inspector shows its data instead.
  await expect(page.getByTestId('inspector-fields')).toContainText('PORT: "8080"');
  expect(errors).toEqual([]);
});

// Playwright e2e config. Run through `make e2e` (or `make test`), which builds dist/ first and
// passes a free port in E2E_PORT. Specs live in tests/e2e/*.spec.js; add more there.
//
// Browser: Debian's /usr/bin/chromium (installed by `make tools`). Never run
// `npx playwright install`: browser downloads are blocked on this network.
// @ts-check
const { defineConfig } = require('@playwright/test');

const port = Number(process.env.E2E_PORT || 4173);
const baseURL = `http://127.0.0.1:${port}`;
// The build to serve: dist/ unless E2E_DIST names another (so two builds can be tested side by side).
const dist = process.env.E2E_DIST || 'dist';
// The same build served from a sub-path, as a static host serves `make build PUBLIC_URL=/kubeloop/`:
// scripts/rebase-dist.js copies it to <dist>-subpath/ with index.html's base URL rewritten (what
// trunk itself changes for --public-url; `make verify-rebase` proves it), and the server 404s
// everything outside /kubeloop/. tests/e2e/subpath.spec.js runs there (project "subpath").
const subpath = '/kubeloop/';
const subpathDist = `${dist.replace(/\/+$/, '')}-subpath`;
// Set once here, in the main process, so the workers (which load this file again) inherit it.
while (!process.env.E2E_SUBPATH_PORT || process.env.E2E_SUBPATH_PORT === String(port)) {
  process.env.E2E_SUBPATH_PORT = require('child_process').execFileSync('node', [require('path').join(__dirname, 'scripts/free-port.js')]).toString().trim();
}
const subpathURL = `http://127.0.0.1:${Number(process.env.E2E_SUBPATH_PORT)}${subpath}`;

// Flags for headless Chromium as root in a sandboxed container with no outside network.
// The background-networking/component-update/sync flags stop Chromium from dialling Google at
// start-up (those connections are refused here and slow everything down). Playwright already adds
// --headless and a fresh temporary --user-data-dir itself (it rejects --user-data-dir in args).
const chromiumArgs = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

module.exports = defineConfig({
  testDir: 'tests/e2e',
  testMatch: '**/*.spec.js',
  outputDir: 'test-results', // traces/screenshots of failures; gitignored
  timeout: 30_000,
  expect: { timeout: 10_000 },
  fullyParallel: true,
  forbidOnly: !!process.env.CI, // a stray test.only must not silently skip the rest in CI
  retries: 0, // flaky tests should be fixed, not retried
  workers: 2, // the machine has 2 cores
  // 'list' prints one line per test; the summary reporter ends with "e2e: N passed, N failed".
  reporter: [['list'], ['./tests/e2e/summary-reporter.js']],
  use: {
    baseURL,
    browserName: 'chromium',
    headless: true,
    viewport: { width: 1280, height: 800 },
    screenshot: 'only-on-failure',
    trace: 'retain-on-failure',
    launchOptions: {
      executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium',
      args: chromiumArgs,
    },
  },
  projects: [
    { name: 'root', testIgnore: '**/subpath.spec.js' },
    // baseURL ends in /kubeloop/: these specs use relative URLs (`./`, `www/…`), never `/…`.
    { name: 'subpath', testMatch: '**/subpath.spec.js', use: { baseURL: subpathURL } },
  ],
  // Serves the release build in dist/ exactly as deployed (no dev server, no autoreload), at the
  // site root and under the sub-path.
  webServer: [
    {
      command: `node scripts/serve-dist.js ${dist} ${port}`,
      url: `${baseURL}/`,
      reuseExistingServer: false,
      timeout: 30_000,
      stdout: 'ignore',
      stderr: 'pipe',
    },
    {
      command: `node scripts/rebase-dist.js ${dist} ${subpathDist} ${subpath} && node scripts/serve-dist.js ${subpathDist} ${process.env.E2E_SUBPATH_PORT} ${subpath}`,
      url: subpathURL,
      reuseExistingServer: false,
      timeout: 30_000,
      stdout: 'ignore',
      stderr: 'pipe',
    },
  ],
});

// Playwright e2e config. Run through `make e2e` (or `make test`), which builds dist/ first and
// passes a free port in E2E_PORT. Specs live in tests/e2e/*.spec.js; add more there.
//
// Browser: Debian's /usr/bin/chromium (installed by `make tools`). Never run
// `npx playwright install`: browser downloads are blocked on this network.
// @ts-check
const { defineConfig } = require('@playwright/test');

const port = Number(process.env.E2E_PORT || 4173);
const baseURL = `http://127.0.0.1:${port}`;

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
  // Serves the release build in dist/ exactly as deployed (no dev server, no autoreload).
  webServer: {
    command: `node scripts/serve-dist.js dist ${port}`,
    url: `${baseURL}/`,
    reuseExistingServer: false,
    timeout: 30_000,
    stdout: 'ignore',
    stderr: 'pipe',
  },
});

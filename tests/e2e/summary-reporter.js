// Prints one plain closing line, "e2e: N passed, N failed[, N skipped]", so the browser suite's
// result is easy to find at the end of a long `make test` log (and is machine-readable).
class SummaryReporter {
  constructor() { this.counts = { passed: 0, failed: 0, skipped: 0 }; }
  onTestEnd(test, result) {
    // Count each test once, by its final outcome (retries are off, but be safe).
    if (result.retry < test.retries && result.status !== 'passed' && result.status !== 'skipped') return;
    if (result.status === 'passed') this.counts.passed++;
    else if (result.status === 'skipped') this.counts.skipped++;
    else this.counts.failed++;
  }
  onEnd() {
    const { passed, failed, skipped } = this.counts;
    console.log(`e2e: ${passed} passed, ${failed} failed` + (skipped ? `, ${skipped} skipped` : ''));
  }
  printsToStdio() { return true; }
}
module.exports = SummaryReporter;

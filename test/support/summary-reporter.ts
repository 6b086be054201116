import type { Reporter, SerializedError, TestModule } from 'vitest/node';

/**
 * Prints one closing line `N passed, N failed` (plus skipped, when any) after the
 * default reporter, so a CI log can be read by a machine without parsing vitest's table.
 */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(
    testModules: ReadonlyArray<TestModule>,
    unhandledErrors: ReadonlyArray<SerializedError>,
  ): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    for (const module of testModules) {
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') passed++;
        else if (state === 'failed') failed++;
        else skipped++;
      }
      // A file that failed to load has no tests but is a failure all the same.
      if (
        module.state() === 'failed' &&
        ![...module.children.allTests()].some((t) => t.result().state === 'failed')
      )
        failed++;
    }
    const extra = [
      skipped ? `${skipped} skipped` : '',
      unhandledErrors.length ? `${unhandledErrors.length} unhandled errors` : '',
    ]
      .filter(Boolean)
      .map((s) => `, ${s}`)
      .join('');
    process.stdout.write(`\n${passed} passed, ${failed} failed${extra}\n`);
  }
}

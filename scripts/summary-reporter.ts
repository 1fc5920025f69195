/**
 * A vitest reporter that ends the run with one plain line, `tests: N passed, N failed`, which CI
 * systems that do not know vitest can read. Skipped tests are counted apart, never as passed.
 */
import type { Reporter, TestModule } from 'vitest/node';

export default class SummaryReporter implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    for (const module of modules) {
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') passed++;
        else if (state === 'failed') failed++;
        else skipped++;
      }
      // A failing hook (beforeAll) skips its tests: count each such suite or file as a failure.
      const brokenSuites = [...module.children.allSuites()].filter(
        (suite) => suite.state() === 'failed' && ![...suite.children.allTests()].some((t) => t.result().state === 'failed'),
      );
      failed += brokenSuites.length;
      if (
        module.state() === 'failed' &&
        brokenSuites.length === 0 &&
        ![...module.children.allTests()].some((t) => t.result().state === 'failed')
      )
        failed++;
    }
    process.stdout.write(`\ntests: ${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}\n`);
  }
}

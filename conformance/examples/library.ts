/**
 * conformance/README.md, "As a library": the suite run from a program. It compiles under a strict
 * tsconfig with exactOptionalPropertyTypes (consumer/ checks it from the packed tarball).
 */
// #region docs
import { ALL_CASES, loadConfig, prepareTarget, renderSummary, runSuite, writeReports } from '@orbit/conformance';

const target = await prepareTarget(loadConfig('conformance.yaml'), { seed: 42, waitReadyMs: 30_000 });
try {
  const report = await runSuite({ cases: ALL_CASES, env: target.env, profile: 'seed', only: ['ack.*'], server: target.server });
  writeReports(report, 'reports');
  console.log(renderSummary(report));
} finally {
  await target.stop();
}
// #endregion docs

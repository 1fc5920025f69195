/**
 * @module @orbit/conformance
 * A conformance suite for orbit.events.v1 and the Orbit management API that checks any
 * implementation over the network. Library first: load a configuration, prepare the target, run
 * the catalogue (or part of it), render the reports. The CLI (`orbit-conformance`) is a thin
 * layer over these exports.
 */
export { AREAS, CheckFailure, defineCase, FEATURES, globToRegExp, LEVELS, matchesAny, SkipSignal } from './case.ts';
export type { Area, Clause, ConformanceCase, Feature, Level } from './case.ts';
export { ALL_CASES } from './cases/index.ts';
export { ConfigError, loadConfig, parseConfig, ROLES, SEED_TIMING } from './config.ts';
export type { BootstrapConfig, Credential, PublishConfig, Role, SpawnConfig, SuiteConfig, Timing } from './config.ts';
export { CaseContext, propertySeed } from './context.ts';
export type { RunEnvironment, Subscription } from './context.ts';
export { EvidenceLog } from './evidence.ts';
export type { Evidence } from './evidence.ts';
export { HttpResponse, sendHttp } from './http.ts';
export { checkEntriesMatch, KnownFailingError, knownFailingEntry, loadKnownFailing, parseKnownFailing } from './known-failing.ts';
export type { KnownFailingEntry } from './known-failing.ts';
export { publishBody, publishResult } from './publisher.ts';
export type { PublishInput, PublishedEvent } from './publisher.ts';
export {
  REPORT_FILES,
  renderHtml,
  renderJson,
  renderJunit,
  renderOutcome,
  renderSummary,
  resultLine,
  tallyLine,
  writeReports,
} from './reports/index.ts';
export { countResults, runSuite, selectCases } from './runner.ts';
export type { CaseResult, Outcome, RunCounts, RunOptions, RunReport } from './runner.ts';
export { BOOTSTRAP_PLAN, prepareTarget, SetupError } from './setup.ts';
export type { PreparedTarget } from './setup.ts';
export { EventConnection, newMessageId, PROTOCOL } from './ws.ts';
export type { OpenOptions, ServerFrame, UpgradeOutcome } from './ws.ts';

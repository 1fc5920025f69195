/**
 * @module @orbit/conformance
 * A conformance suite for orbit.events.v1 and the Orbit management API that checks any
 * implementation over the network. Library first: load a configuration, prepare the target, run
 * the catalogue (or part of it, by profile and pattern), render the reports. The CLI
 * (`orbit-conformance`) is a thin layer over these exports.
 */
export { AREAS, defineCase, inProfile, LEVELS, PROFILES, sectionTitle, seedCitation } from './case.ts';
export type { Area, CaseSpec, Citation, ConformanceCase, Level, OrbitChoice, Profile } from './case.ts';
export { ALL_CASES } from './cases/index.ts';
export { EXIT } from './exit-codes.ts';
export { CLIENT_CASES, ClientCaseContext, defineClientCase, loadClientConfig, runClientSuite } from './client/index.ts';
export type {
  ClientCase,
  ClientCaseSpec,
  ClientEnvironment,
  ClientModeConfig,
  ClientRunOptions,
  HarnessConfig,
  HarnessReport,
} from './client/index.ts';
export { ConfigError, loadConfig, parseConfig, ROLES, SEED_TIMING } from './config.ts';
export type { BootstrapConfig, Credential, PublishConfig, Role, SpawnConfig, SuiteConfig, Timing } from './config.ts';
export { CaseContext, propertySeed } from './context.ts';
export type { RunEnvironment } from './context.ts';
export type { Subscription } from '@orbit/generated';
export { CheckFailure, FAILURE_KINDS, NetworkError, SkipSignal } from './errors.ts';
export type { FailureKind, PropertyFailure } from './errors.ts';
export { EvidenceLog } from './evidence.ts';
export type { Evidence } from './evidence.ts';
export { FEATURES } from './features.ts';
export type { Feature } from './features.ts';
export { HttpResponse, sendHttp } from './http.ts';
export { checkEntriesMatch, entriesFor, KnownFailingError, loadKnownFailing, matchesFailure, parseKnownFailing } from './known-failing.ts';
export type { FailureMatcher, KnownFailingEntry } from './known-failing.ts';
export { globToRegExp, matchesAny } from './patterns.ts';
export { checkConfiguration, probeServer, waitReady } from './probe.ts';
export type { Liveness, ServerWatch } from './probe.ts';
export { publishBody, publishResult } from './publisher.ts';
export type { PublishInput, PublishedEvent } from './publisher.ts';
export {
  REPORT_FILES,
  renderAbort,
  renderHtml,
  renderJson,
  renderJunit,
  renderOutcome,
  renderSummary,
  resultLine,
  tallyLine,
  writeReports,
} from './reports/index.ts';
export { countResults, OUTCOME_ORDER, runSuite, selectCases } from './runner.ts';
export type { Abort, CaseResult, Outcome, RunCounts, RunOptions, RunReport } from './runner.ts';
export { SEED_RULES, SEED_SECTIONS } from './seed-rules.ts';
export type { SeedRuleId } from './seed-rules.ts';
export { BOOTSTRAP_NAMESPACES, BOOTSTRAP_PLAN, BOOTSTRAP_QUEUES, bootstrapRoles } from './bootstrap.ts';
export type { Bootstrapped, BootstrapOutput, RoleRequest } from './bootstrap.ts';
export { prepareTarget, SetupError } from './setup.ts';
export type { PreparedTarget } from './setup.ts';
export { EventConnection } from './ws.ts';
export { randomId as newMessageId } from './ids.ts';
// The subprotocol (exported here as PROTOCOL) and the connect path, for the suite's users: @orbit/spec/protocol writes them.
export { CONNECT_PATH, SUBPROTOCOL as PROTOCOL } from '@orbit/spec/protocol';
export type { OpenOptions, UpgradeOutcome } from './ws.ts';
export type { Received } from './frames.ts';

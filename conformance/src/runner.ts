/**
 * @module
 * The runner: it checks the configuration against the server first, then runs the selected cases
 * one after another (they share one server and one result log), each with its own timeout,
 * evidence and cleanup, and grades each one:
 *
 * - `passed`; `failed` (a MUST broken); `non-strict` (a SHOULD not met: reported, fails the run
 *   only with `strict`); `info` (a MAY case: what the server does where the seed leaves it open);
 *   `skipped` (a feature was not declared, `--skip` named it, or the case cannot test what it
 *   claims against this configuration);
 * - `known-failing` (failed exactly as its known-failing entry says), `flaky` (failed as its
 *   known-flaky entry says), `stale` (listed as known-failing but passed: fails the run).
 *
 * After every case the server is probed. When it is gone, the run stops: the case during which it
 * died fails with that reason, the last passing case is named, the cases left are not run, and in
 * spawn mode the report carries the process's exit status and the tail of its output.
 */
import { type ConformanceCase, type Level, type Citation, inProfile, type Profile } from './case.ts';
import { retireForCleanup } from './cleanup.ts';
import { CaseContext, type RunEnvironment } from './context.ts';
import { CheckFailure, type FailureKind, type PropertyFailure, SkipSignal } from './errors.ts';
import { type Evidence, EvidenceLog } from './evidence.ts';
import { checkEntriesMatch, describeEntry, entriesFor, type KnownFailingEntry, matchesFailure } from './known-failing.ts';
import { matchesAny } from './patterns.ts';
import { checkConfiguration, probeServer, type ServerWatch } from './probe.ts';

export type Outcome = 'passed' | 'failed' | 'non-strict' | 'info' | 'skipped' | 'known-failing' | 'flaky' | 'stale';

/** Outcomes in the order reports list them: what needs attention first. */
export const OUTCOME_ORDER: readonly Outcome[] = ['failed', 'stale', 'non-strict', 'known-failing', 'flaky', 'info', 'skipped', 'passed'];

export interface CaseResult {
  readonly id: string;
  readonly area: string;
  readonly level: Level;
  readonly title: string;
  readonly profile: Profile;
  readonly cites: readonly Citation[];
  readonly kind: 'example' | 'property';
  readonly features: readonly string[];
  readonly outcome: Outcome;
  readonly durationMs: number;
  /** Why it failed or was skipped, or what an info case observed. */
  readonly message?: string;
  /** How it failed (for a known-failing entry that names a kind). */
  readonly failureKind?: FailureKind;
  /** The entry that made the failure known (or flaky), and its reason. */
  readonly listed?: { readonly entry: string; readonly reason: string };
  readonly property?: PropertyFailure;
  readonly evidence: readonly Evidence[];
  readonly evidenceDropped: number;
  readonly cleanupNotes: readonly string[];
}

export interface RunCounts {
  readonly total: number;
  readonly passed: number;
  /** Every case that failed, expected or not: failed + known-failing + flaky + stale. */
  readonly failed: number;
  readonly nonStrict: number;
  readonly info: number;
  readonly skipped: number;
  readonly knownFailing: number;
  readonly flaky: number;
  readonly stale: number;
  /** What makes the run fail: failed + stale (+ non-strict with `strict`). */
  readonly unexpected: number;
  /** Cases never run because the server died. */
  readonly notRun: number;
}

/** Why a run stopped early. */
export interface Abort {
  /** The case during which the server stopped answering. */
  readonly during: string;
  /** The last case that passed before it, if any. */
  readonly lastPassed: string | null;
  /** What the liveness probe saw. */
  readonly probe: string;
  /** Spawn mode: how the process ended and the tail of its output. */
  readonly server?: { readonly exit: string | null; readonly outputTail: string };
  readonly notRun: readonly string[];
}

export interface RunReport {
  readonly suite: '@orbit/conformance';
  readonly baseUrl: string;
  readonly startedAt: string;
  readonly durationMs: number;
  readonly seed: number;
  readonly numRuns: number;
  readonly profile: Profile;
  readonly strict: boolean;
  readonly features: readonly string[];
  readonly only: readonly string[];
  readonly skip: readonly string[];
  /** A note when the configuration check could not be made. */
  readonly preflight: string | null;
  readonly results: readonly CaseResult[];
  readonly counts: RunCounts;
  readonly aborted: Abort | null;
  /** True when nothing unexpected failed and the server lived: the CLI exits 0. */
  readonly ok: boolean;
}

export interface RunOptions {
  readonly cases: readonly ConformanceCase[];
  readonly env: RunEnvironment;
  /** `seed` (default): the seed's rules only; `orbit`: also Orbit's choices and extensions. */
  readonly profile?: Profile;
  /** Case-id patterns (`*` wildcard); all cases of the profile when empty. */
  readonly only?: readonly string[];
  /** Case-id patterns reported as skipped without running. */
  readonly skip?: readonly string[];
  /** SHOULD cases that fail fail the run too. */
  readonly strict?: boolean;
  readonly knownFailing?: readonly KnownFailingEntry[];
  readonly knownFlaky?: readonly KnownFailingEntry[];
  /** Check the welcome's timings against the configuration first (default true). */
  readonly preflight?: boolean;
  /** The server process, in spawn mode (`PreparedTarget.server`, which is undefined otherwise: accepted as it is). */
  readonly server?: ServerWatch | undefined;
  /** Called after each case (progress output). */
  readonly onResult?: (result: CaseResult) => void;
}

function caseTimeout(c: ConformanceCase, env: RunEnvironment): number {
  if (typeof c.timeoutMs === 'function') return c.timeoutMs(env.config.timing);
  return c.timeoutMs ?? env.config.caseTimeoutMs;
}

/** What a case did, before grading. */
export type Raw =
  | { readonly outcome: 'passed' | 'info'; readonly message?: string }
  | { readonly outcome: 'skipped'; readonly message: string }
  | { readonly outcome: 'failed'; readonly message: string; readonly kind: FailureKind; readonly property?: PropertyFailure };

/** Runs a case's body, failing it with a `timeout` failure when it has not finished within `timeoutMs` (client mode too). */
export async function withinTimeout(body: Promise<void>, timeoutMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      body,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new CheckFailure(`the case did not finish within ${timeoutMs} ms`, 'timeout')), timeoutMs);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

async function execute(c: ConformanceCase, ctx: CaseContext, timeoutMs: number): Promise<Raw> {
  try {
    await withinTimeout(c.run(ctx), timeoutMs);
    const violations = ctx.frameViolations();
    if (violations.length > 0) throw new CheckFailure(`the server sent invalid frames:\n${violations.join('\n')}`, 'frames');
    return c.level === 'MAY' ? { outcome: 'info', message: ctx.observations.join('\n') || 'completed' } : { outcome: 'passed' };
  } catch (error) {
    if (error instanceof SkipSignal) return { outcome: 'skipped', message: error.message };
    if (error instanceof CheckFailure)
      return { outcome: 'failed', message: error.message, kind: error.kind, ...(error.property ? { property: error.property } : {}) };
    const stack = (error as Error)?.stack?.split('\n').slice(0, 6).join('\n') ?? String(error);
    return { outcome: 'failed', message: `unexpected error: ${stack}`, kind: 'assert' };
  }
}

/** Grades a raw result by the case's level and the known-failing and known-flaky entries (client mode grades the same way). */
export function grade(
  c: Pick<ConformanceCase, 'id' | 'level'>,
  raw: Raw,
  options: Pick<RunOptions, 'strict' | 'knownFailing' | 'knownFlaky'>,
): Pick<CaseResult, 'outcome' | 'message' | 'listed' | 'failureKind'> {
  const known = entriesFor(options.knownFailing ?? [], c.id);
  if (raw.outcome === 'skipped') return { outcome: 'skipped', message: raw.message };
  if (raw.outcome !== 'failed') {
    const entry = known[0];
    if (!entry) return { outcome: raw.outcome, ...(raw.message ? { message: raw.message } : {}) };
    return {
      outcome: 'stale',
      message: `listed as known-failing (${describeEntry(entry)}: ${entry.reason}) but it passed: remove the entry`,
      listed: { entry: describeEntry(entry), reason: entry.reason },
    };
  }
  const facts = { message: raw.message, kind: raw.kind };
  if (c.level === 'MAY') return { outcome: 'info', message: raw.message, failureKind: raw.kind };
  const entry = known.find((e) => matchesFailure(e, facts));
  if (entry)
    return {
      outcome: 'known-failing',
      message: raw.message,
      failureKind: raw.kind,
      listed: { entry: describeEntry(entry), reason: entry.reason },
    };
  const flaky = entriesFor(options.knownFlaky ?? [], c.id).find((e) => matchesFailure(e, facts));
  if (flaky)
    return { outcome: 'flaky', message: raw.message, failureKind: raw.kind, listed: { entry: describeEntry(flaky), reason: flaky.reason } };
  const differently =
    known.length > 0
      ? `\n(listed as known-failing by ${known.map(describeEntry).join(', ')}, but it failed differently: a new failure)`
      : '';
  const outcome = c.level === 'SHOULD' && !options.strict ? 'non-strict' : 'failed';
  return { outcome, message: raw.message + differently, failureKind: raw.kind };
}

/** The fields of a case's result that come from the case itself (client cases have no kind or features). */
export function base(
  c: Pick<ConformanceCase, 'id' | 'level' | 'title' | 'profile' | 'cites'> & {
    readonly area: string;
    readonly kind?: 'example' | 'property';
    readonly features?: readonly string[];
  },
) {
  return {
    id: c.id,
    area: c.area,
    level: c.level,
    title: c.title,
    profile: c.profile,
    cites: c.cites,
    kind: c.kind ?? 'example',
    features: c.features ?? [],
  } as const;
}

async function runOne(c: ConformanceCase, options: RunOptions): Promise<CaseResult> {
  const env = options.env;
  const nothing = { durationMs: 0, evidence: [], evidenceDropped: 0, cleanupNotes: [] };
  if (matchesAny(c.id, options.skip ?? [])) return { ...base(c), ...nothing, outcome: 'skipped', message: 'skipped by --skip' };
  const missing = (c.features ?? []).filter((f) => !env.config.features.includes(f));
  if (missing.length > 0) return { ...base(c), ...nothing, outcome: 'skipped', message: `feature not declared: ${missing.join(', ')}` };
  const started = Date.now();
  const log = new EvidenceLog();
  const ctx = new CaseContext(env, c.id, log);
  const raw = await execute(c, ctx, caseTimeout(c, env));
  const durationMs = Date.now() - started;
  await ctx.teardown(retireForCleanup);
  const graded = grade(c, raw, options);
  return {
    ...base(c),
    ...graded,
    durationMs,
    ...(raw.outcome === 'failed' && raw.property ? { property: raw.property } : {}),
    evidence: log.items,
    evidenceDropped: log.dropped,
    cleanupNotes: ctx.cleanupNotes,
  };
}

export function countResults(results: readonly CaseResult[], options: { strict?: boolean; notRun?: number } = {}): RunCounts {
  const n = (o: Outcome) => results.filter((r) => r.outcome === o).length;
  const failed = n('failed');
  const stale = n('stale');
  const knownFailing = n('known-failing');
  const flaky = n('flaky');
  const nonStrict = n('non-strict');
  return {
    total: results.length,
    passed: n('passed'),
    failed: failed + knownFailing + flaky + stale,
    nonStrict,
    info: n('info'),
    skipped: n('skipped'),
    knownFailing,
    flaky,
    stale,
    unexpected: failed + stale + (options.strict ? nonStrict : 0),
    notRun: options.notRun ?? 0,
  };
}

/** Selects the cases of `profile` matching the `only` patterns, keeping the catalogue order. */
export function selectCases(cases: readonly ConformanceCase[], only: readonly string[] = [], profile: Profile = 'seed'): ConformanceCase[] {
  return cases.filter((c) => inProfile(c, profile) && (only.length === 0 || matchesAny(c.id, only)));
}

export async function runSuite(options: RunOptions): Promise<RunReport> {
  const profile = options.profile ?? 'seed';
  const ids = options.cases.map((c) => c.id);
  checkEntriesMatch(options.knownFailing ?? [], ids);
  checkEntriesMatch(options.knownFlaky ?? [], ids);
  const selected = selectCases(options.cases, options.only, profile);
  const started = Date.now();
  const preflight = options.preflight === false ? null : await checkConfiguration(options.env);
  const results: CaseResult[] = [];
  let aborted: Abort | null = null;
  let lastPassed: string | null = null;
  for (const [index, c] of selected.entries()) {
    let result = await runOne(c, options);
    if (result.durationMs > 0 || result.outcome !== 'skipped') {
      const liveness = await probeServer(options.env.config.baseUrl, options.server);
      if (!liveness.alive) {
        result = {
          ...result,
          outcome: 'failed',
          failureKind: 'network',
          message:
            `the server stopped answering during this case ` +
            `(${liveness.detail})${result.message ? `; the case reported: ${result.message}` : ''}`,
        };
        aborted = {
          during: c.id,
          lastPassed,
          probe: liveness.detail,
          ...(options.server ? { server: { exit: options.server.exited(), outputTail: options.server.outputTail() } } : {}),
          notRun: selected.slice(index + 1).map((x) => x.id),
        };
      }
    }
    if (result.outcome === 'passed') lastPassed = c.id;
    results.push(result);
    options.onResult?.(result);
    if (aborted) break;
  }
  const counts = countResults(results, { strict: options.strict === true, notRun: aborted?.notRun.length ?? 0 });
  return {
    suite: '@orbit/conformance',
    baseUrl: options.env.config.baseUrl,
    startedAt: new Date(started).toISOString(),
    durationMs: Date.now() - started,
    seed: options.env.seed,
    numRuns: options.env.numRuns,
    profile,
    strict: options.strict === true,
    features: options.env.config.features,
    only: options.only ?? [],
    skip: options.skip ?? [],
    preflight,
    results,
    counts,
    aborted,
    ok: counts.unexpected === 0 && aborted === null,
  };
}

/**
 * @module
 * The runner: cases run one after another (they share one server and one result log), each with
 * its own timeout, evidence and cleanup. Outcomes: passed, failed, skipped (a feature was not
 * declared or the configuration lacks something the case needs), known-failing (failed and listed)
 * and stale (listed but passed, which fails the run).
 */
import { CheckFailure, matchesAny, SkipSignal, type ConformanceCase, type Level } from './case.ts';
import { retireForCleanup } from './cleanup.ts';
import { CaseContext, type RunEnvironment } from './context.ts';
import { EvidenceLog, type Evidence } from './evidence.ts';
import { checkEntriesMatch, knownFailingEntry, type KnownFailingEntry } from './known-failing.ts';

export type Outcome = 'passed' | 'failed' | 'skipped' | 'known-failing' | 'stale';

export interface CaseResult {
  readonly id: string;
  readonly area: string;
  readonly level: Level;
  readonly title: string;
  readonly clause: { readonly section: string; readonly text: string };
  readonly kind: 'example' | 'property';
  readonly features: readonly string[];
  readonly outcome: Outcome;
  readonly durationMs: number;
  /** Why it failed or was skipped; for known-failing, the failure and the listed reason. */
  readonly message?: string;
  readonly knownFailingReason?: string;
  readonly property?: CheckFailure['property'];
  readonly evidence: readonly Evidence[];
  readonly evidenceDropped: number;
  readonly cleanupNotes: readonly string[];
}

export interface RunCounts {
  readonly total: number;
  readonly passed: number;
  /** Every case that did not pass and was not skipped: failed + known-failing + stale. */
  readonly failed: number;
  readonly skipped: number;
  readonly knownFailing: number;
  readonly stale: number;
  /** failed + stale: what makes the run fail. */
  readonly unexpected: number;
}

export interface RunReport {
  readonly suite: '@orbit/conformance';
  readonly baseUrl: string;
  readonly startedAt: string;
  readonly durationMs: number;
  readonly seed: number;
  readonly numRuns: number;
  readonly features: readonly string[];
  readonly only: readonly string[];
  readonly results: readonly CaseResult[];
  readonly counts: RunCounts;
  /** True when nothing unexpected failed: the CLI exits 0. */
  readonly ok: boolean;
}

export interface RunOptions {
  readonly cases: readonly ConformanceCase[];
  readonly env: RunEnvironment;
  /** Case-id patterns (`*` wildcard); all cases when empty. */
  readonly only?: readonly string[];
  readonly knownFailing?: readonly KnownFailingEntry[];
  /** Called after each case (progress output). */
  readonly onResult?: (result: CaseResult) => void;
}

function caseTimeout(c: ConformanceCase, env: RunEnvironment): number {
  if (typeof c.timeoutMs === 'function') return c.timeoutMs(env.config.timing);
  return c.timeoutMs ?? env.config.caseTimeoutMs;
}

async function runOne(c: ConformanceCase, env: RunEnvironment, known: readonly KnownFailingEntry[]): Promise<CaseResult> {
  const started = Date.now();
  const log = new EvidenceLog();
  const base = {
    id: c.id,
    area: c.area,
    level: c.level,
    title: c.title,
    clause: c.clause,
    kind: c.kind ?? 'example',
    features: c.features ?? [],
  } as const;
  const missing = (c.features ?? []).filter((f) => !env.config.features.includes(f));
  if (missing.length > 0) {
    return {
      ...base,
      outcome: 'skipped',
      durationMs: 0,
      message: `feature not declared: ${missing.join(', ')}`,
      evidence: [],
      evidenceDropped: 0,
      cleanupNotes: [],
    };
  }
  const ctx = new CaseContext(env, c, log);
  let outcome: 'passed' | 'failed' | 'skipped' = 'passed';
  let message: string | undefined;
  let property: CheckFailure['property'];
  const timeoutMs = caseTimeout(c, env);
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      c.run(ctx),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new CheckFailure(`the case did not finish within ${timeoutMs} ms`)), timeoutMs);
      }),
    ]);
    const violations = ctx.frameViolations();
    if (violations.length > 0) throw new CheckFailure(`the server sent invalid frames:\n${violations.join('\n')}`);
  } catch (error) {
    if (error instanceof SkipSignal) {
      outcome = 'skipped';
      message = error.message;
    } else {
      outcome = 'failed';
      message = error instanceof CheckFailure ? error.message : `unexpected error: ${(error as Error)?.stack ?? String(error)}`;
      if (error instanceof CheckFailure) property = error.property;
    }
  } finally {
    clearTimeout(timer);
  }
  const durationMs = Date.now() - started;
  await ctx.teardown(retireForCleanup);
  const entry = outcome === 'skipped' ? undefined : knownFailingEntry(known, c.id);
  let final: Outcome = outcome;
  if (entry && outcome === 'failed') final = 'known-failing';
  if (entry && outcome === 'passed') {
    final = 'stale';
    message = `listed as known-failing (line ${entry.line}: ${entry.reason}) but it passed: remove the entry`;
  }
  return {
    ...base,
    outcome: final,
    durationMs,
    ...(message !== undefined ? { message } : {}),
    ...(entry ? { knownFailingReason: entry.reason } : {}),
    ...(property ? { property } : {}),
    evidence: log.items,
    evidenceDropped: log.dropped,
    cleanupNotes: ctx.cleanupNotes,
  };
}

export function countResults(results: readonly CaseResult[]): RunCounts {
  const n = (o: Outcome) => results.filter((r) => r.outcome === o).length;
  const failed = n('failed');
  const stale = n('stale');
  const knownFailing = n('known-failing');
  return {
    total: results.length,
    passed: n('passed'),
    failed: failed + stale + knownFailing,
    skipped: n('skipped'),
    knownFailing,
    stale,
    unexpected: failed + stale,
  };
}

/** Selects cases by `only` patterns, keeping the catalogue order. */
export function selectCases(cases: readonly ConformanceCase[], only: readonly string[] = []): ConformanceCase[] {
  return only.length === 0 ? [...cases] : cases.filter((c) => matchesAny(c.id, only));
}

export async function runSuite(options: RunOptions): Promise<RunReport> {
  const known = options.knownFailing ?? [];
  checkEntriesMatch(
    known,
    options.cases.map((c) => c.id),
  );
  const selected = selectCases(options.cases, options.only);
  const started = Date.now();
  const results: CaseResult[] = [];
  for (const c of selected) {
    const result = await runOne(c, options.env, known);
    results.push(result);
    options.onResult?.(result);
  }
  const counts = countResults(results);
  return {
    suite: '@orbit/conformance',
    baseUrl: options.env.config.baseUrl,
    startedAt: new Date(started).toISOString(),
    durationMs: Date.now() - started,
    seed: options.env.seed,
    numRuns: options.env.numRuns,
    features: options.env.config.features,
    only: options.only ?? [],
    results,
    counts,
    ok: counts.unexpected === 0,
  };
}

/**
 * @module
 * Client mode's runner: each selected case gets a fresh scripted server and a fresh state
 * directory, runs with its own timeout, and is graded exactly as server mode grades (`grade` of
 * ../runner.ts: MUST, SHOULD and MAY levels, the known-failing ratchet and the known-flaky list),
 * so the reports, the summary and the exit codes are server mode's too. A frame that is not a
 * valid client frame, or a stdout line that is not a harness report, fails the case it came in.
 */
import { CheckFailure, SkipSignal } from '../errors.ts';
import { EvidenceLog } from '../evidence.ts';
import { checkEntriesMatch, type KnownFailingEntry } from '../known-failing.ts';
import { matchesAny } from '../patterns.ts';
import { base, type CaseResult, countResults, grade, type Raw, type RunReport, withinTimeout } from '../runner.ts';
import { type ClientCase, ClientCaseContext, type ClientEnvironment } from './case.ts';

export interface ClientRunOptions {
  readonly cases: readonly ClientCase[];
  readonly env: ClientEnvironment;
  readonly only?: readonly string[];
  readonly skip?: readonly string[];
  readonly strict?: boolean;
  readonly knownFailing?: readonly KnownFailingEntry[];
  readonly knownFlaky?: readonly KnownFailingEntry[];
  /** What the report names as the target (the client's command). */
  readonly target: string;
  readonly onResult?: (result: CaseResult) => void;
  /**
   * Cases run at once (default 1). Each case has its own server, port and state, so they do not
   * share anything; but the timing cases (heartbeat, Retry-After) want a machine that is not busy.
   */
  readonly concurrency?: number;
}

async function execute(c: ClientCase, ctx: ClientCaseContext, timeoutMs: number): Promise<Raw> {
  try {
    await withinTimeout(c.run(ctx), timeoutMs);
    const violations = ctx.violations();
    if (violations.length > 0)
      throw new CheckFailure(`the client sent invalid frames or report lines:\n${violations.join('\n')}`, 'frames');
    return c.level === 'MAY' ? { outcome: 'info', message: 'completed' } : { outcome: 'passed' };
  } catch (error) {
    if (error instanceof SkipSignal) return { outcome: 'skipped', message: error.message };
    const tail = ctx.programs.at(-1)?.stderrTail().trim();
    const stderr = tail ? `\nthe client's stderr (tail):\n${tail.split('\n').slice(-12).join('\n')}` : '';
    if (error instanceof CheckFailure) return { outcome: 'failed', message: error.message + stderr, kind: error.kind };
    const stack = (error as Error)?.stack?.split('\n').slice(0, 6).join('\n') ?? String(error);
    return { outcome: 'failed', message: `unexpected error: ${stack}${stderr}`, kind: 'assert' };
  }
}

async function runOne(c: ClientCase, options: ClientRunOptions): Promise<CaseResult> {
  if (matchesAny(c.id, options.skip ?? []))
    return {
      ...base(c),
      outcome: 'skipped',
      message: 'skipped by --skip',
      durationMs: 0,
      evidence: [],
      evidenceDropped: 0,
      cleanupNotes: [],
    };
  const started = Date.now();
  const log = new EvidenceLog();
  const ctx = new ClientCaseContext(options.env, c.id, log);
  const raw = await execute(c, ctx, c.timeoutMs ?? options.env.caseTimeoutMs);
  const durationMs = Date.now() - started;
  await ctx.teardown();
  return { ...base(c), ...grade(c, raw, options), durationMs, evidence: log.items, evidenceDropped: log.dropped, cleanupNotes: [] };
}

/** Runs the client cases one after another and reports as server mode does. */
export async function runClientSuite(options: ClientRunOptions): Promise<RunReport> {
  const ids = options.cases.map((c) => c.id);
  checkEntriesMatch(options.knownFailing ?? [], ids);
  checkEntriesMatch(options.knownFlaky ?? [], ids);
  const selected = options.cases.filter((c) => (options.only ?? []).length === 0 || matchesAny(c.id, options.only ?? []));
  const started = Date.now();
  const results: CaseResult[] = new Array(selected.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < selected.length) {
      const index = next++;
      const result = await runOne(selected[index]!, options);
      results[index] = result;
      options.onResult?.(result);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, options.concurrency ?? 1) }, worker));
  const counts = countResults(results, { strict: options.strict === true });
  return {
    suite: '@orbit/conformance',
    baseUrl: options.target,
    startedAt: new Date(started).toISOString(),
    durationMs: Date.now() - started,
    seed: 0,
    numRuns: 0,
    profile: 'orbit',
    strict: options.strict === true,
    features: [],
    only: options.only ?? [],
    skip: options.skip ?? [],
    preflight: null,
    results,
    counts,
    aborted: null,
    ok: counts.unexpected === 0,
  };
}

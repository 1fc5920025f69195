/**
 * @module
 * The ground floor of what a case works with (`CaseContext`, see context.ts): the run's environment,
 * credentials and queues by role, the waits derived from the declared timing, the evidence log a
 * case's traffic lands in, and checks that fail with a readable message. Values are checked with
 * the generated validators of `@orbit/generated`; nothing here restates a shape of the contract.
 */
import * as generated from '@orbit/generated';
import type { DeliverFrame, Validator } from '@orbit/generated';
import type { Role, SuiteConfig, Timing } from './config.ts';
import { CheckFailure, SkipSignal } from './errors.ts';
import { EvidenceLog } from './evidence.ts';
import type { Received } from './frames.ts';
import { randomId } from './ids.ts';

/** The resolved environment of one run: a configuration with its credentials and queues filled in. */
export interface RunEnvironment {
  readonly config: SuiteConfig;
  /** Values for `{placeholders}` in commands (`port`, `tmpdir`). */
  readonly vars: Readonly<Record<string, string>>;
  /** The run's seed; each property derives its own from it and the case id. */
  readonly seed: number;
  readonly numRuns: number;
  /** A short random tag that makes names and idempotency keys unique per run. */
  readonly runTag: string;
}

let counter = 0;

/** The name of a generated validator, for messages (`validateSubscription` -> `Subscription`). */
const VALIDATOR_NAMES = new Map<unknown, string>(
  Object.entries(generated)
    .filter(([name]) => name.startsWith('validate'))
    .map(([name, fn]) => [fn, name.slice('validate'.length)]),
);

/** JSON text with sorted member names, for order-independent comparison. */
export function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'undefined';
}

/** Environment, configuration, timing, evidence and checks: what every part of a case's context shares. */
export class ContextBase {
  readonly config: SuiteConfig;
  readonly timing: Timing;
  /** The log the case's traffic goes to now (a property run has its own). */
  protected currentLog: EvidenceLog;
  /** Problems found while cleaning up (reported, never a failure). */
  readonly cleanupNotes: string[] = [];
  /** What a MAY case observed (its `info` outcome), or a remark of any case. */
  readonly observations: string[] = [];

  constructor(
    readonly env: RunEnvironment,
    readonly caseId: string,
    readonly evidence: EvidenceLog = new EvidenceLog(),
  ) {
    this.config = env.config;
    this.timing = env.config.timing;
    this.currentLog = evidence;
    this.redactInto(evidence);
  }

  protected redactInto(log: EvidenceLog): void {
    for (const [role, credential] of Object.entries(this.config.credentials))
      if (credential) log.redact(credential.token, `<token:${role}>`);
  }

  get log(): EvidenceLog {
    return this.currentLog;
  }

  /** Runs `fn` with its traffic recorded in `log` instead of the case's evidence. */
  async withEvidence<T>(log: EvidenceLog, fn: () => Promise<T>): Promise<T> {
    const previous = this.currentLog;
    this.currentLog = log;
    try {
      return await fn();
    } finally {
      this.currentLog = previous;
    }
  }

  // --- configuration ------------------------------------------------------------------------

  get queue(): string {
    return this.config.queues.primary!;
  }

  /** A second queue of the full credential; skips the case when none is configured. */
  get secondaryQueue(): string {
    return this.config.queues.secondary ?? this.skip('the configuration has no queues.secondary');
  }

  get otherNamespaceQueue(): string {
    return this.config.queues.otherNamespace ?? this.skip('the configuration has no queues.otherNamespace');
  }

  token(role: Role): string {
    return this.config.credentials[role]?.token ?? this.skip(`the configuration has no credentials.${role}`);
  }

  credentialId(role: Role): string | undefined {
    return this.config.credentials[role]?.credentialId;
  }

  skip(reason: string): never {
    throw new SkipSignal(reason);
  }

  /** Records what the case observed: the message of an `info` outcome. */
  observe(text: string): void {
    this.observations.push(text);
    this.log.note(`observed: ${text}`);
  }

  /** A subscription name unique to this run. */
  name(prefix = 'cf'): string {
    return `${prefix}-${this.env.runTag}-${++counter}`;
  }

  /** An Idempotency-Key unique to this run, so that a rerun against the same server never replays it. */
  key(prefix = 'cf'): string {
    return `${prefix}-${this.env.runTag}-${randomId()}`;
  }

  /** Time to wait for a reply frame or a state change that should be immediate. */
  get replyMs(): number {
    return Math.max(5_000, this.timing.writeTimeoutMs);
  }

  /** Time to wait for a delivery of a freshly published result. */
  get deliverMs(): number {
    return 10_000;
  }

  /** How long "nothing happens" is observed; shorter than a lease so no expiry interferes. */
  get quietMs(): number {
    return Math.max(100, Math.min(this.timing.quietMs, Math.floor(this.timing.leaseDurationMs * 0.6)));
  }

  /**
   * A "nothing happens" window that ends before the lease of `deliver` could run out (so a
   * legitimate redelivery never counts against the server); 0 when too little time is left.
   */
  quietWithinLease(deliver: Received<DeliverFrame>): number {
    const left = deliver.$at + Math.floor(this.timing.leaseDurationMs * 0.8) - Date.now();
    const ms = Math.max(0, Math.min(this.quietMs, left));
    if (ms < this.quietMs) this.log.note(`quiet window shortened to ${ms} ms to stay within the lease`);
    return ms;
  }

  /** Upper bound for an expired lease to be recovered and offered again. */
  get redeliveryMs(): number {
    return 2 * this.timing.leaseDurationMs + this.timing.redeliveryBackoffMs + 5_000;
  }

  /**
   * Skips the case when the lease the server actually granted (its `lease_until`, read against
   * the deliver frame's arrival) runs out later than the case can wait: a case that waits for an
   * expiry could otherwise only time out, or pass without testing anything.
   */
  requireLeaseWithin(deliver: Received<DeliverFrame>, budgetMs: number): void {
    const until = Date.parse(deliver.body.delivery.lease_until ?? '');
    const lease = Number.isFinite(until) ? until - Date.parse(deliver.body.delivery.created_at) : Number.NaN;
    const granted = Math.max(Number.isFinite(lease) ? lease : 0, 0);
    if (granted > budgetMs)
      this.skip(
        `the server granted a lease of about ${granted} ms (lease_until ${deliver.body.delivery.lease_until}); this case can wait ` +
          `${budgetMs} ms: ` +
          `start the server with a shorter lease and set timing.leaseDurationMs to it`,
      );
  }

  // --- checks -------------------------------------------------------------------------------

  check(condition: unknown, message: string): asserts condition {
    if (!condition) throw new CheckFailure(message);
  }

  /** Deep equality of JSON values (member order does not matter). */
  equal(actual: unknown, expected: unknown, what: string): void {
    if (canonical(actual) !== canonical(expected))
      throw new CheckFailure(`${what}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`);
  }

  /** Checks `value` against a generated validator (`validateSubscription`, ...). */
  validate<T>(validator: Validator<T>, value: unknown, what: string): asserts value is T {
    if (validator(value)) return;
    const e = validator.errors?.[0];
    throw new CheckFailure(
      `${what} does not match ${VALIDATOR_NAMES.get(validator) ?? 'the schema'}: ${e?.instancePath || '(root)'} ${e?.message ?? ''}: ` +
        `${JSON.stringify(value)?.slice(0, 400)}`,
    );
  }

  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => setTimeout(resolve, ms));
  }

  /** Polls `probe` until it returns a truthy value; fails after `timeoutMs` naming `what`. */
  async eventually<T>(probe: () => Promise<T | null | undefined | false>, timeoutMs: number, what: string, intervalMs = 100): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = await probe();
      if (value) return value;
      if (Date.now() > deadline) throw new CheckFailure(`timed out after ${timeoutMs} ms waiting for ${what}`);
      await this.sleep(intervalMs);
    }
  }
}

/**
 * @module
 * Jittered exponential backoff, shared by the management client's retries and the consumer's
 * reconnects.
 */

export interface BackoffOptions {
  /** Delay before the first retry, before jitter (ms). */
  readonly initialDelayMs?: number;
  /** Upper bound of any delay (ms). */
  readonly maxDelayMs?: number;
  /** Growth factor per attempt. */
  readonly multiplier?: number;
  /**
   * Fraction of the delay that is random, 0..1: the delay is uniformly drawn from
   * `[base * (1 - jitter), base]`. 0 is no jitter; 1 is "full jitter".
   */
  readonly jitter?: number;
  /** Source of randomness in [0, 1) (tests make it deterministic). */
  readonly random?: () => number;
}

export type ResolvedBackoff = Required<BackoffOptions>;

export function resolveBackoff(options: BackoffOptions | undefined, defaults: Omit<ResolvedBackoff, 'random'>): ResolvedBackoff {
  const resolved: ResolvedBackoff = {
    initialDelayMs: options?.initialDelayMs ?? defaults.initialDelayMs,
    maxDelayMs: options?.maxDelayMs ?? defaults.maxDelayMs,
    multiplier: options?.multiplier ?? defaults.multiplier,
    jitter: options?.jitter ?? defaults.jitter,
    random: options?.random ?? Math.random,
  };
  for (const key of ['initialDelayMs', 'maxDelayMs', 'multiplier'] as const) {
    if (!Number.isFinite(resolved[key]) || resolved[key] < 0) throw new RangeError(`backoff ${key} must be a non-negative number`);
  }
  if (!(resolved.jitter >= 0 && resolved.jitter <= 1)) throw new RangeError('backoff jitter must be between 0 and 1');
  return resolved;
}

/** The delay before retry number `attempt` (0 for the first retry). */
export function backoffDelay(attempt: number, options: ResolvedBackoff): number {
  const base = Math.min(options.maxDelayMs, options.initialDelayMs * options.multiplier ** Math.max(0, attempt));
  return Math.max(0, Math.round(base * (1 - options.jitter * options.random())));
}

/** The longest Retry-After the SDK honours (s); longer values are capped. */
const MAX_RETRY_AFTER_S = 60;

/**
 * A `Retry-After` header in ms: delay-seconds only (the contract's servers send `1`), capped at
 * 60 s; undefined when there is none or it is not a number of seconds. The management client's
 * retries and the consumer's reconnects both wait at least this long.
 */
export function retryAfterMs(header: string | null | undefined): number | undefined {
  const value = header?.trim();
  if (value === undefined || !/^[0-9]{1,9}$/.test(value)) return undefined;
  return Math.min(Number(value), MAX_RETRY_AFTER_S) * 1000;
}

/** Waits `ms`; resolves early (never rejects) when `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

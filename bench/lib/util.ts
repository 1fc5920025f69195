/**
 * @module
 * Small helpers shared by the benchmark sections: bounded waiting, statistics, formatting.
 * Every wait in the benchmark goes through `waitFor` or `withTimeout`, so no loop is unbounded.
 */

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Monotonic milliseconds. */
export function now(): number {
  return performance.now();
}

/** Rejects when `promise` does not settle within `ms`. */
export async function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Polls `check` every `everyMs` until it is truthy; throws after `timeoutMs`. */
export async function waitFor<T>(
  check: () => T | undefined | null | false | Promise<T | undefined | null | false>,
  timeoutMs: number,
  what: string,
  everyMs = 10,
): Promise<T> {
  const deadline = now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}

export function median(values: readonly number[]): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Nearest-rank percentile (p in 0..100) of unsorted values. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1]!;
}

/** A number with a sensible number of significant digits for a table cell. */
export function fmt(value: number, digits = 3): string {
  if (!Number.isFinite(value)) return '—';
  const abs = Math.abs(value);
  if (abs >= 1000) return Math.round(value).toLocaleString('en-US');
  if (abs >= 100) return value.toFixed(0);
  if (abs >= 10) return value.toFixed(digits >= 3 ? 1 : 0);
  if (abs >= 1) return value.toFixed(digits >= 3 ? 2 : 1);
  return value.toFixed(digits);
}

/** A 32-character lower-case hex id from a prefix number and a counter (cheap, unique per run). */
export function hexId(prefix: number, counter: number): string {
  return (prefix.toString(16).padStart(8, '0') + counter.toString(16).padStart(24, '0')).slice(-32);
}

export function randomHex(bytes = 16): string {
  let out = '';
  for (let i = 0; i < bytes; i++)
    out += Math.floor(Math.random() * 256)
      .toString(16)
      .padStart(2, '0');
  return out;
}

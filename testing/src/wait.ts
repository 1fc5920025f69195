/**
 * @module
 * One polling wait for conditions that become true asynchronously (a delivery row, a metric, a
 * node's view of the cluster).
 */

/** Waits until `check` returns a truthy value, polling; fails after `timeoutMs`. */
export async function eventually<T>(
  check: () => Promise<T | undefined | null | false> | T | undefined | null | false,
  timeoutMs = 10_000,
  what = 'condition',
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/**
 * @module
 * Periodic retention, the decision (pure): given the log position, the limits and the oldest
 * results above the boundary, where the new boundary goes. A result is removed when it is older
 * than `maxAgeMs` or outside the newest `maxResults`; the boundary is a prefix of the log, so age
 * retention stops at the first result that is young enough. 0 turns a limit off.
 */

export interface RetentionInput {
  readonly head: bigint;
  readonly boundary: bigint;
  readonly maxResults: number;
  readonly maxAgeMs: number;
  readonly now: number;
  /** The oldest results above the boundary, ascending (empty when age retention is off). */
  readonly oldest: readonly { readonly sequence: bigint; readonly occurredAt: number }[];
  /** Whether `oldest` was cut at its limit (more rows may follow). */
  readonly oldestTruncated: boolean;
}

export interface RetentionPlan {
  /** `prune(beforeSequence)`, or null when the boundary stays. */
  readonly beforeSequence: bigint | null;
  /** Whether age retention may move the boundary further at once (the page was all old). */
  readonly more: boolean;
}

export function retentionEnabled(limits: { maxResults: number; maxAgeMs: number }): boolean {
  return limits.maxResults > 0 || limits.maxAgeMs > 0;
}

export function planRetention(input: RetentionInput): RetentionPlan {
  let target = input.boundary;
  let more = false;
  if (input.maxResults > 0) {
    const keepFrom = input.head - BigInt(input.maxResults);
    if (keepFrom > target) target = keepFrom;
  }
  if (input.maxAgeMs > 0) {
    const cutoff = input.now - input.maxAgeMs;
    let last: bigint | null = null;
    let allOld = true;
    for (const row of input.oldest) {
      if (row.occurredAt >= cutoff) {
        allOld = false;
        break;
      }
      last = row.sequence;
    }
    if (last !== null && last > target) target = last;
    more = allOld && input.oldestTruncated && input.oldest.length > 0;
  }
  if (target > input.head) target = input.head;
  return { beforeSequence: target > input.boundary ? target + 1n : null, more };
}

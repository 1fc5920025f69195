/**
 * @module
 * Results of the log read ahead (spec/README.md, "The delivery engine"): a turn that reads the log
 * reads a little more than its sessions have room for, and the subscription's next turns on this
 * node lease from what it kept instead of reading again. A result set costs mostly per statement,
 * not per row, so a subscription whose sessions take one or a few at a time reads the log once
 * every few turns.
 *
 * What was read stays true: committed results up to the head never change, and a subscription's
 * cursor only moves forward. So a range of the log read once, with every matching result in it,
 * answers any later turn whose cursor lies inside it, whichever node moved the cursor there.
 */

/** A result of the log as read ahead: ordered by its sequence. */
export interface Sequenced {
  readonly sequence: bigint;
}

/** Every matching result of a subscription's log with a sequence in (`after`, `through`], in order. */
export interface ReadAhead<R extends Sequenced> {
  readonly after: bigint;
  readonly through: bigint;
  readonly results: readonly R[];
}

/** What a subscription keeps at most: results, and their size by `size`. */
export interface AheadBounds<R> {
  readonly count: number;
  readonly size: number;
  readonly sizeOf: (result: R) => number;
}

/** The results of `ahead` after `cursor`, or null when `ahead` does not cover the log from there. */
export function aheadOf<R extends Sequenced>(ahead: ReadAhead<R> | null | undefined, cursor: bigint): readonly R[] | null {
  if (!ahead || cursor < ahead.after || cursor > ahead.through) return null;
  return ahead.results.filter((r) => r.sequence > cursor);
}

/**
 * What a read of the log after `after`, of at most `limit` matching results in order, covers once
 * the results beyond `head` (the head the turn decides with) are left out: a full read covers up to
 * its last result, a short one up to the head.
 */
export function covered<R extends Sequenced>(read: readonly R[], limit: number, head: bigint, after: bigint): ReadAhead<R> {
  const last = read[read.length - 1];
  const through = read.length >= limit && last !== undefined && last.sequence < head ? last.sequence : head;
  return { after, through, results: read.filter((r) => r.sequence <= head) };
}

/**
 * What the next turns keep of `read` once the cursor is at `cursor`: the results after it, within
 * `bounds`; null when nothing is left to keep. What is not kept is not covered: the next turn reads
 * the log from the last result kept.
 */
export function keptAhead<R extends Sequenced>(read: ReadAhead<R>, cursor: bigint, bounds: AheadBounds<R>): ReadAhead<R> | null {
  if (cursor < read.after || cursor >= read.through) return null;
  const results: R[] = [];
  let size = 0;
  let through = read.through;
  for (const r of read.results) {
    if (r.sequence <= cursor) continue;
    size += bounds.sizeOf(r);
    if (results.length === bounds.count || size > bounds.size) {
      through = results[results.length - 1]?.sequence ?? cursor;
      break;
    }
    results.push(r);
  }
  return results.length === 0 ? null : { after: cursor, through, results };
}

/**
 * How many results beyond what it needs the next read of the log takes: as many as `bounds` could
 * keep, judged by the largest result of this read (`previous` when it read none), so that a log of
 * large results is not read many rows at a time only for none of them to be kept.
 */
export function aheadCount<R>(read: readonly R[], bounds: AheadBounds<R>, previous: number): number {
  if (read.length === 0) return previous;
  let largest = 0;
  for (const r of read) largest = Math.max(largest, bounds.sizeOf(r));
  return largest === 0 ? bounds.count : Math.min(bounds.count, Math.floor(bounds.size / largest));
}

/**
 * @module
 * History retention (spec/README.md, Retention). Pruning below N moves the retention boundary to
 * N - 1 first, then deletes old results in bounded batches, each its own short transaction. The
 * event of a delivery that is not ACKED is never deleted.
 *
 * A turn of the delivery engine reads the boundary without a lock; on MySQL a turn that read the
 * old boundary could still be materializing deliveries for results a batch is about to delete.
 * Each batch therefore first locks the rows of the subscriptions whose cursor is below the batch
 * (a turn holds its subscription's row for its whole transaction): it waits for such a turn to
 * commit, so its new deliveries are seen when the batch looks for the sequences to keep, and every
 * later turn sees the new boundary and stops with EVENT_HISTORY_EXPIRED. SQLite has one writer, so
 * the question does not arise.
 *
 * Publish receipts refer to their results, so a replay of a pruned one answers
 * EVENT_HISTORY_EXPIRED; the batch that deletes results also scrubs the receipts of earlier
 * releases that embed them (`idempotency.ts`), so no pruned payload stays behind in a receipt.
 */
import { OrbitError } from '@orbit/spec/errors';
import { scrubReceipts } from './idempotency.ts';
import { logPosition } from './results.ts';
import type { Database, Sql } from './sql.ts';
import { big, certifiedLock, num, pendingState } from './sql.ts';

export interface PruneReport {
  readonly boundary: string;
  readonly deleted: number;
  /** Publish receipts of earlier releases whose embedded result was deleted, scrubbed in the same transactions. */
  readonly receipts_scrubbed: number;
  /** Whether deletion stopped at `maxBatches` with results left to delete below the boundary. */
  readonly more?: boolean;
}

export interface PruneOptions {
  /** Results deleted per transaction (default 1000). */
  readonly batchSize?: number;
  /** Stop after this many batches (default: until done); `more` says whether anything is left. */
  readonly maxBatches?: number;
}

const BATCH = 1000;

export async function prune(db: Database, beforeSequence: bigint, options: PruneOptions = {}): Promise<PruneReport> {
  if (beforeSequence < 1n) throw new OrbitError('INVALID_ARGUMENT', 'before-sequence must be at least 1');
  const batch = Math.max(1, Math.trunc(options.batchSize ?? BATCH));
  const boundary = await db.transaction(async (tx) => {
    const position = await logPosition(tx, true);
    const wanted = beforeSequence - 1n;
    if (wanted > position.head)
      throw new OrbitError('INVALID_ARGUMENT', `before-sequence ${beforeSequence} is beyond the committed head ${position.head} + 1`);
    if (wanted <= position.boundary) return position.boundary;
    await tx.run('UPDATE result_head SET retention_boundary = ? WHERE id = 1', [wanted.toString()]);
    return wanted;
  });
  let deleted = 0;
  let scrubbed = 0;
  let after = -1n;
  for (let round = 0; ; round++) {
    if (options.maxBatches !== undefined && round >= options.maxBatches)
      return { boundary: boundary.toString(), deleted, receipts_scrubbed: scrubbed, more: true };
    const removed = await db.transaction(async (tx) => {
      const rows = await tx.all(`SELECT sequence FROM results WHERE sequence > ? AND sequence <= ? ORDER BY sequence LIMIT ${batch}`, [
        after.toString(),
        boundary.toString(),
      ]);
      if (rows.length === 0) return null;
      const last = big(rows[rows.length - 1]!.sequence);
      // Turns that were materializing have committed once these locks are held: their deliveries count below.
      if (tx.dialect === 'mysql') await lockLaggingSubscriptions(tx, last);
      const kept = await unacknowledgedSequences(tx, after, last);
      const sequences = rows
        .map((r) => big(r.sequence))
        .filter((sequence) => !kept.has(sequence))
        .map(String);
      if (sequences.length > 0) await tx.run(`DELETE FROM results WHERE sequence IN (${sequences.map(() => '?').join(', ')})`, sequences);
      return { count: sequences.length, scrubbed: await scrubReceipts(tx, sequences), last };
    });
    if (!removed) break;
    deleted += removed.count;
    scrubbed += removed.scrubbed;
    after = removed.last;
  }
  return { boundary: boundary.toString(), deleted, receipts_scrubbed: scrubbed };
}

/**
 * The sequences in (`after`, `upTo`] that a delivery that is not ACKED names: their events stay.
 * Such deliveries are few (at most max_pending per subscription, and only subscriptions whose
 * `pending_count` says they have any): read from the work index, not from the whole history.
 */
async function unacknowledgedSequences(tx: Sql, after: bigint, upTo: bigint): Promise<Set<bigint>> {
  const rows = await tx.all(
    `SELECT d.sequence FROM subscriptions s JOIN deliveries d${tx.phrases.useIndex('deliveries_work')}
        ON d.subscription_id = s.id AND ${pendingState('d.state')}
      WHERE s.pending_count > 0 AND d.sequence > ? AND d.sequence <= ?`,
    [after.toString(), upTo.toString()],
  );
  return new Set(rows.map((r) => big(r.sequence)));
}

/**
 * Locks (in id order) the non-retired subscriptions whose cursor is below `upTo`; true if any. On
 * Galera a claim on another node does not wait for this lock, but it changes the subscription row
 * when it materializes, so `certifiedLock` makes the two conflict: one of them runs again.
 */
async function lockLaggingSubscriptions(tx: Sql, upTo: bigint): Promise<void> {
  const rows = await tx.all(
    `SELECT id FROM subscriptions WHERE retired_at IS NULL AND cursor_sequence < ? ORDER BY id${tx.phrases.forUpdate}`,
    [upTo.toString()],
  );
  await certifiedLock(
    tx,
    'subscriptions',
    rows.map((r) => String(r.id)),
  );
}

/**
 * The results just above the boundary, oldest first: what periodic retention by age looks at
 * (`ops/retention-policy.ts` decides). Reads at most `limit` rows through the primary key.
 */
export async function oldestResults(db: Sql, after: bigint, limit: number): Promise<{ sequence: bigint; occurredAt: number }[]> {
  const rows = await db.all(`SELECT sequence, occurred_at FROM results WHERE sequence > ? ORDER BY sequence LIMIT ${Math.trunc(limit)}`, [
    after.toString(),
  ]);
  return rows.map((r) => ({ sequence: big(r.sequence), occurredAt: num(r.occurred_at) }));
}

/**
 * @module
 * History retention (brief decision 5). Pruning below N moves the retention boundary to N - 1
 * first, then deletes old results in bounded batches, each its own short transaction. The event of
 * a delivery that is not ACKED is never deleted.
 *
 * A claim reads the boundary without a lock; on MySQL a claim that read the old boundary could
 * still be materializing deliveries for results a batch is about to delete. Each batch therefore
 * first locks the rows of the subscriptions whose cursor is below the batch (claims lock their
 * subscription row for their whole transaction): it waits for such a claim to commit, so its new
 * deliveries are visible to the `NOT EXISTS` check, and every later claim sees the new boundary
 * and stops with EVENT_HISTORY_EXPIRED. SQLite has one writer, so the question does not arise.
 *
 * The batch that deletes results also scrubs the publish receipts that embed them
 * (`idempotency.ts`), so no pruned payload stays behind in a receipt.
 */
import { OrbitError } from '@orbit/spec/errors';
import { scrubReceipts } from './idempotency.ts';
import { logPosition } from './results.ts';
import type { Database, Sql } from './sql.ts';
import { big, certifiedLock, num, pendingState, PHRASES } from './sql.ts';

export interface PruneReport {
  readonly boundary: string;
  readonly deleted: number;
  /** Publish receipts whose embedded result was deleted, scrubbed in the same transactions. */
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
      const rows = await tx.all(
        `SELECT r.sequence FROM results r WHERE r.sequence > ? AND r.sequence <= ?
           AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.sequence = r.sequence AND ${pendingState('d.state')})
         ORDER BY r.sequence LIMIT ${batch}`,
        [after.toString(), boundary.toString()],
      );
      if (rows.length === 0) return null;
      const last = big(rows[rows.length - 1]!.sequence);
      if (tx.dialect === 'mysql' && (await lockLaggingSubscriptions(tx, last))) {
        // Claims that were materializing have committed: check the batch again against them.
        const still = await tx.all(
          `SELECT r.sequence FROM results r WHERE r.sequence > ? AND r.sequence <= ?
             AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.sequence = r.sequence AND ${pendingState('d.state')})
           ORDER BY r.sequence LIMIT ${batch}`,
          [after.toString(), last.toString()],
        );
        rows.splice(0, rows.length, ...still);
      }
      const sequences = rows.map((r) => big(r.sequence).toString());
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
 * Locks (in id order) the non-retired subscriptions whose cursor is below `upTo`; true if any. On
 * Galera a claim on another node does not wait for this lock, but it changes the subscription row
 * when it materializes, so `certifiedLock` makes the two conflict: one of them runs again.
 */
async function lockLaggingSubscriptions(tx: Sql, upTo: bigint): Promise<boolean> {
  const rows = await tx.all(
    `SELECT id FROM subscriptions WHERE retired_at IS NULL AND cursor_sequence < ? ORDER BY id${PHRASES[tx.dialect].forUpdate}`,
    [upTo.toString()],
  );
  await certifiedLock(
    tx,
    'subscriptions',
    rows.map((r) => String(r.id)),
  );
  return rows.length > 0;
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

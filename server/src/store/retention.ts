/**
 * @module
 * History retention (brief decision 5). Pruning below N moves the retention boundary to N - 1
 * first, then deletes old results in bounded batches, each its own short transaction. The event of
 * a delivery that is not ACKED is never deleted.
 */
import { OrbitError } from '@orbit/spec/errors';
import { logPosition } from './results.ts';
import type { Database } from './sql.ts';
import { big } from './sql.ts';

export interface PruneReport {
  readonly boundary: string;
  readonly deleted: number;
}

const BATCH = 1000;

export async function prune(db: Database, beforeSequence: bigint): Promise<PruneReport> {
  if (beforeSequence < 1n) throw new OrbitError('INVALID_ARGUMENT', 'before-sequence must be at least 1');
  const boundary = await db.transaction(async (tx) => {
    const position = await logPosition(tx, true);
    const wanted = beforeSequence - 1n;
    if (wanted > position.head) throw new OrbitError('INVALID_ARGUMENT', `before-sequence ${beforeSequence} is beyond the committed head ${position.head} + 1`);
    if (wanted <= position.boundary) return position.boundary;
    await tx.run('UPDATE result_head SET retention_boundary = ? WHERE id = 1', [wanted.toString()]);
    return wanted;
  });
  let deleted = 0;
  let after = -1n;
  for (;;) {
    const removed = await db.transaction(async (tx) => {
      const rows = await tx.all(
        `SELECT r.sequence FROM results r WHERE r.sequence > ? AND r.sequence <= ?
           AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.sequence = r.sequence AND d.state <> 'ACKED')
         ORDER BY r.sequence LIMIT ${BATCH}`,
        [after.toString(), boundary.toString()],
      );
      if (rows.length === 0) return null;
      const sequences = rows.map((r) => big(r.sequence).toString());
      await tx.run(`DELETE FROM results WHERE sequence IN (${sequences.map(() => '?').join(', ')})`, sequences);
      return { count: rows.length, last: big(rows[rows.length - 1]!.sequence) };
    });
    if (!removed) break;
    deleted += removed.count;
    after = removed.last;
  }
  return { boundary: boundary.toString(), deleted };
}

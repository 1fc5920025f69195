/**
 * @module
 * The background lease sweep (spec/rules.md#s4-28 names it as missing; spec/README.md, A delivery's
 * life). Claims recover expired leases of the subscription they claim for; this sweep recovers them
 * everywhere else too — paused subscriptions, subscriptions nobody consumes — so the delivery list
 * never shows a lease that ran out as LEASED for longer than one sweep interval.
 *
 * The decision is `recoverExpiredLease` (PENDING while attempts remain, else EXPIRED); this file
 * only finds candidates and writes the decision with `WHERE id = ? AND revision = ?`, so several
 * nodes (and concurrent claims, which recover too) can sweep at once: a row that changed meanwhile
 * is simply skipped. Batches are bounded.
 */
import { recoverExpiredLease, type Delivery, type RedeliveryPolicy } from '../domain/delivery.ts';
import { DELIVERY_COLUMNS, toDelivery } from './records.ts';
import { num, type Database, type Sql } from './sql.ts';

export interface SweepReport {
  /** Leases that went back to PENDING. */
  readonly pending: number;
  /** Leases whose attempts were used up: now EXPIRED. */
  readonly expired: number;
  /** Candidates another node or a claim changed first. */
  readonly skipped: number;
  /** Whether the batch was full (more may be waiting). */
  readonly full: boolean;
}

async function write(sql: Sql, before: Delivery, after: Delivery): Promise<boolean> {
  const { changes } = await sql.run(
    "UPDATE deliveries SET state = ?, available_at = ?, lease_until = NULL, revision = ? WHERE id = ? AND revision = ? AND state = 'LEASED'",
    [after.state, after.availableAt, after.revision.toString(), after.id, before.revision.toString()],
  );
  return changes === 1;
}

/**
 * Recovers at most `batch` expired leases. On MySQL each recovery is its own single-row statement,
 * so the sweep never holds more than one row lock and cannot deadlock with a claim; on SQLite (one
 * writer) the batch is one transaction.
 */
export async function sweepExpiredLeases(db: Database, args: { policy: RedeliveryPolicy; batch: number }): Promise<SweepReport> {
  // Expiry is judged by the database's clock, like the lease deadline itself (a node whose clock
  // runs ahead must not recover a lease early).
  const now = db.phrases.nowMs;
  const rows = await db.all(
    `SELECT ${DELIVERY_COLUMNS}, ${now} AS now FROM deliveries WHERE state = 'LEASED' AND lease_until <= ${now} ORDER BY lease_until, id LIMIT ${Math.trunc(args.batch)}`,
  );
  const candidates = rows.map(toDelivery);
  const at = rows.length > 0 ? num(rows[0]!.now) : 0;
  let pending = 0;
  let expired = 0;
  let skipped = 0;
  const apply = async (sql: Sql) => {
    for (const delivery of candidates) {
      const next = recoverExpiredLease(delivery, at, args.policy);
      if (next === delivery || !(await write(sql, delivery, next))) {
        skipped++;
        continue;
      }
      if (next.state === 'EXPIRED') expired++;
      else pending++;
    }
  };
  if (candidates.length > 0) {
    if (db.dialect === 'sqlite') await db.transaction(async (tx) => apply(tx));
    else await apply(db);
  }
  return { pending, expired, skipped, full: rows.length >= args.batch };
}

/**
 * @module
 * The lease sweep, a unit of work of the delivery engine (spec/rules.md#s4-28 names it as missing;
 * spec/README.md, A delivery's life). Turns recover the expired leases of the subscriptions they
 * lease for; the sweep recovers them everywhere else too (paused subscriptions, subscriptions
 * nobody consumes), so the delivery list never shows a lease that ran out as LEASED for longer
 * than one sweep interval.
 *
 * It needs no index over every lease: each subscription's row says when its earliest lease may
 * end (`lease_check_at`), so the sweep reads the subscriptions that are due, and for each one runs
 * the same recovery a turn runs, under that subscription's row lock. Sweeps on several nodes and
 * turns therefore take turns on a subscription and never recover a lease twice.
 */
import { planRecovery, nextCounters } from '../domain/turn.ts';
import type { RedeliveryPolicy } from '../domain/delivery.ts';
import { present, type Database } from '../store/sql.ts';
import {
  dueForRecovery,
  leasedByEnd,
  lockSubscription,
  moveHeld,
  readContext,
  readSubscription,
  readWithEvents,
  rewriteDeliveries,
  saveSubscription,
  turnContext,
} from '../store/turns.ts';
import { RECOVERY_BATCH } from './turn.ts';

export interface SweepReport {
  /** Leases that went back to PENDING. */
  readonly pending: number;
  /** Leases whose attempts were used up: now EXPIRED. */
  readonly expired: number;
  /** Whether more may be due than this sweep took. */
  readonly full: boolean;
}

/** Recovers the expired leases of at most `batch` subscriptions that are due. */
export async function sweepExpiredLeases(db: Database, args: { policy: RedeliveryPolicy; batch: number }): Promise<SweepReport> {
  const [due] = await db.batch([dueForRecovery(db, args.batch)]);
  let pending = 0;
  let expired = 0;
  let more = false;
  for (const row of due) {
    const report = await recoverSubscription(db, String(row.id), args.policy);
    pending += report.pending;
    expired += report.expired;
    more ||= report.more;
  }
  return { pending, expired, full: due.length >= args.batch || more };
}

/** One subscription's expired leases, recovered in one transaction under its row lock. */
async function recoverSubscription(db: Database, subscriptionId: string, policy: RedeliveryPolicy) {
  return db.transaction(async (tx) => {
    const [subscriptionRows, contextRows] = await tx.batch([lockSubscription(tx, subscriptionId), turnContext(tx, subscriptionId, [])]);
    const locked = readSubscription(subscriptionRows);
    const { now } = readContext(contextRows);
    if (locked === null || locked.counters.leaseCheckAt === null || locked.counters.leaseCheckAt > now) {
      await tx.finish([]);
      return { pending: 0, expired: 0, more: false };
    }
    const [leasedRows] = await tx.batch([leasedByEnd(tx, subscriptionId, RECOVERY_BATCH + 1)]);
    const recovery = planRecovery(
      readWithEvents(leasedRows).map((r) => r.delivery),
      RECOVERY_BATCH,
      now,
      policy,
    );
    const pending = recovery.recovered.filter((d) => d.state === 'PENDING').length;
    const held = new Map<string, number>();
    for (const d of recovery.recovered) if (d.leaseSession !== null) held.set(d.leaseSession, (held.get(d.leaseSession) ?? 0) - 1);
    const counters = nextCounters(locked.counters, {
      acknowledged: 0,
      unwaited: 0,
      requeued: pending,
      leasedWaiting: 0,
      materialized: 0,
      checkAt: recovery.checkAt,
    });
    await tx.finish(
      present([rewriteDeliveries(recovery.recovered), saveSubscription(subscriptionId, locked.cursor, counters), moveHeld(held)]),
    );
    return {
      pending,
      expired: recovery.recovered.length - pending,
      more: recovery.checkAt !== null && recovery.checkAt <= now,
    };
  });
}

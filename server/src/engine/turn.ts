/**
 * @module
 * A turn of one subscription on this node: the delivery engine's unit of work (spec/README.md,
 * "The delivery engine"). One transaction, under the subscription's row lock, that acknowledges
 * the ACKs this node's sessions sent for it since its last turn, recovers expired leases when one
 * may have ended, leases to the sessions that asked what they have room for, and moves the counters
 * on the subscription's and the sessions' rows. It returns a plain value of what to send; the lease
 * is committed before the caller writes any `event.deliver`, and every ACK's answer is known only
 * after the commit.
 *
 * The plan, in round trips (each one `Sql.batch`), two in the steady state:
 * 1. lock the subscription; read the log's head and boundary, the time and the sessions' rows; the
 *    deliveries the ACKs name; and what may be leased: new results of the log (bounded by the
 *    cursor and the head that the statement reads itself) unless the results an earlier turn read
 *    ahead cover them, and PENDING deliveries or expired leases when the last turn's counters say
 *    there are any (`TurnHints`);
 * 2. only when those hints were wrong: the PENDING deliveries, expired leases or new results after all;
 * 3. write the ACKs, the leases, the recoveries and the counters, and commit.
 */
import { digestsEqual, newId, newLeaseSecret, sha256Hex } from '../crypto.ts';
import { lease, newDelivery, type AckTarget, type Delivery, type RedeliveryPolicy } from '../domain/delivery.ts';
import { aheadCount, aheadOf, covered, keptAhead, type AheadBounds, type ReadAhead } from '../domain/read-ahead.ts';
import { historyExpired } from '../domain/subscription.ts';
import {
  assignOwners,
  decideAckGroup,
  nextCounters,
  planLeases,
  planRecovery,
  sessionSlots,
  type AckAnswer,
  type SlotRequest,
} from '../domain/turn.ts';
import type { DatabaseClock } from '../store/clock.ts';
import type { ResultRecord } from '../store/records.ts';
import { present, type Database, type Row } from '../store/sql.ts';
import {
  deliveriesById,
  insertDeliveries,
  leasedByEnd,
  lockSubscription,
  logResults,
  moveHeld,
  readContext,
  readDeliveries,
  readResults,
  readSubscription,
  readWithEvents,
  rewriteDeliveries,
  saveSubscription,
  turnContext,
  waitingBySequence,
  writeAcks,
  type DeliveryWithEvent,
} from '../store/turns.ts';

/** Expired leases one turn recovers at most, and results it materializes at most: each transaction stays short. */
export const RECOVERY_BATCH = 64;
export const MATERIALIZE_BATCH = 256;

/**
 * Matching results a turn that reads the log reads beyond what it asked for, at most, and what the
 * subscription keeps of them for its next turns on this node at most: a count, and the characters
 * of their details and results (`domain/read-ahead.ts`). A read takes fewer extra rows when the
 * last one held results too large to keep that many (`aheadCount`).
 */
export const READ_AHEAD = 32;
export const READ_AHEAD_BOUNDS: AheadBounds<ResultRecord> = {
  count: READ_AHEAD,
  size: 32 * 1024,
  sizeOf: (r) => r.details.length + (r.result?.length ?? 0),
};

/** An ACK as a session sends it. */
export interface AckRequest {
  readonly deliveryId: string;
  readonly epoch: bigint;
  readonly secret: string;
}

/**
 * What the subscription's row said after its last turn on this node, so that a turn reads in its
 * first round trip what it will likely need. A wrong hint costs a round trip, never a decision.
 */
export interface TurnHints {
  /** The subscription's cursor. */
  readonly cursor: bigint;
  /** Whether PENDING deliveries were waiting. */
  readonly waiting: boolean;
  /** When the earliest lease may end (null: none is leased). */
  readonly checkAt: number | null;
  /**
   * Matching results the last turns read beyond what they leased. Trusted for what it says, since
   * committed results never change: a turn uses it only for a locked cursor inside its range and
   * up to the head it reads, and otherwise reads the log in one more round trip.
   */
  readonly ahead?: ReadAhead<ResultRecord> | null;
  /** Results beyond its need the next read of the log takes (`READ_AHEAD` when absent). */
  readonly readAhead?: number;
}

export interface TurnRequest {
  readonly subscriptionId: string;
  /** The subscription's queue and types: fixed at creation, so this node knows them from the hello. */
  readonly queueId: string;
  readonly types: readonly string[];
  /** ACKs of this node's sessions of the subscription, in arrival order, at most one per delivery. */
  readonly acks: readonly AckRequest[];
  /**
   * The sessions of this node that ask for deliveries, each with the room its write queue and
   * capacity leave (counting what its ACKs in `acks` free), in the order to serve them. Empty: a
   * turn that only acknowledges.
   */
  readonly sessions: readonly SlotRequest[];
  readonly leaseMs: number;
  readonly policy: RedeliveryPolicy;
  readonly hints: TurnHints;
}

/** A delivery leased to a session, committed: what `event.deliver` carries. */
export interface Leased {
  readonly session: string;
  readonly delivery: Delivery;
  readonly event: ResultRecord;
  /** The plain lease secret: sent once in `event.deliver`, stored only as a digest. */
  readonly secret: string;
}

/** Why a turn leased nothing, for every session of the subscription. */
export type SubscriptionState =
  | { readonly kind: 'open' }
  | { readonly kind: 'paused' }
  | { readonly kind: 'retired' }
  | { readonly kind: 'history_expired'; readonly boundary: bigint };

export interface TurnOutcome {
  /** One answer per ACK of the request, in order. */
  readonly acks: AckAnswer[];
  readonly leased: Leased[];
  readonly state: SubscriptionState;
  /** Requesting sessions without a row in `sessions`: their node was taken for dead. */
  readonly lost: readonly string[];
  /** Work is left that the sessions could take once they have room. */
  readonly more: boolean;
  /** For the subscription's next turn on this node. */
  readonly hints: TurnHints;
}

export async function runTurn(db: Database, clock: DatabaseClock, request: TurnRequest): Promise<TurnOutcome> {
  return db.transaction(async (tx) => {
    const sentAt = Date.now();
    const subscriptionId = request.subscriptionId;
    const ackIds = [...new Set(request.acks.map((a) => a.deliveryId))];
    const asking = request.sessions.reduce((sum, s) => sum + s.room, 0);
    const hints = request.hints;

    // --- round trip 1: the lock, what the turn decides with, and what it will likely lease ------
    const logLimit = Math.min(asking, MATERIALIZE_BATCH);
    let readAhead = hints.readAhead ?? READ_AHEAD;
    const readLimit = logLimit + readAhead;
    const logFrom = (from: bigint) =>
      logResults({ subscriptionId, queueId: request.queueId, types: request.types, from, limit: readLimit });
    const reads = {
      acks: ackIds.length > 0,
      recover: asking > 0 && hints.checkAt !== null && hints.checkAt <= clock.now(),
      waiting: asking > 0 && hints.waiting,
      log: asking > 0 && (aheadOf(hints.ahead, hints.cursor)?.length ?? 0) < logLimit,
    };
    const first = await tx.batch([
      lockSubscription(tx, subscriptionId),
      turnContext(
        tx,
        subscriptionId,
        request.sessions.map((s) => s.id),
      ),
      ...(reads.acks ? [deliveriesById(ackIds)] : []),
      ...(reads.recover ? [leasedByEnd(tx, subscriptionId, RECOVERY_BATCH + 1)] : []),
      ...(reads.waiting ? [waitingBySequence(tx, subscriptionId, asking + 1)] : []),
      ...(reads.log ? [logFrom(hints.cursor)] : []),
    ]);
    const answers = first.slice(2);
    const take = <T>(wanted: boolean, read: (rows: Row[]) => T, otherwise: T): T => (wanted ? read(answers.shift()!) : otherwise);
    const locked = readSubscription(first[0]);
    const context = readContext(first[1]);
    clock.observe(context.now, sentAt);
    const now = context.now;
    const ackRows = take(reads.acks, readDeliveries, new Map<string, AckTarget>());
    let leasedRows = take(reads.recover, readWithEvents, [] as DeliveryWithEvent[]);
    let waitingRows = take(reads.waiting, readWithEvents, [] as DeliveryWithEvent[]);
    // What lies beyond the head the context read is left for the next turn (see `logResults`); the
    // statement read after the cursor it locked.
    const readLog = (rows: Row[], after: bigint): ReadAhead<ResultRecord> => {
      const read = readResults(rows);
      readAhead = aheadCount(read, READ_AHEAD_BOUNDS, readAhead);
      return covered(read, readLimit, context.head, after);
    };
    const after = locked && locked.cursor > hints.cursor ? locked.cursor : hints.cursor;
    // Results read before, up to a head later than the one this turn reads, are not used.
    let log = take(reads.log, (rows) => readLog(rows, after), hints.ahead ?? null);
    if (log && log.through > context.head) log = null;

    const group = decideAckGroup(
      ackRows,
      request.acks.map((a) => ({ subscriptionId, deliveryId: a.deliveryId, epoch: a.epoch, digest: sha256Hex(a.secret) })),
      now,
      digestsEqual,
    );
    const acked = writeAcks(group.acknowledged, now);
    const state: SubscriptionState =
      locked === null || locked.retired
        ? { kind: 'retired' }
        : historyExpired(locked.cursor, context.boundary)
          ? { kind: 'history_expired', boundary: context.boundary }
          : locked.enabled
            ? { kind: 'open' }
            : { kind: 'paused' };
    if (locked === null) {
      await tx.finish(present([acked]));
      return { acks: group.answers, leased: [], state, lost: [], more: false, hints };
    }
    const open = state.kind === 'open' && request.sessions.length > 0;
    const pendingAfterAcks = locked.counters.pendingCount - group.acknowledged.length;

    // --- round trip 2, only when the hints were wrong -------------------------------------------
    // Recovery runs before the slots are counted: the leases it ends may be what the sessions hold.
    const recover = open && locked.counters.leaseCheckAt !== null && locked.counters.leaseCheckAt <= now;
    const wait = open && locked.counters.waitingCount - group.unwaited > 0;
    // What the turn may lease from: results read, now or before, that cover the locked cursor.
    // Results read ahead fall short when another node's turns moved the cursor; then, as when
    // nothing covers the cursor, the log is read again.
    const covering = aheadOf(log, locked.cursor);
    const short = open && (reads.log ? covering === null : (covering?.length ?? 0) < logLimit);
    const late = { recover: recover && !reads.recover, waiting: wait && !reads.waiting, log: short };
    if (late.recover || late.waiting || late.log) {
      const from = locked.cursor;
      const second = await tx.batch([
        ...(late.recover ? [leasedByEnd(tx, subscriptionId, RECOVERY_BATCH + 1)] : []),
        ...(late.waiting ? [waitingBySequence(tx, subscriptionId, asking + 1)] : []),
        ...(late.log ? [logFrom(from)] : []),
      ]);
      if (late.recover) leasedRows = readWithEvents(second.shift()!);
      if (late.waiting) waitingRows = readWithEvents(second.shift()!);
      if (late.log) log = readLog(second.shift()!, from);
    }

    // --- the decisions -------------------------------------------------------------------------
    // An ACK of this turn may have settled a delivery that was read as LEASED or PENDING: it is
    // neither recovered nor leased again (a lease that ran out as its ACK arrived is acknowledged).
    const settled = new Set(group.acknowledged.map((d) => d.id));
    let recovery = recover
      ? planRecovery(
          leasedRows.map((r) => r.delivery).filter((d) => !settled.has(d.id)),
          RECOVERY_BATCH,
          now,
          request.policy,
        )
      : null;
    // A full read may have more LEASED rows behind it: none of them ends before the last one read.
    const lastRead = leasedRows[leasedRows.length - 1]?.delivery.leaseUntil ?? null;
    if (recovery && recovery.checkAt === null && leasedRows.length > RECOVERY_BATCH) recovery = { ...recovery, checkAt: lastRead };
    const held = new Map<string, number>();
    for (const [session, released] of group.released) held.set(session, -released);
    for (const d of recovery?.recovered ?? []) if (d.leaseSession !== null) held.set(d.leaseSession, (held.get(d.leaseSession) ?? 0) - 1);
    const freed = new Map([...held].map(([session, delta]) => [session, -delta]));
    const { slots, lost } = sessionSlots(request.sessions, context.sessions, freed);
    const free = slots.reduce((sum, s) => sum + s.free, 0);
    const leasing = open && free > 0;
    const events = new Map<string, ResultRecord | null>();
    for (const row of [...leasedRows, ...waitingRows]) events.set(row.delivery.id, row.event);
    // Recovered leases that went back to PENDING may be leased again at once, in sequence order with the others.
    const waiting = [
      ...(recovery?.recovered.filter((d) => d.state === 'PENDING') ?? []),
      ...(wait ? waitingRows.map((r) => r.delivery).filter((d) => !settled.has(d.id) && d.state === 'PENDING') : []),
    ].sort((a, b) => (a.sequence < b.sequence ? -1 : a.sequence > b.sequence ? 1 : 0));
    // The first `logLimit` matching results after the cursor, as a read of that many would return them.
    const candidates = (aheadOf(log, locked.cursor) ?? []).slice(0, logLimit);
    const plan = planLeases({
      slots: leasing ? free : 0,
      waiting,
      waitingMore: wait && waitingRows.length > asking,
      now,
      cursor: locked.cursor,
      head: context.head,
      candidates: leasing ? candidates.map((r) => r.sequence) : [],
      limit: leasing ? logLimit : 0,
      pendingRoom: locked.maxPending - pendingAfterAcks,
    });
    const owners = assignOwners(slots, plan.fromWaiting.length + plan.fromLog);
    const leaseMs = request.leaseMs;
    const leased: Leased[] = [];
    const rewritten = new Map<string, Delivery>();
    for (const d of recovery?.recovered ?? []) rewritten.set(d.id, d);
    plan.fromWaiting.forEach((d, i) => {
      const event = events.get(d.id);
      if (!event) throw new Error(`the event of delivery ${d.id} (sequence ${d.sequence}) is missing`);
      const secret = newLeaseSecret();
      const session = owners[i]!;
      const next = lease(d, { now, leaseMs, digest: sha256Hex(secret), session });
      rewritten.set(d.id, next);
      leased.push({ session, delivery: next, event, secret });
    });
    const born: Delivery[] = [];
    candidates.slice(0, plan.fromLog).forEach((event, i) => {
      const secret = newLeaseSecret();
      const session = owners[plan.fromWaiting.length + i]!;
      const pending = newDelivery({
        id: newId(),
        subscriptionId,
        sequence: event.sequence,
        eventId: event.id,
        attemptBudget: locked.maxAttempts,
        now,
      });
      const next = lease(pending, { now, leaseMs, digest: sha256Hex(secret), session });
      born.push(next);
      leased.push({ session, delivery: next, event, secret });
    });
    for (const item of leased) held.set(item.session, (held.get(item.session) ?? 0) + 1);
    const next = nextCounters(locked.counters, {
      acknowledged: group.acknowledged.length,
      unwaited: group.unwaited,
      requeued: recovery?.recovered.filter((d) => d.state === 'PENDING').length ?? 0,
      leasedWaiting: plan.fromWaiting.length,
      materialized: born.length,
      ...(recovery ? { checkAt: recovery.checkAt } : {}),
      ...(leased.length > 0 ? { leaseUntil: now + leaseMs } : {}),
    });
    const changed =
      plan.cursor !== locked.cursor ||
      next.pendingCount !== locked.counters.pendingCount ||
      next.waitingCount !== locked.counters.waitingCount ||
      next.leaseCheckAt !== locked.counters.leaseCheckAt;

    // --- the last round trip: the writes and the commit -----------------------------------------
    await tx.finish(
      present([
        acked,
        rewriteDeliveries([...rewritten.values()]),
        insertDeliveries(born),
        changed ? saveSubscription(subscriptionId, plan.cursor, next) : null,
        moveHeld(held),
      ]),
    );
    return {
      acks: group.answers,
      leased,
      state,
      lost,
      more: plan.more || (recovery !== null && recovery.checkAt !== null && recovery.checkAt <= now),
      hints: {
        cursor: plan.cursor,
        waiting: next.waitingCount > 0,
        checkAt: next.leaseCheckAt,
        ahead: log && keptAhead(log, plan.cursor, READ_AHEAD_BOUNDS),
        readAhead,
      },
    };
  });
}

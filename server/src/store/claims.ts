/**
 * @module
 * The delivery engine's transactions (spec/rules.md#s5-11, #s6-1, #s6-13 to #s6-17): binding a
 * session, claiming (recovery, materialization and leasing in one transaction, committed before any
 * `event.deliver` is written) and acknowledging. The subscription row is locked for a claim, so
 * claims on one subscription take turns instead of deadlocking, across nodes too.
 */
import { OrbitError } from '@orbit/spec/errors';
import { newId, newLeaseSecret, sha256Hex } from '../crypto.ts';
import { orThrow } from '../domain/decision.ts';
import {
  decideCapacity,
  isClaimable,
  lease,
  newDelivery,
  recoverExpiredLease,
  type Delivery,
  type RedeliveryPolicy,
} from '../domain/delivery.ts';
import { materializationReadLimit, planMaterialization } from '../domain/materialize.ts';
import { historyExpired, type SubscriptionRecord } from '../domain/subscription.ts';
import type { Principal } from './principal.ts';
import {
  DELIVERY_COLUMNS,
  RESULT_COLUMNS,
  toDelivery,
  toResult,
  toSubscription,
  SUBSCRIPTION_SELECT,
  type ResultRecord,
} from './records.ts';
import { matchingResults } from './results.ts';
import type { DatabaseClock } from './clock.ts';
import { openSession } from './sessions.ts';
import { big, num, numOrNull, type Database, type Row, type Sql, type SqlPhrases } from './sql.ts';
import { ownedSubscription } from './subscriptions.ts';

/** Rows one claim examines at most, whatever the capacity: keeps each transaction short. */
const RECOVERY_BATCH = 64;
const MATERIALIZE_BATCH = 256;

export interface Claimed {
  /** The session the delivery is leased to. */
  readonly session: string;
  readonly delivery: Delivery;
  readonly event: ResultRecord;
  /** The plain lease secret: sent once in `event.deliver`, stored only as a digest. */
  readonly secret: string;
}

export type ClaimOutcome =
  | {
      readonly kind: 'claimed';
      readonly items: Claimed[];
      /** Whether more deliveries are ready right now. */
      readonly more: boolean;
      /** Whether matching results wait for room below max_pending. */
      readonly full: boolean;
      /** Requesting sessions without a row in `sessions` (their node was taken for dead). */
      readonly lost: readonly string[];
    }
  | { readonly kind: 'paused' }
  | { readonly kind: 'retired' }
  | { readonly kind: 'history_expired'; readonly boundary: bigint };

/** A claim that did not run: another transaction holds the subscription's row (see `claimIn`). */
export interface Skipped {
  readonly kind: 'skipped';
}

/**
 * Checks the hello's subscription and capacity and records the session, in one transaction
 * (spec/rules.md#s5-11: capacity is checked inside a database transaction).
 */
export async function bindSession(
  db: Database,
  principal: Principal,
  session: { readonly id: string; readonly nodeId: string; readonly subscriptionId: string; readonly capacity: number },
): Promise<SubscriptionRecord> {
  return db.transaction(async (tx) => {
    orThrow(decideCapacity(session.capacity));
    const subscription = await ownedSubscription(tx, principal, session.subscriptionId);
    if (subscription.retiredAt !== null) throw new OrbitError('NOT_FOUND', 'the subscription is retired and can no longer be consumed');
    await openSession(tx, { ...session, credentialId: principal.credentialId });
    return subscription;
  });
}

export interface ClaimRequest {
  readonly subscriptionId: string;
  /**
   * The sessions of this node the claim serves, in turn, each with how many frames it can write
   * now: a claim leases no more than that, so no lease waits in memory behind a full write queue.
   */
  readonly sessions: readonly { readonly id: string; readonly room: number }[];
  readonly leaseMs: number;
  readonly policy: RedeliveryPolicy;
}

/**
 * A claim reads PENDING rows in sequence order and stops at its limit. The (subscription, state,
 * sequence) index yields them in that order, so only the rows returned are read and locked. Left
 * to choose, both planners took an index with `available_at` and sorted every PENDING row, which on
 * MySQL also locked them all: the claim's slowest statement (4.9 ms p50 at 4 × 32, 2.4 with the hint).
 */
const CANDIDATE_INDEX = 'deliveries_by_state';

/**
 * What a claim reads once it holds the subscription's lock, in one statement: the log position,
 * the database's time, the earliest lease end, and each requesting session's capacity and the
 * leases it holds now. Read after the lock, not in the locking statement: a locking read that
 * waited may evaluate its subqueries on a snapshot from before the wait, and a retention boundary
 * older than a prune that committed meanwhile would let the claim go on below it. These reads take
 * no locks, so appenders and ACKs never wait for claims.
 */
export function claimContext(phrases: SqlPhrases, sessions: number): string {
  const now = phrases.nowMs;
  const ids = Array.from({ length: Math.max(sessions, 1) }, () => '?').join(', ');
  return `SELECT h.head_sequence, h.retention_boundary, ${now} AS now,
      (SELECT MIN(l.lease_until) FROM deliveries l WHERE l.subscription_id = ? AND l.state = 'LEASED') AS next_expiry,
      s.id AS session_id, s.capacity,
      (SELECT COUNT(*) FROM deliveries d
        WHERE d.subscription_id = ? AND d.state = 'LEASED' AND d.lease_session = s.id AND d.lease_until > ${now}) AS held
    FROM result_head h LEFT JOIN sessions s ON s.subscription_id = ? AND s.id IN (${ids})
    WHERE h.id = 1`;
}

/** How many each requesting session may take: its room now, within its capacity less what it holds. */
function slotsOf(request: ClaimRequest, context: readonly Row[]): { slots: { id: string; free: number }[]; lost: string[] } {
  const stored = new Map(context.filter((r) => r.session_id !== null && r.session_id !== undefined).map((r) => [String(r.session_id), r]));
  const lost = request.sessions.filter((s) => !stored.has(s.id)).map((s) => s.id);
  const slots = request.sessions.map(({ id, room }) => {
    const row = stored.get(id);
    return { id, free: row ? Math.max(0, Math.min(room, num(row.capacity) - num(row.held))) : 0 };
  });
  return { slots, lost };
}

export async function claim(db: Database, clock: DatabaseClock, request: ClaimRequest): Promise<ClaimOutcome> {
  return db.transaction((tx) => claimIn(tx, clock, request, 'wait'));
}

/**
 * A claim inside the caller's transaction. `lock` says how it takes the subscription row: `wait`
 * for a claim of its own, or `skip` for a claim that follows an ACK group in the group's
 * transaction (`acks.ts`): that one never waits for another claim's lock (the ACKs would wait with
 * it) and answers `skipped` instead; the claim that holds the lock, or the pool's next one, serves
 * the sessions.
 */
export function claimIn(tx: Sql, clock: DatabaseClock, request: ClaimRequest, lock: 'wait'): Promise<ClaimOutcome>;
export function claimIn(tx: Sql, clock: DatabaseClock, request: ClaimRequest, lock: 'skip'): Promise<ClaimOutcome | Skipped>;
export async function claimIn(
  tx: Sql,
  clock: DatabaseClock,
  request: ClaimRequest,
  lock: 'wait' | 'skip',
): Promise<ClaimOutcome | Skipped> {
  const sentAt = Date.now();
  const [row] = await tx.all(
    `SELECT ${SUBSCRIPTION_SELECT} FROM subscriptions WHERE id = ?${lock === 'wait' ? tx.phrases.forUpdate : tx.phrases.forUpdateSkipLocked}`,
    [request.subscriptionId],
  );
  // Without SKIP LOCKED no row means no subscription; with it, the row may just be locked.
  if (!row) return lock === 'skip' ? { kind: 'skipped' as const } : { kind: 'retired' as const };
  const subscription = toSubscription(row);
  if (subscription.retiredAt !== null) return { kind: 'retired' as const };
  if (!subscription.enabled) return { kind: 'paused' as const };
  const ids = request.sessions.map((s) => s.id);
  const context = await tx.all(claimContext(tx.phrases, ids.length), [
    subscription.id,
    subscription.id,
    subscription.id,
    ...(ids.length > 0 ? ids : ['']),
  ]);
  const first = context[0]!;
  const now = num(first.now);
  clock.observe(now, sentAt);
  const nextExpiry = numOrNull(first.next_expiry);
  if (nextExpiry !== null && nextExpiry <= now) await recoverExpired(tx, subscription.id, now, request.policy);
  const position = { head: big(first.head_sequence), boundary: big(first.retention_boundary) };
  if (historyExpired(subscription.cursorSequence, position.boundary))
    return { kind: 'history_expired' as const, boundary: position.boundary };
  const { slots, lost } = slotsOf(request, context);
  const max = slots.reduce((sum, s) => sum + s.free, 0);
  const cursor = await materialize(tx, subscription, position.head, now);
  // Materialization stopped short of the head: max_pending is reached, and only an ACK that
  // frees room can let more in.
  const full = cursor < position.head;
  if (max === 0) return { kind: 'claimed' as const, items: [], more: false, full, lost };
  // Locked: a late ACK may be settling one of these PENDING rows right now.
  const candidates = await tx.all(
    `SELECT ${DELIVERY_COLUMNS} FROM deliveries${tx.phrases.useIndex(CANDIDATE_INDEX)} WHERE subscription_id = ? AND state = 'PENDING' AND available_at <= ? ORDER BY sequence LIMIT ${max + 1}${tx.phrases.forUpdate}`,
    [subscription.id, now],
  );
  // Each session takes as many as it has room for, in turn.
  const owners = slots.flatMap((slot) => Array.from({ length: slot.free }, () => slot.id));
  const leased = candidates
    .slice(0, max)
    .map(toDelivery)
    .filter((candidate) => isClaimable(candidate, now))
    .map((candidate, i) => {
      const secret = newLeaseSecret();
      const session = owners[i]!;
      return { session, secret, delivery: lease(candidate, { now, leaseMs: request.leaseMs, digest: sha256Hex(secret), session }) };
    });
  await writeLeases(
    tx,
    leased.map((l) => l.delivery),
  );
  const events = await eventsBySequence(
    tx,
    leased.map((l) => l.delivery.sequence),
  );
  const items = leased.map((l) => ({ ...l, event: events.get(l.delivery.sequence)! }));
  // More is ready at once only when capacity, not supply, ended this claim.
  return { kind: 'claimed' as const, items, more: candidates.length > max, full, lost };
}

/** `CASE id WHEN ? THEN ? … END` with its parameters: one column's per-row values in one UPDATE. */
export function byId(deliveries: readonly Delivery[], value: (d: Delivery) => unknown): { sql: string; params: unknown[] } {
  return {
    sql: `CASE id ${deliveries.map(() => 'WHEN ? THEN ?').join(' ')} END`,
    params: deliveries.flatMap((d) => [d.id, value(d)]),
  };
}

/** One statement for all leases of a claim: per-row values come from the domain's `lease`. */
async function writeLeases(tx: Sql, deliveries: readonly Delivery[]): Promise<void> {
  if (deliveries.length === 0) return;
  const ids = deliveries.map((d) => d.id);
  const epoch = byId(deliveries, (d) => d.leaseEpoch.toString());
  const digest = byId(deliveries, (d) => d.leaseDigest);
  const attempts = byId(deliveries, (d) => d.attempts);
  const revision = byId(deliveries, (d) => d.revision.toString());
  const session = byId(deliveries, (d) => d.leaseSession);
  const first = deliveries[0]!;
  const { changes } = await tx.run(
    `UPDATE deliveries SET state = 'LEASED', lease_until = ?, lease_session = ${session.sql}, lease_epoch = ${epoch.sql}, lease_digest = ${digest.sql}, attempts = ${attempts.sql}, revision = ${revision.sql}
      WHERE id IN (${ids.map(() => '?').join(', ')}) AND state = 'PENDING'`,
    [first.leaseUntil, ...session.params, ...epoch.params, ...digest.params, ...attempts.params, ...revision.params, ...ids],
  );
  // The rows were read and locked in this transaction, so every one of them must change.
  if (changes !== deliveries.length) throw new Error(`leased ${changes} of ${deliveries.length} deliveries; the claim is rolled back`);
}

async function recoverExpired(tx: Sql, subscriptionId: string, now: number, policy: RedeliveryPolicy): Promise<void> {
  const expired = await tx.all(
    `SELECT ${DELIVERY_COLUMNS} FROM deliveries WHERE subscription_id = ? AND state = 'LEASED' AND lease_until <= ? ORDER BY sequence LIMIT ${RECOVERY_BATCH}`,
    [subscriptionId, now],
  );
  for (const delivery of expired.map(toDelivery)) {
    const next = recoverExpiredLease(delivery, now, policy);
    await tx.run('UPDATE deliveries SET state = ?, available_at = ?, lease_until = NULL, revision = ? WHERE id = ? AND revision = ?', [
      next.state,
      next.availableAt,
      next.revision.toString(),
      next.id,
      delivery.revision.toString(),
    ]);
  }
}

/** Materializes what fits and returns the new cursor (below the head: more may match later). */
async function materialize(tx: Sql, subscription: SubscriptionRecord, head: bigint, now: number): Promise<bigint> {
  if (subscription.cursorSequence >= head) return subscription.cursorSequence;
  const limit = materializationReadLimit(subscription, MATERIALIZE_BATCH);
  const rows = await matchingResults(tx, {
    queueId: subscription.queueId,
    types: subscription.types,
    after: subscription.cursorSequence,
    upTo: head,
    limit,
    columns: 'sequence, id',
  });
  const plan = planMaterialization({
    cursor: subscription.cursorSequence,
    head,
    pendingCount: subscription.pendingCount,
    maxPending: subscription.maxPending,
    candidates: rows.map((r) => big(r.sequence)),
    limit,
  });
  const created = rows.slice(0, plan.take).map((r) =>
    newDelivery({
      id: newId(),
      subscriptionId: subscription.id,
      sequence: big(r.sequence),
      eventId: String(r.id),
      attemptBudget: subscription.maxAttempts,
      now,
    }),
  );
  if (created.length > 0) {
    const placeholders = created.map(() => '(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)').join(', ');
    const params = created.flatMap((d) => [
      d.id,
      d.subscriptionId,
      d.sequence.toString(),
      d.eventId,
      d.revision.toString(),
      d.state,
      d.createdAt,
      d.availableAt,
      d.leaseEpoch.toString(),
      null,
      null,
      null,
      d.attempts,
      d.attemptBudget,
      null,
    ]);
    await tx.run(`INSERT INTO deliveries (${DELIVERY_COLUMNS}) VALUES ${placeholders}`, params);
  }
  if (plan.cursor !== subscription.cursorSequence)
    await tx.run('UPDATE subscriptions SET cursor_sequence = ? WHERE id = ?', [plan.cursor.toString(), subscription.id]);
  return plan.cursor;
}

async function eventsBySequence(tx: Sql, sequences: readonly bigint[]): Promise<Map<bigint, ResultRecord>> {
  const map = new Map<bigint, ResultRecord>();
  if (sequences.length === 0) return map;
  const rows: Row[] = await tx.all(
    `SELECT ${RESULT_COLUMNS} FROM results WHERE sequence IN (${sequences.map(() => '?').join(', ')})`,
    sequences.map((s) => s.toString()),
  );
  for (const row of rows) map.set(big(row.sequence), toResult(row));
  return map;
}

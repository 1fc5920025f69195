/**
 * @module
 * The statements of the delivery engine's transactions (spec/README.md, "The delivery engine"),
 * each built here with its parameters and read back by a function beside it. The engine
 * (`engine/turn.ts`) groups them into round trips (`Sql.batch`); nothing here runs a statement.
 *
 * Every statement that writes a subscription's deliveries runs while the transaction holds that
 * subscription's row (`lockSubscription`): turns, the lease sweep and manual retries. So a read of
 * the subscription's deliveries under that lock needs no lock of its own, and the counters on the
 * subscription's row and on its sessions' rows change only with the rows they count.
 */
import type { AckTarget, Delivery } from '../domain/delivery.ts';
import type { Counters, SessionRow } from '../domain/turn.ts';
import {
  ACK_COLUMNS,
  DELIVERY_COLUMNS,
  RESULT_COLUMNS,
  resultColumnsAs,
  toAckTarget,
  toDelivery,
  toResult,
  type ResultRecord,
} from './records.ts';
import { big, command, num, numOrNull, query, type Command, type Query, type Row, type Sql } from './sql.ts';

/** The index that holds a subscription's deliveries by state, lease end and sequence (`tables/define.ts`). */
const WORK_INDEX = 'deliveries_work';

const marks = (n: number): string => Array.from({ length: n }, () => '?').join(', ');

/** `CASE id WHEN ? THEN ? … END` with its parameters: one column's per-row values in one statement. */
export function byId<T extends { readonly id: string }>(
  rows: readonly T[],
  value: (row: T) => unknown,
): { sql: string; params: unknown[] } {
  return {
    sql: `CASE id ${rows.map(() => 'WHEN ? THEN ?').join(' ')} END`,
    params: rows.flatMap((row) => [row.id, value(row)]),
  };
}

// --- the subscription ----------------------------------------------------------------------------

/**
 * What the engine decides with from the subscription's row (its cursor, state, limits and
 * counters), locked until the transaction ends. Only these columns: every column of a result set
 * costs both processes its metadata on every execution, and the lock is read on every turn.
 */
export function lockSubscription(sql: Sql, id: string): Query {
  return query(
    `SELECT cursor_sequence, enabled, retired_at, max_pending, max_attempts, pending_count, waiting_count, lease_check_at
       FROM subscriptions WHERE id = ?${sql.phrases.forUpdate}`,
    [id],
  );
}

export interface LockedSubscription {
  readonly cursor: bigint;
  readonly enabled: boolean;
  readonly retired: boolean;
  readonly maxPending: number;
  readonly maxAttempts: number;
  readonly counters: Counters;
}

export function readSubscription(rows: readonly Row[]): LockedSubscription | null {
  const row = rows[0];
  if (!row) return null;
  return {
    cursor: big(row.cursor_sequence),
    enabled: num(row.enabled) === 1,
    retired: numOrNull(row.retired_at) !== null,
    maxPending: num(row.max_pending),
    maxAttempts: num(row.max_attempts),
    counters: { pendingCount: num(row.pending_count), waitingCount: num(row.waiting_count), leaseCheckAt: numOrNull(row.lease_check_at) },
  };
}

/** Writes the cursor and the counters a turn moved. */
export function saveSubscription(id: string, cursor: bigint, counters: Counters): Command {
  return command('UPDATE subscriptions SET cursor_sequence = ?, pending_count = ?, waiting_count = ?, lease_check_at = ? WHERE id = ?', [
    cursor.toString(),
    counters.pendingCount,
    counters.waitingCount,
    counters.leaseCheckAt,
    id,
  ]);
}

/**
 * What a turn reads once it holds the subscription's row, in one statement: the log's head and
 * retention boundary, the database's time, and each requesting session's capacity and leases held.
 * Read after the lock, never in the locking statement: a locking read that waited may see the other
 * tables as they were before the wait, and a retention boundary older than a prune that committed
 * meanwhile would let the turn materialize below it. None of it locks, so appends never wait for a
 * turn.
 */
export function turnContext(sql: Sql, subscriptionId: string, sessionIds: readonly string[]): Query {
  const now = sql.phrases.nowMs;
  if (sessionIds.length === 0) return query(`SELECT head_sequence, retention_boundary, ${now} AS now FROM result_head WHERE id = 1`);
  return query(
    `SELECT h.head_sequence, h.retention_boundary, ${now} AS now, s.id AS session_id, s.capacity, s.held
       FROM result_head h LEFT JOIN sessions s ON s.subscription_id = ? AND s.id IN (${marks(sessionIds.length)})
      WHERE h.id = 1`,
    [subscriptionId, ...sessionIds],
  );
}

export interface TurnContext {
  readonly head: bigint;
  readonly boundary: bigint;
  readonly now: number;
  readonly sessions: ReadonlyMap<string, SessionRow>;
}

export function readContext(rows: readonly Row[]): TurnContext {
  const first = rows[0]!;
  const sessions = new Map<string, SessionRow>();
  for (const row of rows)
    if (row.session_id !== null && row.session_id !== undefined)
      sessions.set(String(row.session_id), { capacity: num(row.capacity), held: num(row.held) });
  return { head: big(first.head_sequence), boundary: big(first.retention_boundary), now: num(first.now), sessions };
}

/** Moves the sessions' held counts by `deltas` (a session's row that is gone is left so). */
export function moveHeld(deltas: ReadonlyMap<string, number>): Command | null {
  const moved = [...deltas].filter(([, delta]) => delta !== 0).map(([id, delta]) => ({ id, delta }));
  if (moved.length === 0) return null;
  const delta = byId(moved, (m) => m.delta);
  return command(`UPDATE sessions SET held = held + ${delta.sql} WHERE id IN (${marks(moved.length)})`, [
    ...delta.params,
    ...moved.map((m) => m.id),
  ]);
}

// --- deliveries ----------------------------------------------------------------------------------

/**
 * The deliveries with these ids, of any subscription: what a group of ACKs names, with only what an
 * ACK is decided with (a result set's column definitions cost both processes on every execution).
 */
export function deliveriesById(ids: readonly string[]): Query {
  return query(`SELECT ${ACK_COLUMNS} FROM deliveries WHERE id IN (${marks(ids.length)})`, ids);
}

export function readDeliveries(rows: readonly Row[]): Map<string, AckTarget> {
  return new Map(rows.map((row) => [String(row.id), toAckTarget(row)]));
}

/** One statement for a group's ACKs; each row's revision comes from the domain's `decideAck`. */
export function writeAcks(acknowledged: readonly Pick<Delivery, 'id' | 'revision'>[], now: number): Command | null {
  if (acknowledged.length === 0) return null;
  const revision = byId(acknowledged, (d) => d.revision.toString());
  return command(
    `UPDATE deliveries SET state = 'ACKED', acknowledged_at = ?, lease_until = NULL, revision = ${revision.sql} WHERE id IN (${marks(acknowledged.length)})`,
    [now, ...revision.params, ...acknowledged.map((d) => d.id)],
  );
}

const DELIVERY_OF_D = DELIVERY_COLUMNS.split(', ')
  .map((column) => `d.${column}`)
  .join(', ');

/** A delivery and its event, read in one row (`readWithEvents`). */
const WITH_EVENT = `${DELIVERY_OF_D}, ${resultColumnsAs('r', 'e_')}`;

/**
 * The subscription's LEASED deliveries in lease-end order, with their events (a recovered lease may
 * be leased again in the same turn): read when its `lease_check_at` has passed.
 */
export function leasedByEnd(sql: Sql, subscriptionId: string, limit: number): Query {
  return query(
    `SELECT ${WITH_EVENT} FROM deliveries d${sql.phrases.useIndex(WORK_INDEX)} LEFT JOIN results r ON r.sequence = d.sequence
      WHERE d.subscription_id = ? AND d.state = 'LEASED' ORDER BY d.lease_until LIMIT ${Math.trunc(limit)}`,
    [subscriptionId],
  );
}

/** The subscription's PENDING deliveries available now (by the database's clock), in sequence order, with their events. */
export function waitingBySequence(sql: Sql, subscriptionId: string, limit: number): Query {
  return query(
    `SELECT ${WITH_EVENT} FROM deliveries d${sql.phrases.useIndex(WORK_INDEX)} LEFT JOIN results r ON r.sequence = d.sequence
      WHERE d.subscription_id = ? AND d.state = 'PENDING' AND d.lease_until IS NULL AND d.available_at <= ${sql.phrases.nowMs}
      ORDER BY d.sequence LIMIT ${Math.trunc(limit)}`,
    [subscriptionId],
  );
}

export interface DeliveryWithEvent {
  readonly delivery: Delivery;
  /** Null only if retention removed it, which it never does for a delivery that is not ACKED. */
  readonly event: ResultRecord | null;
}

export function readWithEvents(rows: readonly Row[]): DeliveryWithEvent[] {
  return rows.map((row) => ({
    delivery: toDelivery(row),
    event: row.e_sequence === null || row.e_sequence === undefined ? null : toResult(row, 'e_'),
  }));
}

/**
 * Matching results of the queue after the subscription's cursor, up to the log's head, with
 * everything `event.deliver` carries. The cursor and the head are read by the statement itself, so
 * a turn sends it in its first round trip, right after the lock, before it knows either; `from`,
 * the cursor as this node last saw it, bounds the index range (MariaDB's planner does not take a
 * subquery as the bound of a range on the second column of an index). A cursor that another node
 * moved meanwhile costs the rows between, never a wrong answer. The head read here may be newer
 * than the one the turn's context read just before; the turn ignores what lies beyond that one
 * (`engine/turn.ts`).
 */
export function logResults(args: {
  subscriptionId: string;
  queueId: string;
  types: readonly string[];
  from: bigint;
  limit: number;
}): Query {
  return query(
    `SELECT ${RESULT_COLUMNS} FROM results
      WHERE queue_id = ? AND sequence > ? AND type IN (${marks(args.types.length)})
        AND sequence > (SELECT cursor_sequence FROM subscriptions WHERE id = ?)
        AND sequence <= (SELECT head_sequence FROM result_head WHERE id = 1)
      ORDER BY sequence LIMIT ${Math.trunc(args.limit)}`,
    [args.queueId, args.from.toString(), ...args.types, args.subscriptionId],
  );
}

export function readResults(rows: readonly Row[]): ResultRecord[] {
  return rows.map((row) => toResult(row));
}

/** New deliveries in one statement. */
export function insertDeliveries(deliveries: readonly Delivery[]): Command | null {
  if (deliveries.length === 0) return null;
  const columns = DELIVERY_COLUMNS.split(', ').length;
  const row = `(${marks(columns)})`;
  return command(
    `INSERT INTO deliveries (${DELIVERY_COLUMNS}) VALUES ${deliveries.map(() => row).join(', ')}`,
    deliveries.flatMap((d) => [
      d.id,
      d.subscriptionId,
      d.sequence.toString(),
      d.eventId,
      d.revision.toString(),
      d.state,
      d.createdAt,
      d.availableAt,
      d.leaseEpoch.toString(),
      d.leaseUntil,
      d.leaseDigest,
      d.leaseSession,
      d.attempts,
      d.attemptBudget,
      d.acknowledgedAt,
    ]),
  );
}

/**
 * Writes existing deliveries as the domain decided them (a lease of a PENDING delivery, a recovered
 * lease, a lease of a recovered one), every changing column from the record: one statement.
 */
export function rewriteDeliveries(deliveries: readonly Delivery[]): Command | null {
  if (deliveries.length === 0) return null;
  const set = (column: string, value: (d: Delivery) => unknown) => {
    const c = byId(deliveries, value);
    return { sql: `${column} = ${c.sql}`, params: c.params };
  };
  const columns = [
    set('state', (d) => d.state),
    set('available_at', (d) => d.availableAt),
    set('lease_until', (d) => d.leaseUntil),
    set('lease_session', (d) => d.leaseSession),
    set('lease_epoch', (d) => d.leaseEpoch.toString()),
    set('lease_digest', (d) => d.leaseDigest),
    set('attempts', (d) => d.attempts),
    set('revision', (d) => d.revision.toString()),
  ];
  return command(`UPDATE deliveries SET ${columns.map((c) => c.sql).join(', ')} WHERE id IN (${marks(deliveries.length)})`, [
    ...columns.flatMap((c) => c.params),
    ...deliveries.map((d) => d.id),
  ]);
}

// --- the sweep -----------------------------------------------------------------------------------

/** Subscriptions whose earliest lease may have ended by the database's time, oldest first. */
export function dueForRecovery(sql: Sql, limit: number): Query {
  const now = sql.phrases.nowMs;
  return query(`SELECT id FROM subscriptions WHERE lease_check_at <= ${now} ORDER BY lease_check_at LIMIT ${Math.trunc(limit)}`);
}

/**
 * @module
 * Rows as the database returns them, and their conversion to records: the values the store
 * returns. Times are epoch milliseconds; the wire layer (`wire/json.ts`) renders the contract's
 * JSON from these records.
 */
import type { AckTarget, Delivery, DeliveryState } from '../domain/delivery.ts';
import type { EventType, SubscriptionRecord } from '../domain/subscription.ts';
import { big, num, numOrNull, type Row } from './sql.ts';

const text = (value: unknown): string | null => (value === null || value === undefined ? null : String(value));

/** Stored columns, in insert order. */
export const SUBSCRIPTION_COLUMNS =
  'id, namespace_id, application_id, credential_id, queue_id, name, revision, enabled, types, cursor_sequence, max_pending, max_attempts, created_at, updated_at, retired_at, retired_sequence';

/**
 * What a subscription read selects: the stored columns and `pending_count`, which the delivery
 * engine keeps on the row in the transactions that materialize and acknowledge (see
 * `tables/define.ts`).
 */
export const SUBSCRIPTION_SELECT = `${SUBSCRIPTION_COLUMNS}, pending_count`;

export function toSubscription(row: Row): SubscriptionRecord {
  return {
    id: String(row.id),
    namespaceId: String(row.namespace_id),
    applicationId: String(row.application_id),
    credentialId: String(row.credential_id),
    queueId: String(row.queue_id),
    name: String(row.name),
    revision: big(row.revision),
    enabled: num(row.enabled) === 1,
    types: String(row.types).split(',').filter(Boolean),
    cursorSequence: big(row.cursor_sequence),
    pendingCount: num(row.pending_count),
    maxPending: num(row.max_pending),
    maxAttempts: num(row.max_attempts),
    createdAt: num(row.created_at),
    updatedAt: num(row.updated_at),
    retiredAt: numOrNull(row.retired_at),
    retiredSequence: row.retired_sequence === null || row.retired_sequence === undefined ? null : big(row.retired_sequence),
  };
}

export const DELIVERY_COLUMNS =
  'id, subscription_id, sequence, event_id, revision, state, created_at, available_at, lease_epoch, lease_until, lease_digest, lease_session, attempts, attempt_budget, acknowledged_at';

export function toDelivery(row: Row): Delivery {
  return {
    id: String(row.id),
    subscriptionId: String(row.subscription_id),
    sequence: big(row.sequence),
    eventId: String(row.event_id),
    revision: big(row.revision),
    state: String(row.state) as DeliveryState,
    createdAt: num(row.created_at),
    availableAt: num(row.available_at),
    leaseEpoch: big(row.lease_epoch),
    leaseUntil: numOrNull(row.lease_until),
    leaseDigest: text(row.lease_digest),
    leaseSession: text(row.lease_session),
    attempts: num(row.attempts),
    attemptBudget: num(row.attempt_budget),
    acknowledgedAt: numOrNull(row.acknowledged_at),
  };
}

/** The columns an ACK is decided with (`AckTarget`): a turn reads only these for the deliveries its ACKs name. */
export const ACK_COLUMNS = 'id, subscription_id, event_id, state, revision, lease_epoch, lease_digest, lease_session, acknowledged_at';

export function toAckTarget(row: Row): AckTarget {
  return {
    id: String(row.id),
    subscriptionId: String(row.subscription_id),
    eventId: String(row.event_id),
    state: String(row.state) as DeliveryState,
    revision: big(row.revision),
    leaseEpoch: big(row.lease_epoch),
    leaseDigest: text(row.lease_digest),
    leaseSession: text(row.lease_session),
    acknowledgedAt: numOrNull(row.acknowledged_at),
  };
}

export const RESULT_COLUMNS =
  'sequence, id, queue_id, type, task_id, task_revision, occurred_at, details, result, effect_uncertain, current_attempt_id, traceparent, tracestate';

/** One entry of the result log. `details` and `result` are the exact JSON text that was published. */
export interface ResultRecord {
  readonly sequence: bigint;
  readonly id: string;
  readonly queueId: string;
  readonly type: EventType;
  readonly taskId: string;
  readonly taskRevision: string;
  readonly occurredAt: number;
  readonly details: string;
  readonly result: string | null;
  readonly effectUncertain: boolean;
  readonly currentAttemptId: string | null;
  /** The publish's W3C trace context, as published, or null (spec/README.md, Trace context). */
  readonly traceparent: string | null;
  readonly tracestate: string | null;
}

/**
 * The result columns of table alias `table`, each renamed with `prefix`: for a statement that
 * reads a delivery and its event in one row (`toResult(row, prefix)` reads them back).
 */
export function resultColumnsAs(table: string, prefix: string): string {
  return RESULT_COLUMNS.split(', ')
    .map((column) => `${table}.${column} AS ${prefix}${column}`)
    .join(', ');
}

export function toResult(row: Row, prefix = ''): ResultRecord {
  return {
    sequence: big(row[`${prefix}sequence`]),
    id: String(row[`${prefix}id`]),
    queueId: String(row[`${prefix}queue_id`]),
    type: String(row[`${prefix}type`]) as EventType,
    taskId: String(row[`${prefix}task_id`]),
    taskRevision: String(row[`${prefix}task_revision`]),
    occurredAt: num(row[`${prefix}occurred_at`]),
    details: String(row[`${prefix}details`]),
    result: text(row[`${prefix}result`]),
    effectUncertain: num(row[`${prefix}effect_uncertain`]) === 1,
    currentAttemptId: text(row[`${prefix}current_attempt_id`]),
    traceparent: text(row[`${prefix}traceparent`]),
    tracestate: text(row[`${prefix}tracestate`]),
  };
}

/** One entry of a subscription's audit trail; `detail` holds what the action recorded. */
export interface HistoryRecord {
  readonly id: string;
  readonly action: string;
  readonly reason: string;
  readonly revision: bigint;
  readonly deliveryId: string | null;
  readonly detail: Readonly<Record<string, unknown>>;
  readonly createdAt: number;
}

export function toHistory(row: Row): HistoryRecord {
  return {
    id: String(row.id),
    action: String(row.action),
    reason: String(row.reason),
    revision: big(row.revision),
    deliveryId: text(row.delivery_id),
    detail: JSON.parse(String(row.detail)) as Record<string, unknown>,
    createdAt: num(row.created_at),
  };
}

/** A session bound on a live node, with the leases it holds and when it and its node last renewed. */
export interface SessionRecord {
  readonly id: string;
  readonly nodeId: string;
  readonly capacity: number;
  readonly leasesHeld: number;
  /** When the session connected. */
  readonly createdAt: number;
  readonly lastSeenAt: number;
  readonly nodeLastSeenAt: number;
}

export function toSession(row: Row): SessionRecord {
  return {
    id: String(row.id),
    nodeId: String(row.node_id),
    capacity: num(row.capacity),
    leasesHeld: num(row.leases_held),
    createdAt: num(row.created_at),
    lastSeenAt: num(row.last_seen_at),
    nodeLastSeenAt: num(row.node_last_seen_at),
  };
}

/** A queue of a credential's queue set. */
export interface QueueRecord {
  readonly id: string;
  readonly name: string;
  readonly createdAt: number;
}

export function toQueue(row: Row): QueueRecord {
  return { id: String(row.id), name: String(row.name), createdAt: num(row.created_at) };
}

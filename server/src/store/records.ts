/**
 * @module
 * Rows as the database returns them, and their conversion to domain values and to the contract's
 * JSON shapes. Times are epoch milliseconds in the database and UTC RFC 3339 strings on the wire.
 */
import { trustedRawJson } from '@orbit/spec/codec';
import type { Delivery, DeliveryState } from '../domain/delivery.ts';
import { TASK_STATE, type EventType, type SubscriptionRecord } from '../domain/subscription.ts';
import { big, num, numOrNull, pendingState, type Row } from './sql.ts';

export function iso(ms: number): string {
  return new Date(ms).toISOString();
}

/** Stored columns, in insert order. */
export const SUBSCRIPTION_COLUMNS =
  'id, namespace_id, application_id, credential_id, queue_id, name, revision, enabled, types, cursor_sequence, max_pending, max_attempts, created_at, updated_at, retired_at, retired_sequence';

/**
 * What a subscription read selects: the stored columns and `pending_count`, derived from the
 * deliveries that are not ACKED. Deriving it keeps ACKs off the subscription row, the hottest row.
 */
export const SUBSCRIPTION_SELECT = `${SUBSCRIPTION_COLUMNS}, (SELECT COUNT(*) FROM deliveries d WHERE d.subscription_id = subscriptions.id AND ${pendingState('d.state')}) AS pending_count`;

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

export function subscriptionJson(s: SubscriptionRecord): Record<string, unknown> {
  const json: Record<string, unknown> = {
    id: s.id,
    queue_id: s.queueId,
    credential_id: s.credentialId,
    name: s.name,
    revision: s.revision.toString(),
    enabled: s.enabled,
    types: s.types,
    cursor_sequence: s.cursorSequence.toString(),
    pending_count: s.pendingCount,
    max_pending: s.maxPending,
    max_attempts: s.maxAttempts,
    created_at: iso(s.createdAt),
    updated_at: iso(s.updatedAt),
  };
  if (s.retiredAt !== null) json.retired_at = iso(s.retiredAt);
  if (s.retiredSequence !== null) json.retired_sequence = s.retiredSequence.toString();
  return json;
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
    leaseDigest: row.lease_digest === null || row.lease_digest === undefined ? null : String(row.lease_digest),
    leaseSession: row.lease_session === null || row.lease_session === undefined ? null : String(row.lease_session),
    attempts: num(row.attempts),
    attemptBudget: num(row.attempt_budget),
    acknowledgedAt: numOrNull(row.acknowledged_at),
  };
}

/** The public EventDelivery: no secret, no digest, no session. */
export function deliveryJson(d: Delivery): Record<string, unknown> {
  const json: Record<string, unknown> = {
    id: d.id,
    subscription_id: d.subscriptionId,
    event_id: d.eventId,
    sequence: d.sequence.toString(),
    revision: d.revision.toString(),
    state: d.state,
    created_at: iso(d.createdAt),
    available_at: iso(d.availableAt),
    lease_epoch: d.leaseEpoch.toString(),
    attempts: d.attempts,
    attempt_budget: d.attemptBudget,
  };
  if (d.state === 'LEASED' && d.leaseUntil !== null) json.lease_until = iso(d.leaseUntil);
  if (d.state === 'ACKED' && d.acknowledgedAt !== null) json.acknowledged_at = iso(d.acknowledgedAt);
  return json;
}

export const RESULT_COLUMNS =
  'sequence, id, queue_id, type, task_id, task_revision, occurred_at, details, result, effect_uncertain, current_attempt_id';

/**
 * The immutable ResultEvent. `details` and `result` are stored as the exact JSON text that was
 * published (checked as strict JSON then) and go back out as that text, so no digit is lost.
 */
export function eventJson(row: Row): Record<string, unknown> {
  const type = String(row.type) as EventType;
  const snapshot: Record<string, unknown> = {
    schema_version: 1,
    task_id: String(row.task_id),
    queue_id: String(row.queue_id),
    state: TASK_STATE[type],
    revision: String(row.task_revision),
    effect_uncertain: num(row.effect_uncertain) === 1,
  };
  if (row.result !== null && row.result !== undefined) snapshot.result = trustedRawJson(String(row.result));
  if (row.current_attempt_id !== null && row.current_attempt_id !== undefined) snapshot.current_attempt_id = String(row.current_attempt_id);
  return {
    id: String(row.id),
    sequence: big(row.sequence).toString(),
    type,
    aggregate_kind: 'task',
    aggregate_id: String(row.task_id),
    aggregate_revision: String(row.task_revision),
    occurred_at: iso(num(row.occurred_at)),
    details: trustedRawJson(String(row.details)),
    snapshot,
  };
}

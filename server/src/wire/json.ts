/**
 * @module
 * The contract's JSON shapes, rendered from the store's records: one mapper per shape, used by the
 * HTTP API and the WebSocket frames alike. Times are epoch milliseconds in records and UTC RFC 3339
 * strings on the wire; counters and versions are uint64 decimal strings; a result's `details` and
 * `result` go out as the exact text that was published (spec/README.md, The result log).
 */
import { trustedRawJson } from '@orbit/spec/codec';
import type {
  Credential,
  EventDelivery,
  Queue,
  ResultEvent,
  ResultSnapshot,
  TraceContext,
  Subscription,
  SubscriptionHistoryEntry,
  SubscriptionSession,
} from '@orbit/generated';
import type { Delivery } from '../domain/delivery.ts';
import { TASK_STATE, type SubscriptionRecord } from '../domain/subscription.ts';
import type { Principal } from '../store/store.ts';
import type { HistoryRecord, QueueRecord, ResultRecord, SessionRecord } from '../store/records.ts';

/**
 * The few last times rendered: a turn stamps its deliveries with one `now` and one lease end, and
 * a batch of results shares its `occurred_at`, so one frame after another renders the same ones.
 */
const ISO_CACHE = new Map<number, string>();
const ISO_CACHE_SIZE = 16;

export function iso(ms: number): string {
  let text = ISO_CACHE.get(ms);
  if (text === undefined) {
    text = new Date(ms).toISOString();
    if (ISO_CACHE.size >= ISO_CACHE_SIZE) ISO_CACHE.delete(ISO_CACHE.keys().next().value as number);
    ISO_CACHE.set(ms, text);
  }
  return text;
}

export function subscriptionJson(s: SubscriptionRecord): Subscription {
  return {
    id: s.id,
    queue_id: s.queueId,
    credential_id: s.credentialId,
    name: s.name,
    revision: s.revision.toString(),
    enabled: s.enabled,
    types: s.types as Subscription['types'],
    cursor_sequence: s.cursorSequence.toString(),
    pending_count: s.pendingCount,
    max_pending: s.maxPending,
    max_attempts: s.maxAttempts,
    created_at: iso(s.createdAt),
    updated_at: iso(s.updatedAt),
    ...(s.retiredAt !== null ? { retired_at: iso(s.retiredAt) } : {}),
    ...(s.retiredSequence !== null ? { retired_sequence: s.retiredSequence.toString() } : {}),
  };
}

/** The public EventDelivery: no secret, no digest, no session. */
export function deliveryJson(d: Delivery): EventDelivery {
  return {
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
    ...(d.state === 'LEASED' && d.leaseUntil !== null ? { lease_until: iso(d.leaseUntil) } : {}),
    ...(d.state === 'ACKED' && d.acknowledgedAt !== null ? { acknowledged_at: iso(d.acknowledgedAt) } : {}),
  };
}

/** The immutable ResultEvent; `details` and `result` are the stored text, verbatim. */
export function eventJson(r: ResultRecord): ResultEvent {
  const snapshot: ResultSnapshot = {
    schema_version: 1,
    task_id: r.taskId,
    queue_id: r.queueId,
    state: TASK_STATE[r.type] as ResultSnapshot['state'],
    revision: r.taskRevision,
    effect_uncertain: r.effectUncertain,
    ...(r.result !== null ? { result: trustedRawJson(r.result) } : {}),
    ...(r.currentAttemptId !== null ? { current_attempt_id: r.currentAttemptId } : {}),
  };
  return {
    id: r.id,
    sequence: r.sequence.toString(),
    type: r.type,
    aggregate_kind: 'task',
    aggregate_id: r.taskId,
    aggregate_revision: r.taskRevision,
    occurred_at: iso(r.occurredAt),
    // RawJson stands for the object it holds; the serializer writes its text.
    details: trustedRawJson(r.details) as unknown as ResultEvent['details'],
    snapshot,
    ...(r.traceparent !== null ? { trace_context: traceContextJson(r.traceparent, r.tracestate) } : {}),
  };
}

/** The stored trace context as the contract's `TraceContext` (spec/README.md, Trace context). */
function traceContextJson(traceparent: string, tracestate: string | null): TraceContext {
  return tracestate !== null ? { traceparent, tracestate } : { traceparent };
}

/**
 * `JSON.stringify(eventJson(r))` with `details` and `result` as their stored text, written out
 * directly: the body of every `event.deliver`, so the generic serializer's walk for raw values is
 * spared. Every other value goes through `JSON.stringify`; the shape and order are `eventJson`'s.
 */
export function eventText(r: ResultRecord): string {
  const q = JSON.stringify;
  const result = r.result !== null ? `,"result":${r.result}` : '';
  const attempt = r.currentAttemptId !== null ? `,"current_attempt_id":${q(r.currentAttemptId)}` : '';
  const trace = r.traceparent !== null ? `,"trace_context":${q(traceContextJson(r.traceparent, r.tracestate))}` : '';
  const snapshot = `{"schema_version":1,"task_id":${q(r.taskId)},"queue_id":${q(r.queueId)},"state":${q(TASK_STATE[r.type])},"revision":${q(r.taskRevision)},"effect_uncertain":${r.effectUncertain}${result}${attempt}}`;
  return `{"id":${q(r.id)},"sequence":"${r.sequence}","type":${q(r.type)},"aggregate_kind":"task","aggregate_id":${q(r.taskId)},"aggregate_revision":${q(r.taskRevision)},"occurred_at":"${iso(r.occurredAt)}","details":${r.details},"snapshot":${snapshot}${trace}}`;
}

/** Which `detail` fields each history entry may carry; anything else an older row holds stays internal. */
const DETAIL_FIELDS = ['from_sequence', 'retired_sequence', 'additional_attempts', 'attempt_budget'] as const;

export function historyJson(h: HistoryRecord): SubscriptionHistoryEntry {
  const entry: Record<string, unknown> = {
    id: h.id,
    action: h.action,
    reason: h.reason,
    revision: h.revision.toString(),
    created_at: iso(h.createdAt),
  };
  if (h.deliveryId !== null) entry.delivery_id = h.deliveryId;
  for (const field of DETAIL_FIELDS) if (h.detail[field] !== undefined) entry[field] = h.detail[field];
  return entry as SubscriptionHistoryEntry;
}

export function sessionJson(s: SessionRecord): SubscriptionSession {
  return {
    session_id: s.id,
    node_id: s.nodeId,
    capacity: s.capacity,
    leases_held: s.leasesHeld,
    connected_at: iso(s.createdAt),
    last_seen_at: iso(s.lastSeenAt),
    node_last_seen_at: iso(s.nodeLastSeenAt),
  };
}

export function queueJson(q: QueueRecord): Queue {
  return { id: q.id, name: q.name, created_at: iso(q.createdAt) };
}

/** The calling credential as `GET /v1/credential` shows it: never its token or a digest of it. */
export function credentialJson(p: Principal): Credential {
  return {
    credential_id: p.credentialId,
    namespace_id: p.namespaceId,
    application_id: p.applicationId,
    permissions: [...p.permissions].sort() as Credential['permissions'],
    queue_count: p.queueIds.size,
  };
}

/**
 * @module
 * The rules of subscriptions as pure decisions (spec/rules.md#s2-1 to #s3-15, #s9-2, #s9-3): the
 * fixed type order, defaults and limits, where a new subscription starts, and whether a create,
 * configure or retire is accepted. Each decision takes what the store loaded and the validated
 * command and returns the next record or a refusal (`decision.ts`); the store saves the record.
 */
import {
  ENUM_VALUES,
  type ConfigureSubscriptionRequest,
  type CreateSubscriptionRequest,
  type EventType,
  type ResultType,
  type RetireSubscriptionRequest,
} from '@orbit/generated';
import { SUBSCRIPTION_DEFAULTS } from '@orbit/spec/protocol';
import { checkRevision, refuse, isRefused, type Decision } from './decision.ts';

export type { EventType, ResultType };

/** The four subscribable result types (the contract's `ResultType`) in their fixed, normalized order: sorted. */
export const RESULT_TYPES: readonly ResultType[] = [...ENUM_VALUES.ResultType].sort();

/** Every type the log accepts (`EventType`); `task.requeued` is logged but never matches a subscription. */
export const EVENT_TYPES: readonly EventType[] = ENUM_VALUES.EventType;

export const DEFAULT_MAX_PENDING: number = SUBSCRIPTION_DEFAULTS.max_pending;
export const DEFAULT_MAX_ATTEMPTS: number = SUBSCRIPTION_DEFAULTS.max_attempts;
/** Non-retired subscriptions per namespace; a paused one still counts. */
export const SUBSCRIPTION_LIMIT = 64;
export const MAX_ATTEMPT_BUDGET = 1_000_000;

/** Omitted or `[]` means all four; otherwise the set in the fixed order (duplicates are refused earlier by the schema). */
export function normalizeTypes(types: readonly string[] | undefined): ResultType[] {
  if (!types || types.length === 0) return [...RESULT_TYPES];
  return RESULT_TYPES.filter((t) => types.includes(t));
}

/** `0` or omitted picks the default. */
export function effectiveMaxPending(value: number | undefined): number {
  return value === undefined || value === 0 ? DEFAULT_MAX_PENDING : value;
}

export function effectiveMaxAttempts(value: number | undefined): number {
  return value === undefined || value === 0 ? DEFAULT_MAX_ATTEMPTS : value;
}

/** The snapshot state a result type records. */
export const TASK_STATE: Readonly<Record<EventType, string>> = {
  'task.succeeded': 'SUCCEEDED',
  'task.failed': 'FAILED',
  'task.cancelled': 'CANCELLED',
  'task.needs_review': 'NEEDS_REVIEW',
  'task.requeued': 'QUEUED',
};

/** A subscription as the store keeps it; `pendingCount` is derived (see `PENDING_STATES`). */
export interface SubscriptionRecord {
  readonly id: string;
  readonly namespaceId: string;
  readonly applicationId: string;
  readonly credentialId: string;
  readonly queueId: string;
  readonly name: string;
  readonly revision: bigint;
  readonly enabled: boolean;
  readonly types: string[];
  readonly cursorSequence: bigint;
  readonly pendingCount: number;
  readonly maxPending: number;
  readonly maxAttempts: number;
  readonly createdAt: number;
  readonly updatedAt: number;
  readonly retiredAt: number | null;
  readonly retiredSequence: bigint | null;
}

/** Where the result log stands: the committed head and the retention boundary (results at or below it are gone). */
export interface LogPosition {
  readonly head: bigint;
  readonly boundary: bigint;
}

/**
 * A cursor below the retention boundary can never be drained: the results it would materialize
 * next are gone (spec/README.md, Retention). Its sessions end with EVENT_HISTORY_EXPIRED.
 */
export function historyExpired(cursor: bigint, boundary: bigint): boolean {
  return cursor < boundary;
}

/**
 * The exclusive start cursor of a new subscription (spec/rules.md#s2-5, #s2-20). Omitted or null:
 * the committed head. `"0"`: the whole log that still exists, so after a prune the retention
 * boundary. Any other value is exact, and must lie within [boundary, head].
 */
export function startCursor(fromSequence: string | null | undefined, position: LogPosition): Decision<bigint> {
  const { head, boundary } = position;
  const from = fromSequence === undefined || fromSequence === null ? head : fromSequence === '0' ? boundary : BigInt(fromSequence);
  if (from > head) return refuse('INVALID_ARGUMENT', `from_sequence ${from} is beyond the committed head ${head}`);
  if (from < boundary) return refuse('EVENT_HISTORY_EXPIRED', `from_sequence ${from} is below the retention boundary ${boundary}`);
  return from;
}

export interface CreateState extends LogPosition {
  /** The id the new subscription gets. */
  readonly id: string;
  /** The creating credential and its application and namespace (spec/rules.md#s1-4, #s1-5). */
  readonly owner: { readonly namespaceId: string; readonly applicationId: string; readonly credentialId: string };
  /** Subscriptions of the namespace that are not retired, paused ones included. */
  readonly activeCount: number;
  /** Whether a subscription of the namespace that is not retired already has this name. */
  readonly nameTaken: boolean;
  readonly now: number;
}

/**
 * A create (spec/rules.md#s2-2 to #s2-7, #s2-19, #s2-20): refused at the namespace's limit, on a
 * name clash, or for a start outside the log; otherwise the new record, revision 1, enabled.
 */
export function decideCreate(state: CreateState, command: CreateSubscriptionRequest): Decision<SubscriptionRecord> {
  if (state.activeCount >= SUBSCRIPTION_LIMIT) {
    return refuse('SUBSCRIPTION_LIMIT', `the namespace already has ${SUBSCRIPTION_LIMIT} subscriptions that are not retired`);
  }
  if (state.nameTaken) return refuse('STATE_CONFLICT', `a subscription named "${command.name}" already exists in this namespace`);
  const from = startCursor(command.from_sequence, state);
  if (isRefused(from)) return from;
  return {
    id: state.id,
    namespaceId: state.owner.namespaceId,
    applicationId: state.owner.applicationId,
    credentialId: state.owner.credentialId,
    queueId: command.queue_id,
    name: command.name,
    revision: 1n,
    enabled: true,
    types: normalizeTypes(command.types),
    cursorSequence: from,
    pendingCount: 0,
    maxPending: effectiveMaxPending(command.max_pending),
    maxAttempts: effectiveMaxAttempts(command.max_attempts),
    createdAt: state.now,
    updatedAt: state.now,
    retiredAt: null,
    retiredSequence: null,
  };
}

/**
 * A configure (spec/rules.md#s3-7, #s3-9, #s3-15): only `enabled` changes, and every accepted
 * command bumps the revision, even to the same value. A retired subscription is never configured.
 */
export function decideConfigure(
  current: SubscriptionRecord,
  command: ConfigureSubscriptionRequest,
  now: number,
): Decision<SubscriptionRecord> {
  if (current.retiredAt !== null) return refuse('STATE_CONFLICT', 'the subscription is retired');
  const stale = checkRevision('subscription', current.revision, command.expected_revision);
  if (stale) return stale;
  return { ...current, enabled: command.enabled, revision: current.revision + 1n, updatedAt: now };
}

export interface RetireState extends LogPosition {
  readonly current: SubscriptionRecord;
  /** The subscription's deliveries that count as pending (PENDING, LEASED, EXPIRED). */
  readonly openDeliveries: number;
  /** Whether a matching result after the cursor, up to the head, has no delivery yet. */
  readonly hasUnmaterialized: boolean;
  readonly now: number;
}

/**
 * A retire (spec/rules.md#s9-2, #s9-3): refused when already retired, at a stale revision, while a
 * delivery is not ACKED, or while a matching result waits to be materialized, unless the cursor
 * fell behind the retention boundary, where nothing can be drained any more (spec/README.md,
 * Subscriptions). The retired record keeps the committed head as `retired_sequence`.
 */
export function decideRetire(state: RetireState, command: RetireSubscriptionRequest): Decision<SubscriptionRecord> {
  const { current } = state;
  if (current.retiredAt !== null) return refuse('STATE_CONFLICT', 'the subscription is already retired');
  const stale = checkRevision('subscription', current.revision, command.expected_revision);
  if (stale) return stale;
  if (state.openDeliveries > 0) return refuse('STATE_CONFLICT', `${state.openDeliveries} deliveries are not acknowledged yet`);
  if (state.hasUnmaterialized && !historyExpired(current.cursorSequence, state.boundary)) {
    return refuse('STATE_CONFLICT', 'matching results are not materialized yet; consume them first');
  }
  return {
    ...current,
    enabled: false,
    revision: current.revision + 1n,
    updatedAt: state.now,
    retiredAt: state.now,
    retiredSequence: state.head,
  };
}

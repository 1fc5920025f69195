/**
 * @module
 * Rules for subscriptions that need no I/O: the fixed type order, defaults and limits
 * (spec/rules.md#s2-4 to #s2-7, #s2-15, #s2-19).
 */

/** The four subscribable result types in their fixed, normalized order. */
export const RESULT_TYPES = ['task.cancelled', 'task.failed', 'task.needs_review', 'task.succeeded'] as const;
export type ResultType = (typeof RESULT_TYPES)[number];

/** Every type the log accepts; `task.requeued` is logged but never matches a subscription. */
export const EVENT_TYPES = [...RESULT_TYPES, 'task.requeued'] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export const DEFAULT_MAX_PENDING = 100;
export const DEFAULT_MAX_ATTEMPTS = 20;
/** Non-retired subscriptions per namespace; a paused one still counts. */
export const SUBSCRIPTION_LIMIT = 64;
export const MAX_ATTEMPT_BUDGET = 1_000_000;

/** Omitted or `[]` means all four; otherwise the set in the fixed order (duplicates are refused earlier by the schema). */
export function normalizeTypes(types: readonly string[] | undefined): ResultType[] {
  if (!types || types.length === 0) return [...RESULT_TYPES];
  return RESULT_TYPES.filter((t) => types.includes(t));
}

export function isResultType(type: string): type is ResultType {
  return (RESULT_TYPES as readonly string[]).includes(type);
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

/**
 * @module
 * Ensuring a subscription: the call a program makes at start so that its second run finds what
 * the first one created (docs/sdk.md, Ensuring a subscription). It creates with a stable
 * Idempotency-Key; when the name is taken (`STATE_CONFLICT`), it finds the subscription by name in
 * the queue and compares its settings with the ones asked for. Settings that differ are an error
 * that names each of them, never a silent change: only `enabled` can change after creation
 * (spec/README.md, Subscriptions), so the program, not the SDK, decides what to do.
 */
import { createHash } from 'node:crypto';
import { ENUM_VALUES, type CreateSubscriptionRequest, type ResultType } from '@orbit/generated';
import { SUBSCRIPTION_DEFAULTS } from '@orbit/spec/protocol';
import type { CallOptions, OrbitClient } from './client.ts';
import { OrbitError } from './errors.ts';
import type { Subscription } from './wire.ts';

export interface EnsureSubscriptionOptions extends CallOptions {
  /**
   * The Idempotency-Key of the create. Default: `ensure-` and the SHA-256 of the request, so every
   * run of the same program sends the same key, and a request with other settings another one.
   */
  readonly key?: string;
}

export interface EnsureSubscriptionResult {
  /** The subscription as it is now (a paused one stays paused: `enabled` tells). */
  readonly subscription: Subscription;
  /** True when this call created it; false when it existed (made by an earlier run or another process). */
  readonly created: boolean;
}

/** A setting of the existing subscription that is not the one asked for (both after defaults). */
export interface SettingDifference {
  readonly field: 'types' | 'max_pending' | 'max_attempts';
  readonly existing: unknown;
  readonly requested: unknown;
}

/** The subscription exists under the name with other settings: code `STATE_CONFLICT`, nothing was changed. */
export class SubscriptionMismatchError extends OrbitError {
  /** The existing subscription, as the server listed it. */
  readonly subscription: Subscription;
  readonly differences: readonly SettingDifference[];

  constructor(subscription: Subscription, differences: readonly SettingDifference[]) {
    const list = differences.map((d) => `${d.field} is ${JSON.stringify(d.existing)}, asked ${JSON.stringify(d.requested)}`).join('; ');
    super('STATE_CONFLICT', `subscription "${subscription.name}" (${subscription.id}) exists with other settings: ${list}`, {
      status: null,
    });
    this.subscription = subscription;
    this.differences = differences;
  }
}

/** The four result types in the contract's fixed order (spec/README.md, Subscriptions). */
const RESULT_TYPES: readonly ResultType[] = [...ENUM_VALUES.ResultType].sort();

/** The settings a create request asks for, with the server's defaults applied (spec/rules.md#s2-4, #s2-6, #s2-7). */
export function requestedSettings(body: CreateSubscriptionRequest): Pick<Subscription, SettingDifference['field']> {
  const types = body.types ?? [];
  return {
    types: types.length === 0 ? [...RESULT_TYPES] : RESULT_TYPES.filter((t) => types.includes(t)),
    max_pending: body.max_pending || SUBSCRIPTION_DEFAULTS.max_pending,
    max_attempts: body.max_attempts || SUBSCRIPTION_DEFAULTS.max_attempts,
  };
}

/**
 * How an existing subscription differs from a create request, field by field; empty when it is
 * what the request would have made. `from_sequence` is not compared: it only says where a new
 * subscription starts, and an existing one has moved on (`cursor_sequence`).
 */
export function subscriptionDifferences(existing: Subscription, body: CreateSubscriptionRequest): SettingDifference[] {
  const requested = requestedSettings(body);
  const differences: SettingDifference[] = [];
  if (existing.types.join() !== requested.types.join())
    differences.push({ field: 'types', existing: existing.types, requested: requested.types });
  for (const field of ['max_pending', 'max_attempts'] as const)
    if (existing[field] !== requested[field]) differences.push({ field, existing: existing[field], requested: requested[field] });
  return differences;
}

/** The default key: the same request always gives the same key (keys sorted, so their order does not matter). */
export function ensureKey(body: CreateSubscriptionRequest): string {
  const canonical = JSON.stringify(body, Object.keys(body).sort());
  return `ensure-${createHash('sha256').update(canonical).digest('hex')}`;
}

/**
 * The subscription named `body.name` in `body.queue_id`, created if missing: safe to call at every
 * start of a program. Throws {@link SubscriptionMismatchError} when it exists with other settings,
 * and `STATE_CONFLICT` when the name is taken where this credential cannot see it. Needs
 * `events:manage` and `events:read`. A function, not a method of the client, so that it uses only
 * the client's public calls.
 */
export async function ensureSubscription(
  client: OrbitClient,
  body: CreateSubscriptionRequest,
  options: EnsureSubscriptionOptions = {},
): Promise<EnsureSubscriptionResult> {
  const { key = ensureKey(body), ...call } = options;
  let taken: OrbitError;
  try {
    const { subscription, deduplicated } = await client.createSubscription(key, body, call);
    if (!deduplicated) return { subscription, created: true };
    // A replay returns the receipt's snapshot, as it was at creation: read what it is now.
    const current = await client.getSubscription(subscription.id, call);
    if (current.retired_at !== undefined)
      throw new OrbitError(
        'STATE_CONFLICT',
        `the Idempotency-Key ${key} replays the creation of subscription "${current.name}" (${current.id}), retired since: pass another key to create a new one`,
        { status: null },
      );
    return { subscription: current, created: false };
  } catch (error) {
    // STATE_CONFLICT on create means the name is taken (spec/openapi.yaml, CreateConflict).
    if (!(error instanceof OrbitError) || error.code !== 'STATE_CONFLICT' || error.status !== 409) throw error;
    taken = error;
  }
  for await (const existing of client.iterateSubscriptions({ queueId: body.queue_id }, call)) {
    if (existing.name !== body.name || existing.retired_at !== undefined) continue;
    const differences = subscriptionDifferences(existing, body);
    if (differences.length > 0) throw new SubscriptionMismatchError(existing, differences);
    return { subscription: existing, created: false };
  }
  // Names are unique in the namespace; a subscription of another queue or of another credential
  // is not in this listing (spec/README.md, Errors: another credential's subscription is NOT_FOUND).
  throw new OrbitError(
    'STATE_CONFLICT',
    `the name "${body.name}" is taken by a subscription that is not in queue ${body.queue_id} or belongs to another credential`,
    { status: taken.status, ...(taken.requestId !== undefined ? { requestId: taken.requestId } : {}), cause: taken },
  );
}

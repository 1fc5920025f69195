/**
 * @module
 * The delivery state machine (spec/rules.md#s4-8 to #s4-27, #s6-13 to #s6-17; spec/README.md, A
 * delivery's life) as pure functions: each takes a delivery and a time and returns the next
 * delivery, a verdict or a refusal. The store persists what these decide; nothing here reads a
 * clock or a database.
 *
 * ```
 *   materialize ──► PENDING ──claim──► LEASED ──ack──► ACKED
 *                     ▲                  │
 *                     │   lease expires, │ lease expires,
 *                     └── attempts < budget   attempts = budget ──► EXPIRED
 *                                                                     │
 *                     PENDING ◄──────────── manual retry (+budget) ───┘
 * ```
 */
import { CAPACITY } from '@orbit/spec/protocol';
import { checkRevision, refuse, type Decision } from './decision.ts';
import { MAX_ATTEMPT_BUDGET, type SubscriptionRecord } from './subscription.ts';
import { ENUM_VALUES, type DeliveryState, type RetryDeliveryRequest } from '@orbit/generated';

/** The four delivery states (the contract's `DeliveryState`). */
export const DELIVERY_STATES: readonly DeliveryState[] = ENUM_VALUES.DeliveryState;
export type { DeliveryState };

/**
 * The states that still occupy the subscription's backlog (`pending_count`, `max_pending`): every
 * state but ACKED, attempts-exhausted EXPIRED included (spec/rules.md#s2-17). The store's SQL is
 * derived from this list, so the rule is written once.
 */
export const PENDING_STATES: readonly DeliveryState[] = DELIVERY_STATES.filter((state) => state !== 'ACKED');

/** Whether a delivery in this state still occupies the subscription's backlog. */
export function countsAsPending(state: DeliveryState): boolean {
  return PENDING_STATES.includes(state);
}

export interface Delivery {
  readonly id: string;
  readonly subscriptionId: string;
  readonly sequence: bigint;
  readonly eventId: string;
  readonly revision: bigint;
  readonly state: DeliveryState;
  readonly createdAt: number;
  readonly availableAt: number;
  readonly leaseEpoch: bigint;
  readonly leaseUntil: number | null;
  /** Digest of the newest lease secret; the secret itself is never stored. */
  readonly leaseDigest: string | null;
  readonly leaseSession: string | null;
  readonly attempts: number;
  readonly attemptBudget: number;
  readonly acknowledgedAt: number | null;
}

export interface RedeliveryPolicy {
  /** Delay before a recovered delivery is available again, after its first failed attempt. 0 = at once. */
  readonly backoffMs: number;
  readonly backoffMaxMs: number;
}

/** The settings the policy is made of (`ORBIT_REDELIVERY_BACKOFF_MS`, `ORBIT_REDELIVERY_BACKOFF_MAX_MS`). */
export interface RedeliverySettings {
  readonly redeliveryBackoffMs: number;
  readonly redeliveryBackoffMaxMs: number;
}

/** The one place the redelivery policy is made from the settings (spec/README.md, A delivery's life). */
export function redeliveryPolicy(settings: RedeliverySettings): RedeliveryPolicy {
  return { backoffMs: settings.redeliveryBackoffMs, backoffMaxMs: settings.redeliveryBackoffMaxMs };
}

/** How many deliveries one session may hold leased at once: an integer within `CAPACITY` (spec/rules.md#s5-11). */
export function isValidCapacity(capacity: number): boolean {
  return Number.isInteger(capacity) && capacity >= CAPACITY.min && capacity <= CAPACITY.max;
}

/** A session's capacity, checked when it binds, inside the binding transaction (spec/rules.md#s5-11). */
export function decideCapacity(capacity: number): Decision<number> {
  if (isValidCapacity(capacity)) return capacity;
  return refuse('INVALID_ARGUMENT', `capacity must be an integer from ${CAPACITY.min} to ${CAPACITY.max}`);
}

/**
 * How many deliveries one claim may lease to a connection (spec/rules.md#s5-11, #s5-20): the room
 * in its write queue, within its capacity less the leases it holds. `releasing` of those leases
 * have an ACK that commits in the claim's own transaction before the claim (store/acks.ts), so
 * they count as free. The database still caps a claim by capacity less the leases it sees; this
 * keeps every lease within what the write queue can take now.
 */
export function claimRoom(connection: { writable: number; capacity: number; held: number; releasing: number }): number {
  const held = Math.max(0, connection.held);
  const free = connection.capacity - held + Math.min(Math.max(0, connection.releasing), held);
  return Math.max(0, Math.min(connection.writable, free));
}

/** How long a connection with a partial window waits for a refill's worth of room (see `wantsClaim`). */
export const REFILL_WAIT_MS = 5;

/** The room a connection that holds deliveries waits for: half its capacity, at most half the write queue of 8. */
export function refillRoom(capacity: number): number {
  return Math.max(1, Math.min(4, Math.ceil(capacity / 2)));
}

/**
 * Whether a connection should take part in a claim now (spec/README.md, "The event engine
 * (`orbit.events.v1`)"). One that holds nothing claims at any room. One that holds deliveries
 * claims once a refill's worth of room is free, not at every slot an ACK frees: a claim costs the
 * same round trips for one delivery as for many. A partial window is claimed as well once it has
 * waited `REFILL_WAIT_MS`, so a consumer that waits for its whole window before it ACKs is held up
 * no longer than that.
 */
export function wantsClaim(connection: { room: number; held: number; capacity: number; partialForMs: number | null }): boolean {
  if (connection.room <= 0) return false;
  if (connection.held <= 0 || connection.room >= refillRoom(connection.capacity)) return true;
  return connection.partialForMs !== null && connection.partialForMs >= REFILL_WAIT_MS;
}

export function newDelivery(fields: {
  id: string;
  subscriptionId: string;
  sequence: bigint;
  eventId: string;
  attemptBudget: number;
  now: number;
}): Delivery {
  return {
    id: fields.id,
    subscriptionId: fields.subscriptionId,
    sequence: fields.sequence,
    eventId: fields.eventId,
    revision: 1n,
    state: 'PENDING',
    createdAt: fields.now,
    availableAt: fields.now,
    leaseEpoch: 0n,
    leaseUntil: null,
    leaseDigest: null,
    leaseSession: null,
    attempts: 0,
    attemptBudget: fields.attemptBudget,
    acknowledgedAt: null,
  };
}

export function isLeaseExpired(d: Delivery, now: number): boolean {
  return d.state === 'LEASED' && d.leaseUntil !== null && d.leaseUntil <= now;
}

/** Exponential backoff: `backoffMs · 2^(attempts-1)`, capped. */
export function redeliveryDelay(attempts: number, policy: RedeliveryPolicy): number {
  if (policy.backoffMs <= 0) return 0;
  const exponent = Math.min(Math.max(attempts - 1, 0), 30);
  return Math.min(policy.backoffMs * 2 ** exponent, policy.backoffMaxMs);
}

/**
 * An expired lease goes back to PENDING while attempts remain, else to EXPIRED. The lease epoch and
 * digest stay: the newest proof may still acknowledge late until a newer send replaces it.
 */
export function recoverExpiredLease(d: Delivery, now: number, policy: RedeliveryPolicy): Delivery {
  if (!isLeaseExpired(d, now)) return d;
  const exhausted = d.attempts >= d.attemptBudget;
  return {
    ...d,
    state: exhausted ? 'EXPIRED' : 'PENDING',
    availableAt: exhausted ? d.availableAt : now + redeliveryDelay(d.attempts, policy),
    leaseUntil: null,
    revision: d.revision + 1n,
  };
}

export function isClaimable(d: Delivery, now: number): boolean {
  return d.state === 'PENDING' && d.availableAt <= now && d.attempts < d.attemptBudget;
}

/** Leases a claimable delivery to a session: epoch + 1, attempts + 1, a new secret digest. */
export function lease(d: Delivery, args: { now: number; leaseMs: number; digest: string; session: string }): Delivery {
  if (!isClaimable(d, args.now)) throw new Error(`delivery ${d.id} is not claimable`);
  return {
    ...d,
    state: 'LEASED',
    leaseEpoch: d.leaseEpoch + 1n,
    leaseUntil: args.now + args.leaseMs,
    leaseDigest: args.digest,
    leaseSession: args.session,
    attempts: d.attempts + 1,
    revision: d.revision + 1n,
  };
}

export interface AckProof {
  readonly epoch: bigint;
  /** Digest of the presented lease secret. */
  readonly digest: string;
}

/** What an ACK is decided with: the delivery's state and revision, and its lease's proof and holder. */
export type AckTarget = Pick<
  Delivery,
  'id' | 'subscriptionId' | 'eventId' | 'state' | 'revision' | 'leaseEpoch' | 'leaseDigest' | 'leaseSession' | 'acknowledgedAt'
>;

export type AckVerdict<D extends AckTarget = Delivery> =
  | { readonly kind: 'acknowledged'; readonly delivery: D }
  | { readonly kind: 'duplicate'; readonly acknowledgedAt: number }
  | { readonly kind: 'lease_lost' };

/**
 * Decides an ACK (spec/rules.md#s6-14 to #s6-17). The newest proof acknowledges, late or not, until a newer send exists;
 * a repeat of the proof that acknowledged answers with the original time; anything else has lost
 * the lease. `digestsEqual` compares in constant time.
 */
export function decideAck<D extends AckTarget>(
  d: D,
  proof: AckProof,
  now: number,
  digestsEqual: (a: string, b: string) => boolean,
): AckVerdict<D> {
  const newest = d.leaseEpoch > 0n && proof.epoch === d.leaseEpoch && d.leaseDigest !== null && digestsEqual(d.leaseDigest, proof.digest);
  if (!newest) return { kind: 'lease_lost' };
  if (d.state === 'ACKED') return { kind: 'duplicate', acknowledgedAt: d.acknowledgedAt ?? now };
  return {
    kind: 'acknowledged',
    delivery: { ...d, state: 'ACKED', acknowledgedAt: now, leaseUntil: null, revision: d.revision + 1n },
  };
}

/**
 * The manual-retry edge of the state machine (spec/rules.md#s4-21, #s4-23, #s4-24): only from
 * EXPIRED; the budget grows and may not pass `maxBudget`; attempts, epoch and proof stay.
 */
export function retry(d: Delivery, additionalAttempts: number, now: number, maxBudget: number): Decision<Delivery> {
  if (d.state !== 'EXPIRED') return refuse('STATE_CONFLICT', `delivery is ${d.state}; only EXPIRED deliveries can be retried`);
  const budget = d.attemptBudget + additionalAttempts;
  if (budget > maxBudget) return refuse('STATE_CONFLICT', `the attempt budget would be ${budget}, above ${maxBudget}`);
  return { ...d, state: 'PENDING', attemptBudget: budget, availableAt: now, revision: d.revision + 1n };
}

export interface RetryState {
  readonly subscription: Pick<SubscriptionRecord, 'retiredAt'>;
  /** The delivery of that subscription the command names; null when there is none. */
  readonly delivery: Delivery | null;
  /** The database's time: `available_at` is compared with it by claims. */
  readonly now: number;
}

/**
 * A manual retry command (spec/rules.md#s4-21 to #s4-27): refused for a retired subscription, an
 * unknown delivery or a stale delivery revision, then decided by `retry` within
 * `MAX_ATTEMPT_BUDGET`.
 */
export function decideRetry(state: RetryState, command: RetryDeliveryRequest): Decision<Delivery> {
  if (state.subscription.retiredAt !== null) return refuse('STATE_CONFLICT', 'the subscription is retired');
  const { delivery } = state;
  if (delivery === null) return refuse('NOT_FOUND', 'delivery not found');
  const stale = checkRevision('delivery', delivery.revision, command.expected_revision);
  if (stale) return stale;
  return retry(delivery, command.additional_attempts, state.now, MAX_ATTEMPT_BUDGET);
}

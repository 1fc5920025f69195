/**
 * @module
 * The delivery state machine (spec/rules.md#s4-8 to #s4-27, #s6-13 to #s6-17; spec/README.md, A
 * delivery's life) as pure functions: each takes a delivery and a time and returns the next
 * delivery or a verdict. The store persists what these decide; nothing here reads a clock or a
 * database.
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

export type DeliveryState = 'PENDING' | 'LEASED' | 'ACKED' | 'EXPIRED';

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

export type AckVerdict =
  | { readonly kind: 'acknowledged'; readonly delivery: Delivery }
  | { readonly kind: 'duplicate'; readonly acknowledgedAt: number }
  | { readonly kind: 'lease_lost' };

/**
 * Decides an ACK (spec/rules.md#s6-14 to #s6-17). The newest proof acknowledges, late or not, until a newer send exists;
 * a repeat of the proof that acknowledged answers with the original time; anything else has lost
 * the lease. `digestsEqual` compares in constant time.
 */
export function decideAck(d: Delivery, proof: AckProof, now: number, digestsEqual: (a: string, b: string) => boolean): AckVerdict {
  const newest = d.leaseEpoch > 0n && proof.epoch === d.leaseEpoch && d.leaseDigest !== null && digestsEqual(d.leaseDigest, proof.digest);
  if (!newest) return { kind: 'lease_lost' };
  if (d.state === 'ACKED') return { kind: 'duplicate', acknowledgedAt: d.acknowledgedAt ?? now };
  return {
    kind: 'acknowledged',
    delivery: { ...d, state: 'ACKED', acknowledgedAt: now, leaseUntil: null, revision: d.revision + 1n },
  };
}

/** Manual retry: only EXPIRED, budget grows, attempts and epoch stay (spec/rules.md#s4-21, #s4-23, #s4-24). */
export function retry(d: Delivery, additionalAttempts: number, now: number, maxBudget: number): Delivery | { readonly conflict: string } {
  if (d.state !== 'EXPIRED') return { conflict: `delivery is ${d.state}; only EXPIRED deliveries can be retried` };
  const budget = d.attemptBudget + additionalAttempts;
  if (budget > maxBudget) return { conflict: `the attempt budget would be ${budget}, above ${maxBudget}` };
  return { ...d, state: 'PENDING', attemptBudget: budget, availableAt: now, revision: d.revision + 1n };
}

/** Whether a delivery still occupies the subscription's backlog (`pending_count`). */
export function countsAsPending(state: DeliveryState): boolean {
  return state !== 'ACKED';
}

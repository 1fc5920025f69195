/**
 * @module
 * The decisions of one turn of the delivery engine (spec/README.md, "The delivery engine"): what a
 * group of ACKs decides, which expired leases go back, how many deliveries each session may take,
 * which deliveries go to whom, and the counters the subscription's row keeps. Pure functions over
 * what the turn loaded under the subscription's lock; `engine/turn.ts` runs them, the store writes
 * what they decide.
 */
import {
  decideAck,
  isClaimable,
  isLeaseExpired,
  recoverExpiredLease,
  type AckTarget,
  type Delivery,
  type RedeliveryPolicy,
} from './delivery.ts';

/** One ACK as the turn sees it: the proof, and the subscription of the session that sent it. */
export interface AckProof {
  readonly subscriptionId: string;
  readonly deliveryId: string;
  readonly epoch: bigint;
  /** SHA-256 of the presented lease secret. */
  readonly digest: string;
}

export type AckAnswer =
  | { readonly kind: 'acknowledged' | 'duplicate'; readonly eventId: string; readonly acknowledgedAt: number }
  | { readonly kind: 'lease_lost' };

export interface AckGroupDecision<D extends AckTarget = Delivery> {
  /** One answer per proof, in order. */
  readonly answers: AckAnswer[];
  /** The deliveries the group acknowledges, as they are to be written (ACKED). */
  readonly acknowledged: D[];
  /** For the LEASED deliveries among them: how many each session, named by the lease, no longer holds. */
  readonly released: ReadonlyMap<string, number>;
  /** How many of them were PENDING (a late ACK of a lease that was recovered, not yet sent again). */
  readonly unwaited: number;
}

/**
 * Decides a group of ACKs against the rows they name (spec/rules.md#s6-13 to #s6-17), each with
 * `decideAck`. A delivery of another subscription, or one that does not exist, has lost its lease
 * for this session; a second proof for a delivery in the same group sees it acknowledged.
 */
export function decideAckGroup<D extends AckTarget>(
  rows: ReadonlyMap<string, D>,
  proofs: readonly AckProof[],
  now: number,
  digestsEqual: (a: string, b: string) => boolean,
): AckGroupDecision<D> {
  const current = new Map(rows);
  const answers: AckAnswer[] = [];
  const acknowledged: D[] = [];
  const released = new Map<string, number>();
  let unwaited = 0;
  for (const proof of proofs) {
    const delivery = current.get(proof.deliveryId);
    if (!delivery || delivery.subscriptionId !== proof.subscriptionId) {
      answers.push({ kind: 'lease_lost' });
      continue;
    }
    const verdict = decideAck(delivery, proof, now, digestsEqual);
    if (verdict.kind === 'lease_lost') answers.push(verdict);
    else if (verdict.kind === 'duplicate')
      answers.push({ kind: 'duplicate', eventId: delivery.eventId, acknowledgedAt: verdict.acknowledgedAt });
    else {
      current.set(delivery.id, verdict.delivery);
      acknowledged.push(verdict.delivery);
      if (delivery.state === 'LEASED' && delivery.leaseSession !== null)
        released.set(delivery.leaseSession, (released.get(delivery.leaseSession) ?? 0) + 1);
      if (delivery.state === 'PENDING') unwaited++;
      answers.push({ kind: 'acknowledged', eventId: delivery.eventId, acknowledgedAt: now });
    }
  }
  return { answers, acknowledged, released, unwaited };
}

export interface RecoveryDecision {
  /** The expired leases, recovered (PENDING while attempts remain, else EXPIRED). */
  readonly recovered: Delivery[];
  /** When the earliest lease left may end: the subscription's next `lease_check_at` (null: none is left). */
  readonly checkAt: number | null;
}

/**
 * Recovers the expired leases among `leased`: the subscription's LEASED rows in lease-end order,
 * at most `batch + 1` of them. At most `batch` are recovered; the first row left says when to
 * look again (at once, when it has expired too).
 */
export function planRecovery(leased: readonly Delivery[], batch: number, now: number, policy: RedeliveryPolicy): RecoveryDecision {
  const recovered = leased
    .slice(0, batch)
    .filter((d) => isLeaseExpired(d, now))
    .map((d) => recoverExpiredLease(d, now, policy));
  const rest = leased[recovered.length];
  return { recovered, checkAt: rest ? rest.leaseUntil : null };
}

/** A session of this node that asks for deliveries, with the room its write queue and capacity leave. */
export interface SlotRequest {
  readonly id: string;
  readonly room: number;
}

/** A session's row as the turn read it: the capacity it bound with and the LEASED deliveries that name it. */
export interface SessionRow {
  readonly capacity: number;
  readonly held: number;
}

/**
 * How many deliveries each requesting session may take (spec/rules.md#s5-11): its room, within its
 * capacity less what it holds after this turn's ACKs, as the database says. A session without a
 * row is lost: its node was taken for dead while it was connected.
 */
export function sessionSlots(
  requests: readonly SlotRequest[],
  stored: ReadonlyMap<string, SessionRow>,
  released: ReadonlyMap<string, number>,
): { slots: { id: string; free: number }[]; lost: string[] } {
  const lost: string[] = [];
  const slots = requests.map(({ id, room }) => {
    const row = stored.get(id);
    if (!row) {
      lost.push(id);
      return { id, free: 0 };
    }
    const held = Math.max(0, row.held - (released.get(id) ?? 0));
    return { id, free: Math.max(0, Math.min(room, row.capacity - held)) };
  });
  return { slots, lost };
}

/**
 * Who gets each of `count` deliveries, in turn: one to each session with a free slot, round after
 * round, so that a short supply is spread over the sessions rather than filling the first one.
 */
export function assignOwners(slots: readonly { id: string; free: number }[], count: number): string[] {
  const left = slots.map((s) => s.free);
  const owners: string[] = [];
  while (owners.length < count) {
    let given = false;
    for (let i = 0; i < slots.length && owners.length < count; i++) {
      if (left[i]! <= 0) continue;
      left[i]!--;
      owners.push(slots[i]!.id);
      given = true;
    }
    if (!given) break;
  }
  return owners;
}

export interface LeaseInput {
  /** Free slots over all requesting sessions. */
  readonly slots: number;
  /** PENDING deliveries that may be leased now, in sequence order (recovered ones included). */
  readonly waiting: readonly Delivery[];
  /** Whether more PENDING deliveries may exist than the turn read. */
  readonly waitingMore: boolean;
  readonly now: number;
  /** The log: the cursor, the committed head and the matching results after the cursor that the turn read, ascending. */
  readonly cursor: bigint;
  readonly head: bigint;
  readonly candidates: readonly bigint[];
  /** How many matching results the turn asked for (a shorter answer means none left up to the head). */
  readonly limit: number;
  /** max_pending less the deliveries that are not ACKED, after this turn's ACKs. */
  readonly pendingRoom: number;
}

export interface LeasePlan {
  /** The PENDING deliveries to lease, first. */
  readonly fromWaiting: Delivery[];
  /** How many of the candidates, from the first, become deliveries, born LEASED. */
  readonly fromLog: number;
  /** The subscription's cursor after the turn. */
  readonly cursor: bigint;
  /** Work was left that the sessions could take once they have room. */
  readonly more: boolean;
}

/**
 * What one turn leases (spec/README.md, "The delivery engine"): PENDING deliveries first (a
 * recovered lease or a manual retry, in sequence order), then new results of the log, each
 * materialized only when a session has a slot for it, so it is born LEASED and never waits in
 * PENDING; never beyond `max_pending`. The cursor moves past every result it considered (the ones
 * it materialized and the non-matching ones between them) and stops before the first matching
 * result it did not take.
 */
export function planLeases(input: LeaseInput): LeasePlan {
  const ready = input.waiting.filter((d) => isClaimable(d, input.now));
  const fromWaiting = ready.slice(0, Math.max(0, input.slots));
  const left = Math.max(0, input.slots - fromWaiting.length);
  const room = Math.max(0, Math.min(left, input.pendingRoom));
  const fromLog = Math.min(room, input.candidates.length);
  let cursor = input.cursor;
  if (fromLog < input.candidates.length) {
    const next = input.candidates[fromLog]!;
    if (next - 1n > cursor) cursor = next - 1n;
  } else if (input.candidates.length < input.limit) {
    // Everything read was taken and the read was short: nothing else matches up to the head.
    if (input.head > cursor) cursor = input.head;
  } else if (fromLog > 0) {
    cursor = input.candidates[fromLog - 1]!;
  }
  const untaken = input.candidates.length - fromLog;
  return {
    fromWaiting,
    fromLog,
    cursor,
    more:
      ready.length > fromWaiting.length || input.waitingMore || untaken > 0 || (input.limit > 0 && input.candidates.length >= input.limit),
  };
}

/** What the subscription's row keeps for the engine (see `tables/define.ts`). */
export interface Counters {
  /** Deliveries that are not ACKED: the API's `pending_count`. */
  readonly pendingCount: number;
  /** Deliveries in PENDING. */
  readonly waitingCount: number;
  /** No lease of the subscription ends before this time; null: none is leased. */
  readonly leaseCheckAt: number | null;
}

export interface TurnChange {
  readonly acknowledged: number;
  /** Acknowledged deliveries that were PENDING. */
  readonly unwaited: number;
  /** Recovered leases that went back to PENDING (not EXPIRED). */
  readonly requeued: number;
  /** PENDING deliveries leased. */
  readonly leasedWaiting: number;
  /** New deliveries, born LEASED. */
  readonly materialized: number;
  /** When recovery looked at the leases: when the earliest one left ends (null: none). */
  readonly checkAt?: number | null;
  /** The end of the leases this turn made, when it made any. */
  readonly leaseUntil?: number;
}

/** The counters after a turn: each moves by what the turn did, so no turn counts rows. */
export function nextCounters(before: Counters, change: TurnChange): Counters {
  let leaseCheckAt = change.checkAt === undefined ? before.leaseCheckAt : change.checkAt;
  if (change.leaseUntil !== undefined) leaseCheckAt = leaseCheckAt === null ? change.leaseUntil : Math.min(leaseCheckAt, change.leaseUntil);
  return {
    pendingCount: before.pendingCount - change.acknowledged + change.materialized,
    waitingCount: before.waitingCount - change.unwaited + change.requeued - change.leasedWaiting,
    leaseCheckAt,
  };
}

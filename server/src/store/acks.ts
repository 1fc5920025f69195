/**
 * @module
 * Acknowledging (spec/rules.md#s6-13 to #s6-17), and the claims that follow an ACK group in its
 * transaction. ACKs that arrive together commit in one transaction (`batcher.ts`, used by
 * `Store.acknowledge`). An ACK frees a slot of its session's capacity, and without more a claim
 * in a transaction of its own would fill it: two durable commits per delivered event at capacity
 * 1. So the group's transaction also runs, after its ACKs, the claims the engine asks for on the
 * subscriptions whose capacity it freed. The lease is committed before `event.deliver` is written
 * either way (spec/rules.md#s6-1): the deliveries are written after the commit, and every ACK's
 * reply after the commit as before.
 */
import { digestsEqual, sha256Hex } from '../crypto.ts';
import { decideAck, type Delivery } from '../domain/delivery.ts';
import { byId, claimIn, type ClaimOutcome, type ClaimRequest, type Skipped } from './claims.ts';
import type { DatabaseClock } from './clock.ts';
import { DELIVERY_COLUMNS, toDelivery } from './records.ts';
import { num, type Database } from './sql.ts';

export interface AckRequest {
  readonly subscriptionId: string;
  readonly deliveryId: string;
  readonly epoch: bigint;
  readonly secret: string;
}

export type AckOutcome =
  | { readonly kind: 'acknowledged' | 'duplicate'; readonly eventId: string; readonly acknowledgedAt: number }
  | { readonly kind: 'lease_lost' };

/** A claim the engine runs right after an ACK group, in the group's transaction. */
export interface FollowUpClaim {
  readonly request: ClaimRequest;
  /**
   * Called in the transaction right before the claim would run: false when the engine gave up
   * waiting for it (the ACKs took too long, say behind a row lock) and runs it another way.
   */
  start(): boolean;
  /**
   * Called once, after the transaction and before the ACKs are answered: what the claim did
   * (`skipped` when it did not run), or the error that rolled the whole group back.
   */
  settle(result: ClaimOutcome | Skipped | { readonly kind: 'failed'; readonly error: unknown }): void;
}

/** Asked once per subscription as a group starts: the claim to follow its ACKs, or null. */
export type FollowUpOffer = () => Promise<FollowUpClaim | null>;

/** What waits in the ACK batcher: a proof, and the follow-up claim its session offers. */
export interface AckEntry {
  readonly request: AckRequest;
  readonly followUp?: FollowUpOffer;
}

/** An ACK's verdict, and whether a claim for its subscription followed it in the same transaction. */
export type AckAnswer = AckOutcome & { readonly followed: boolean };

/**
 * Commits one group of the ACK batcher: asks the first offer of each subscription for its
 * follow-up claim, acknowledges, claims (each follow-up that is still willing to start) and
 * commits in one transaction, and settles the claims. So a connection may receive the deliveries
 * of the claim before the reply to the ACK that made room for them; both come after the commit.
 */
export async function acknowledgeGroup(db: Database, clock: DatabaseClock, entries: readonly AckEntry[]): Promise<AckAnswer[]> {
  const offers = new Map<string, FollowUpOffer>();
  for (const { request, followUp } of entries)
    if (followUp && !offers.has(request.subscriptionId)) offers.set(request.subscriptionId, followUp);
  const taken = new Map<string, FollowUpClaim>();
  await Promise.all(
    [...offers].map(async ([id, offer]) => {
      const claim = await offer().catch(() => null);
      if (claim) taken.set(id, claim);
    }),
  );
  // A transaction run again after a deadlock asks the same follow-ups again; `start` stays true.
  const followUp = async (subscriptionId: string): Promise<ClaimRequest | null> => {
    const claim = taken.get(subscriptionId);
    return claim?.start() ? claim.request : null;
  };
  const requests = entries.map((e) => e.request);
  let group: AckGroup;
  try {
    group = await acknowledgeAll(db, clock, requests, followUp);
  } catch (error) {
    for (const f of taken.values()) f.settle({ kind: 'failed', error });
    throw error;
  }
  // Settled before the batcher answers the ACKs and forms its next group: a claim's turn ends as
  // its deliveries are handed over, so the next group can take the subscription's turn again.
  for (const [id, f] of taken) f.settle(group.claims.get(id) ?? { kind: 'skipped' });
  return group.outcomes.map((outcome, i) => ({ ...outcome, followed: group.followed.has(requests[i]!.subscriptionId) }));
}

export interface AckGroup {
  /** One verdict per request, in order. */
  readonly outcomes: AckOutcome[];
  /** What each follow-up claim did, by subscription; `skipped` when it did not run. */
  readonly claims: ReadonlyMap<string, ClaimOutcome | Skipped>;
  /** The subscriptions whose follow-up claim ran after their ACKs, in the same transaction. */
  readonly followed: ReadonlySet<string>;
}

/**
 * Acknowledges a group of proofs in one transaction (spec/rules.md#s6-13 to #s6-17): each proof
 * gets its own verdict, one commit serves them all. Only delivery rows change: `pending_count` is
 * derived from non-ACKED rows, so it drops exactly once, when a delivery becomes ACKED. Rows are
 * locked in id order, so two groups never wait on each other in a cycle. Then, for each
 * subscription on which an ACK of the group acknowledged a delivery (only that frees capacity), it
 * runs the claim `followUp` gives, in the same transaction; that claim never waits for another
 * claim's lock (`claimIn` with `skip`), so the ACKs never wait for claims either.
 */
export async function acknowledgeAll(
  db: Database,
  clock: DatabaseClock,
  requests: readonly AckRequest[],
  followUp: (subscriptionId: string) => Promise<ClaimRequest | null> = async () => null,
): Promise<AckGroup> {
  if (requests.length === 0) return { outcomes: [], claims: new Map(), followed: new Set() };
  return db.transaction(async (tx) => {
    const ids = [...new Set(requests.map((r) => r.deliveryId))].sort();
    const rows = await tx.all(
      `SELECT ${DELIVERY_COLUMNS}, ${tx.phrases.nowMs} AS now FROM deliveries WHERE id IN (${ids.map(() => '?').join(', ')}) ORDER BY id${tx.phrases.forUpdate}`,
      ids,
    );
    // The database's time, the same on every row; without a row nothing is acknowledged.
    const now = rows.length > 0 ? num(rows[0]!.now) : 0;
    const current = new Map(rows.map((row) => [String(row.id), toDelivery(row)]));
    const outcomes: AckOutcome[] = [];
    const acknowledged: Delivery[] = [];
    for (const request of requests) {
      const delivery = current.get(request.deliveryId);
      if (!delivery || delivery.subscriptionId !== request.subscriptionId) {
        outcomes.push({ kind: 'lease_lost' });
        continue;
      }
      const verdict = decideAck(delivery, { epoch: request.epoch, digest: sha256Hex(request.secret) }, now, digestsEqual);
      if (verdict.kind === 'lease_lost') {
        outcomes.push(verdict);
      } else if (verdict.kind === 'duplicate') {
        outcomes.push({ kind: 'duplicate', eventId: delivery.eventId, acknowledgedAt: verdict.acknowledgedAt });
      } else {
        // A second proof for the same delivery in this group sees it acknowledged.
        current.set(verdict.delivery.id, verdict.delivery);
        acknowledged.push(verdict.delivery);
        outcomes.push({ kind: 'acknowledged', eventId: delivery.eventId, acknowledgedAt: now });
      }
    }
    if (acknowledged.length > 0) {
      // One statement for the group; each row's revision comes from the domain's decideAck.
      const revision = byId(acknowledged, (d) => d.revision.toString());
      await tx.run(
        `UPDATE deliveries SET state = 'ACKED', acknowledged_at = ?, lease_until = NULL, revision = ${revision.sql} WHERE id IN (${acknowledged.map(() => '?').join(', ')})`,
        [now, ...revision.params, ...acknowledged.map((d) => d.id)],
      );
    }
    const claims = new Map<string, ClaimOutcome | Skipped>();
    const followed = new Set<string>();
    for (const subscriptionId of new Set(acknowledged.map((d) => d.subscriptionId))) {
      const request = await followUp(subscriptionId);
      if (request === null) continue;
      const result = await claimIn(tx, clock, request, 'skip');
      claims.set(subscriptionId, result);
      if (result.kind !== 'skipped') followed.add(subscriptionId);
    }
    return { outcomes, claims, followed };
  });
}

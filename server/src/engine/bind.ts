/**
 * @module
 * Binding a session, a unit of work of the delivery engine (spec/rules.md#s5-11): the hello's
 * subscription and capacity are checked and the session is recorded, with nothing held yet, in one
 * transaction: capacity is checked inside a database transaction.
 */
import { OrbitError } from '@orbit/spec/errors';
import { orThrow } from '../domain/decision.ts';
import { decideCapacity } from '../domain/delivery.ts';
import type { SubscriptionRecord } from '../domain/subscription.ts';
import type { Principal } from '../store/principal.ts';
import { openSession } from '../store/sessions.ts';
import type { Database } from '../store/sql.ts';
import { ownedSubscription } from '../store/subscriptions.ts';

export interface SessionToBind {
  readonly id: string;
  readonly nodeId: string;
  readonly subscriptionId: string;
  readonly capacity: number;
}

export async function bindSession(db: Database, principal: Principal, session: SessionToBind): Promise<SubscriptionRecord> {
  return db.transaction(async (tx) => {
    orThrow(decideCapacity(session.capacity));
    const subscription = await ownedSubscription(tx, principal, session.subscriptionId);
    if (subscription.retiredAt !== null) throw new OrbitError('NOT_FOUND', 'the subscription is retired and can no longer be consumed');
    await openSession(tx, { ...session, credentialId: principal.credentialId });
    return subscription;
  });
}

/**
 * @module
 * Delivery history, detail and manual retry (spec/rules.md#s4-1 to #s4-28; the retry is decided by
 * `decideRetry`). Listing is an operator's view, not a consistent snapshot; detail never exposes a
 * lease secret or digest.
 */
import type { RetryDeliveryRequest } from '@orbit/generated';
import { OrbitError } from '@orbit/spec/errors';
import { orThrow } from '../domain/decision.ts';
import { decideRetry, type Delivery, type DeliveryState } from '../domain/delivery.ts';
import type { PageCursors } from '../domain/page-cursor.ts';
import { audit } from './audit.ts';
import { idempotent, scopeOf, type WriteKey, type Written } from './idempotency.ts';
import type { Principal } from './principal.ts';
import { DELIVERY_COLUMNS, toDelivery, type ResultRecord } from './records.ts';
import { resultBySequence } from './results.ts';
import { num, type Database, type Sql } from './sql.ts';
import { newestFirst, type Page } from './paging.ts';
import { ownedSubscription } from './subscriptions.ts';

export async function listDeliveries(
  db: Sql,
  cursors: PageCursors,
  principal: Principal,
  args: { subscriptionId: string; state?: DeliveryState; limit: number; cursor?: string },
): Promise<Page<Delivery>> {
  await ownedSubscription(db, principal, args.subscriptionId);
  // ACKED deliveries are most of a subscription's: read the creation-order list and skip the few
  // others. Every other state holds at most max_pending rows: read them from the work index.
  const index = args.state === undefined || args.state === 'ACKED' ? 'deliveries_list' : 'deliveries_work';
  return newestFirst(db, cursors, {
    scope: `deliveries|${principal.namespaceId}|${principal.credentialId}|${args.subscriptionId}|${args.state ?? '*'}`,
    select: `SELECT ${DELIVERY_COLUMNS} FROM deliveries${db.phrases.useIndex(index)}`,
    where: args.state ? ['subscription_id = ?', 'state = ?'] : ['subscription_id = ?'],
    params: args.state ? [args.subscriptionId, args.state] : [args.subscriptionId],
    limit: args.limit,
    cursor: args.cursor,
    toRecord: toDelivery,
  });
}

/** The subscription's delivery with that id, or null: a delivery of another subscription is never found. */
async function findDelivery(db: Sql, subscriptionId: string, deliveryId: string, lock = false): Promise<Delivery | null> {
  const [row] = await db.all(
    `SELECT ${DELIVERY_COLUMNS} FROM deliveries WHERE id = ? AND subscription_id = ?${lock ? db.phrases.forUpdate : ''}`,
    [deliveryId, subscriptionId],
  );
  return row ? toDelivery(row) : null;
}

export async function getDelivery(
  db: Sql,
  principal: Principal,
  subscriptionId: string,
  deliveryId: string,
): Promise<{ delivery: Delivery; event: ResultRecord }> {
  await ownedSubscription(db, principal, subscriptionId);
  const delivery = await findDelivery(db, subscriptionId, deliveryId);
  if (!delivery) throw new OrbitError('NOT_FOUND', 'delivery not found');
  const event = await resultBySequence(db, delivery.sequence);
  if (!event) throw new OrbitError('EVENT_HISTORY_EXPIRED', 'the event of this acknowledged delivery was removed by retention');
  return { delivery, event };
}

export async function retryExpiredDelivery(
  db: Database,
  principal: Principal,
  ids: { subscriptionId: string; deliveryId: string },
  input: RetryDeliveryRequest,
  write: WriteKey<Delivery>,
): Promise<Written<Delivery>> {
  const scope = scopeOf(principal.credentialId, `retry:${ids.subscriptionId}:${ids.deliveryId}`, write);
  return idempotent(db, scope, write.render, async (tx) => {
    const subscription = await ownedSubscription(tx, principal, ids.subscriptionId, true);
    const delivery = await findDelivery(tx, ids.subscriptionId, ids.deliveryId, true);
    // available_at is compared with the database's clock by claims: set it with that clock.
    const [clock] = await tx.all(`SELECT ${tx.phrases.nowMs} AS now`);
    const now = num(clock!.now);
    const next = orThrow(decideRetry({ subscription, delivery, now }, input));
    await tx.run('UPDATE deliveries SET state = ?, attempt_budget = ?, available_at = ?, revision = ? WHERE id = ?', [
      next.state,
      next.attemptBudget,
      next.availableAt,
      next.revision.toString(),
      next.id,
    ]);
    // The delivery engine counts PENDING deliveries on the subscription's row, locked above.
    await tx.run('UPDATE subscriptions SET waiting_count = waiting_count + 1 WHERE id = ?', [ids.subscriptionId]);
    await audit(tx, {
      subscriptionId: ids.subscriptionId,
      deliveryId: ids.deliveryId,
      credentialId: principal.credentialId,
      action: 'retry',
      reason: input.reason,
      revision: next.revision,
      detail: { additional_attempts: input.additional_attempts, attempt_budget: next.attemptBudget },
      now,
    });
    return { value: next };
  });
}

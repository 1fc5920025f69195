/**
 * @module
 * Subscription operations of the management API (spec/rules.md#s2-1 to #s3-15, #s9-2): each write
 * loads what its decision in `domain/subscription.ts` needs, lets it decide and saves the result,
 * in one transaction with its idempotency receipt and its audit record.
 */
import type { ConfigureSubscriptionRequest, CreateSubscriptionRequest, RetireSubscriptionRequest } from '@orbit/generated';
import { OrbitError } from '@orbit/spec/errors';
import { newId } from '../crypto.ts';
import type { PageCursors } from '../domain/page-cursor.ts';
import { orThrow } from '../domain/decision.ts';
import { decideConfigure, decideCreate, decideRetire, historyExpired, type SubscriptionRecord } from '../domain/subscription.ts';
import { audit } from './audit.ts';
import { idempotent, scopeOf, type WriteKey, type Written } from './idempotency.ts';
import type { Principal } from './principal.ts';
import { SUBSCRIPTION_COLUMNS, SUBSCRIPTION_SELECT, toSubscription } from './records.ts';
import { newestFirst, type Page } from './paging.ts';
import { logPosition, matchingResults } from './results.ts';
import { certifiedLock, num, type Database, type Sql } from './sql.ts';

/** Loads a subscription the principal owns, or throws NOT_FOUND (another credential's looks absent). */
export async function ownedSubscription(db: Sql, principal: Principal, id: string, lock = false): Promise<SubscriptionRecord> {
  const [row] = await db.all(
    `SELECT ${SUBSCRIPTION_SELECT} FROM subscriptions WHERE id = ? AND credential_id = ?${lock ? db.phrases.forUpdate : ''}`,
    [id, principal.credentialId],
  );
  if (!row || !principal.queueIds.has(String(row.queue_id))) throw new OrbitError('NOT_FOUND', 'subscription not found');
  return toSubscription(row);
}

/**
 * A queue the principal names must be in its scope. No read is needed to know the queue exists in
 * the principal's namespace: `credential_queues` is filled only when the credential is created, with
 * queues of its own namespace, and queues are never removed (spec/README.md, Errors).
 */
export function requireQueue(principal: Principal, queueId: string): void {
  if (!principal.queueIds.has(queueId)) throw new OrbitError('NOT_FOUND', 'queue not found');
}

export async function createSubscription(
  db: Database,
  principal: Principal,
  input: CreateSubscriptionRequest,
  write: WriteKey<SubscriptionRecord>,
  now: number,
): Promise<Written<SubscriptionRecord>> {
  requireQueue(principal, input.queue_id);
  return idempotent(db, scopeOf(principal.credentialId, 'subscriptions.create', write), write.render, async (tx) => {
    // The namespace row serializes creations, so the limit and the name check cannot race.
    await tx.all(`SELECT id FROM namespaces WHERE id = ?${tx.phrases.forUpdate}`, [principal.namespaceId]);
    await certifiedLock(tx, 'namespaces', [principal.namespaceId]);
    // The limit and the name in one round trip, each answered from its own index.
    const [count] = await tx.all(
      `SELECT COUNT(*) AS n,
              (SELECT COUNT(*) FROM subscriptions WHERE namespace_id = ? AND active_name = ?) AS taken
         FROM subscriptions WHERE namespace_id = ? AND retired_at IS NULL`,
      [principal.namespaceId, input.name, principal.namespaceId],
    );
    const record = orThrow(
      decideCreate(
        {
          id: newId(),
          owner: principal,
          activeCount: num(count!.n),
          nameTaken: num(count!.taken) > 0,
          ...(await logPosition(tx)),
          now,
        },
        input,
      ),
    );
    await tx.run(
      `INSERT INTO subscriptions (${SUBSCRIPTION_COLUMNS}, active_name) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, NULL, ?)`,
      [
        record.id,
        record.namespaceId,
        record.applicationId,
        record.credentialId,
        record.queueId,
        record.name,
        record.revision.toString(),
        record.enabled ? 1 : 0,
        record.types.join(','),
        record.cursorSequence.toString(),
        record.maxPending,
        record.maxAttempts,
        record.createdAt,
        record.updatedAt,
        record.name,
      ],
    );
    await audit(tx, {
      subscriptionId: record.id,
      credentialId: principal.credentialId,
      action: 'create',
      reason: '',
      revision: record.revision,
      detail: { from_sequence: record.cursorSequence.toString() },
      now,
    });
    return { value: record };
  });
}

export async function listSubscriptions(
  db: Sql,
  cursors: PageCursors,
  principal: Principal,
  args: { queueId: string; limit: number; cursor?: string },
): Promise<Page<SubscriptionRecord>> {
  requireQueue(principal, args.queueId);
  return newestFirst(db, cursors, {
    scope: `subscriptions|${principal.namespaceId}|${principal.credentialId}|${args.queueId}`,
    select: `SELECT ${SUBSCRIPTION_SELECT} FROM subscriptions`,
    where: ['queue_id = ?', 'credential_id = ?'],
    params: [args.queueId, principal.credentialId],
    limit: args.limit,
    cursor: args.cursor,
    toRecord: toSubscription,
  });
}

export async function configureSubscription(
  db: Database,
  principal: Principal,
  id: string,
  input: ConfigureSubscriptionRequest,
  write: WriteKey<SubscriptionRecord>,
  now: number,
): Promise<Written<SubscriptionRecord>> {
  return idempotent(db, scopeOf(principal.credentialId, `configure:${id}`, write), write.render, async (tx) => {
    const next = orThrow(decideConfigure(await ownedSubscription(tx, principal, id, true), input, now));
    await tx.run('UPDATE subscriptions SET enabled = ?, revision = ?, updated_at = ? WHERE id = ?', [
      next.enabled ? 1 : 0,
      next.revision.toString(),
      next.updatedAt,
      id,
    ]);
    await audit(tx, {
      subscriptionId: id,
      credentialId: principal.credentialId,
      action: next.enabled ? 'resume' : 'pause',
      reason: input.reason,
      revision: next.revision,
      detail: { enabled: next.enabled },
      now,
    });
    return { value: next };
  });
}

export async function retireSubscription(
  db: Database,
  principal: Principal,
  id: string,
  input: RetireSubscriptionRequest,
  write: WriteKey<SubscriptionRecord>,
  now: number,
): Promise<Written<SubscriptionRecord>> {
  return idempotent(db, scopeOf(principal.credentialId, `retire:${id}`, write), write.render, async (tx) => {
    // The row lock holds the delivery engine off, so its pending_count is exact here.
    const current = await ownedSubscription(tx, principal, id, true);
    const position = await logPosition(tx);
    // Behind the boundary, what waits can never be materialized and does not hold retirement back: no need to look.
    const waiting = historyExpired(current.cursorSequence, position.boundary)
      ? []
      : await matchingResults(tx, {
          queueId: current.queueId,
          types: current.types,
          after: current.cursorSequence,
          upTo: position.head,
          limit: 1,
          columns: 'sequence',
        });
    const retired = orThrow(
      decideRetire({ current, openDeliveries: current.pendingCount, hasUnmaterialized: waiting.length > 0, ...position, now }, input),
    );
    const retiredSequence = retired.retiredSequence!.toString();
    await tx.run(
      // active_name NULL frees the name for a new subscription (spec/README.md, Subscriptions).
      'UPDATE subscriptions SET enabled = ?, active_name = NULL, retired_at = ?, retired_sequence = ?, revision = ?, updated_at = ? WHERE id = ?',
      [retired.enabled ? 1 : 0, retired.retiredAt, retiredSequence, retired.revision.toString(), retired.updatedAt, id],
    );
    await audit(tx, {
      subscriptionId: id,
      credentialId: principal.credentialId,
      action: 'retire',
      reason: input.reason,
      revision: retired.revision,
      detail: { retired_sequence: retiredSequence },
      now,
    });
    return { value: retired };
  });
}

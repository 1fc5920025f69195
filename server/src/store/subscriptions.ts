/**
 * @module
 * Subscription operations of the management API (spec/rules.md#s2-1 to #s3-15, #s9-2, #s9-3). Each
 * write runs in one transaction with its idempotency receipt and its audit record.
 */
import type { ConfigureSubscriptionRequest, CreateSubscriptionRequest, RetireSubscriptionRequest } from '@orbit/generated';
import { OrbitError } from '@orbit/spec/errors';
import { newId } from '../crypto.ts';
import type { PageCursors } from '../domain/page-cursor.ts';
import { effectiveMaxAttempts, effectiveMaxPending, normalizeTypes, SUBSCRIPTION_LIMIT } from '../domain/subscription.ts';
import { audit } from './audit.ts';
import { idempotent, scopeOf, type WriteKey, type Written } from './idempotency.ts';
import type { Principal } from './principal.ts';
import { SUBSCRIPTION_COLUMNS, SUBSCRIPTION_SELECT, toSubscription, type SubscriptionRecord } from './records.ts';
import { newestFirst, type Page } from './paging.ts';
import { logPosition, matchingResults } from './results.ts';
import { certifiedLock, num, PHRASES, type Database, type Sql } from './sql.ts';

/** Loads a subscription the principal owns, or throws NOT_FOUND (another credential's looks absent). */
export async function ownedSubscription(db: Sql, principal: Principal, id: string, lock = false): Promise<SubscriptionRecord> {
  const [row] = await db.all(
    `SELECT ${SUBSCRIPTION_SELECT} FROM subscriptions WHERE id = ? AND credential_id = ?${lock ? PHRASES[db.dialect].forUpdate : ''}`,
    [id, principal.credentialId],
  );
  if (!row || !principal.queueIds.has(String(row.queue_id))) throw new OrbitError('NOT_FOUND', 'subscription not found');
  return toSubscription(row);
}

export async function requireQueue(db: Sql, principal: Principal, queueId: string): Promise<void> {
  if (!principal.queueIds.has(queueId)) throw new OrbitError('NOT_FOUND', 'queue not found');
  const [row] = await db.all('SELECT id FROM queues WHERE id = ? AND namespace_id = ?', [queueId, principal.namespaceId]);
  if (!row) throw new OrbitError('NOT_FOUND', 'queue not found');
}

export async function createSubscription(
  db: Database,
  principal: Principal,
  input: CreateSubscriptionRequest,
  write: WriteKey<SubscriptionRecord>,
  now: number,
): Promise<Written<SubscriptionRecord>> {
  await requireQueue(db, principal, input.queue_id);
  return idempotent(db, scopeOf(principal.credentialId, 'subscriptions.create', write), write.render, async (tx) => {
    // The namespace row serializes creations, so the limit and the name check cannot race.
    await tx.all(`SELECT id FROM namespaces WHERE id = ?${PHRASES[tx.dialect].forUpdate}`, [principal.namespaceId]);
    await certifiedLock(tx, 'namespaces', [principal.namespaceId]);
    const [count] = await tx.all('SELECT COUNT(*) AS n FROM subscriptions WHERE namespace_id = ? AND retired_at IS NULL', [
      principal.namespaceId,
    ]);
    if (num(count!.n) >= SUBSCRIPTION_LIMIT) {
      throw new OrbitError('SUBSCRIPTION_LIMIT', `the namespace already has ${SUBSCRIPTION_LIMIT} subscriptions that are not retired`);
    }
    const [clash] = await tx.all('SELECT id FROM subscriptions WHERE namespace_id = ? AND active_name = ?', [
      principal.namespaceId,
      input.name,
    ]);
    if (clash) throw new OrbitError('STATE_CONFLICT', `a subscription named "${input.name}" already exists in this namespace`);
    const { head, boundary } = await logPosition(tx);
    // Omitted: the committed head. "0": the whole log that still exists (spec/rules.md#s2-5), so
    // after a prune it starts at the retention boundary. Any other value is an exact exclusive
    // cursor.
    const from =
      input.from_sequence === undefined || input.from_sequence === null
        ? head
        : input.from_sequence === '0'
          ? boundary
          : BigInt(input.from_sequence);
    if (from > head) throw new OrbitError('INVALID_ARGUMENT', `from_sequence ${from} is beyond the committed head ${head}`);
    if (from < boundary) throw new OrbitError('EVENT_HISTORY_EXPIRED', `from_sequence ${from} is below the retention boundary ${boundary}`);
    const record: SubscriptionRecord = {
      id: newId(),
      namespaceId: principal.namespaceId,
      applicationId: principal.applicationId,
      credentialId: principal.credentialId,
      queueId: input.queue_id,
      name: input.name,
      revision: 1n,
      enabled: true,
      types: normalizeTypes(input.types),
      cursorSequence: from,
      pendingCount: 0,
      maxPending: effectiveMaxPending(input.max_pending),
      maxAttempts: effectiveMaxAttempts(input.max_attempts),
      createdAt: now,
      updatedAt: now,
      retiredAt: null,
      retiredSequence: null,
    };
    await tx.run(
      `INSERT INTO subscriptions (${SUBSCRIPTION_COLUMNS}, active_name) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, NULL, ?)`,
      [
        record.id,
        record.namespaceId,
        record.applicationId,
        record.credentialId,
        record.queueId,
        record.name,
        '1',
        1,
        record.types.join(','),
        record.cursorSequence.toString(),
        record.maxPending,
        record.maxAttempts,
        now,
        now,
        record.name,
      ],
    );
    await audit(tx, {
      subscriptionId: record.id,
      credentialId: principal.credentialId,
      action: 'create',
      reason: '',
      revision: 1n,
      detail: { from_sequence: from.toString() },
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
  await requireQueue(db, principal, args.queueId);
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

function requireRevision(current: bigint, expected: string, what: string): void {
  if (current !== BigInt(expected)) throw new OrbitError('STATE_CONFLICT', `${what} revision is ${current}, not ${expected}`);
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
    const current = await ownedSubscription(tx, principal, id, true);
    if (current.retiredAt !== null) throw new OrbitError('STATE_CONFLICT', 'the subscription is retired');
    requireRevision(current.revision, input.expected_revision, 'subscription');
    const revision = current.revision + 1n;
    await tx.run('UPDATE subscriptions SET enabled = ?, revision = ?, updated_at = ? WHERE id = ?', [
      input.enabled ? 1 : 0,
      revision.toString(),
      now,
      id,
    ]);
    await audit(tx, {
      subscriptionId: id,
      credentialId: principal.credentialId,
      action: input.enabled ? 'resume' : 'pause',
      reason: input.reason,
      revision,
      detail: { enabled: input.enabled },
      now,
    });
    return { value: { ...current, enabled: input.enabled, revision, updatedAt: now } };
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
    const current = await ownedSubscription(tx, principal, id, true);
    if (current.retiredAt !== null) throw new OrbitError('STATE_CONFLICT', 'the subscription is already retired');
    requireRevision(current.revision, input.expected_revision, 'subscription');
    const [open] = await tx.all(
      "SELECT COUNT(*) AS n FROM deliveries WHERE subscription_id = ? AND state IN ('PENDING', 'LEASED', 'EXPIRED')",
      [id],
    );
    if (num(open!.n) > 0) throw new OrbitError('STATE_CONFLICT', `${num(open!.n)} deliveries are not acknowledged yet`);
    const { head, boundary } = await logPosition(tx);
    // A subscription whose cursor fell behind the retention boundary can never be drained (its
    // sessions end with EVENT_HISTORY_EXPIRED), so unmaterialized results do not hold it back.
    const expired = current.cursorSequence < boundary;
    const waiting = expired
      ? []
      : await matchingResults(tx, {
          queueId: current.queueId,
          types: current.types,
          after: current.cursorSequence,
          upTo: head,
          limit: 1,
          columns: 'sequence',
        });
    if (waiting.length > 0) throw new OrbitError('STATE_CONFLICT', 'matching results are not materialized yet; consume them first');
    const revision = current.revision + 1n;
    await tx.run(
      'UPDATE subscriptions SET enabled = 0, active_name = NULL, retired_at = ?, retired_sequence = ?, revision = ?, updated_at = ? WHERE id = ?',
      [now, head.toString(), revision.toString(), now, id],
    );
    await audit(tx, {
      subscriptionId: id,
      credentialId: principal.credentialId,
      action: 'retire',
      reason: input.reason,
      revision,
      detail: { retired_sequence: head.toString() },
      now,
    });
    const retired: SubscriptionRecord = { ...current, enabled: false, revision, updatedAt: now, retiredAt: now, retiredSequence: head };
    return { value: retired };
  });
}

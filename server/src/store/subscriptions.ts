/**
 * @module
 * Subscription operations of the management API (seed §2–§3, brief decision 4). Each write runs in
 * one transaction with its idempotency receipt and its audit record.
 */
import { OrbitError } from '@orbit/spec/errors';
import { newId } from '../crypto.ts';
import type { PageCursors } from '../domain/page-cursor.ts';
import { effectiveMaxAttempts, effectiveMaxPending, normalizeTypes, SUBSCRIPTION_LIMIT } from '../domain/subscription.ts';
import { audit } from './audit.ts';
import { idempotent, type IdempotencyScope, type Receipt } from './idempotency.ts';
import type { Principal } from './principal.ts';
import { SUBSCRIPTION_COLUMNS, SUBSCRIPTION_SELECT, subscriptionJson, toSubscription, type SubscriptionRecord } from './records.ts';
import { newestFirst, type Page } from './paging.ts';
import { logPosition, matchingResults } from './results.ts';
import { certifiedLock, num, pendingState, PHRASES, type Database, type Sql } from './sql.ts';

export interface CreateSubscriptionInput {
  readonly name: string;
  readonly queue_id: string;
  readonly types?: readonly string[];
  readonly from_sequence?: string | null;
  readonly max_pending?: number;
  readonly max_attempts?: number;
}

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

function withScope(principal: Principal, scope: string, key: string, digest: string): IdempotencyScope {
  return { credentialId: principal.credentialId, scope, key, digest };
}

export async function createSubscription(
  db: Database,
  principal: Principal,
  key: string,
  digest: string,
  input: CreateSubscriptionInput,
  now: number,
): Promise<Receipt> {
  await requireQueue(db, principal, input.queue_id);
  return idempotent(db, withScope(principal, 'subscriptions.create', key, digest), async (tx) => {
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
    // Omitted: the committed head. "0": the whole log that still exists (seed §2), so after a prune
    // it starts at the retention boundary. Any other value is an exact exclusive cursor.
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
    return { status: 201, data: { subscription: subscriptionJson(record) } };
  });
}

export async function listSubscriptions(
  db: Sql,
  cursors: PageCursors,
  principal: Principal,
  args: { queueId: string; limit: number; cursor?: string },
): Promise<Page<Record<string, unknown>>> {
  await requireQueue(db, principal, args.queueId);
  return newestFirst(db, cursors, {
    scope: `subscriptions|${principal.namespaceId}|${principal.credentialId}|${args.queueId}`,
    select: `SELECT ${SUBSCRIPTION_SELECT} FROM subscriptions`,
    where: ['queue_id = ?', 'credential_id = ?'],
    params: [args.queueId, principal.credentialId],
    limit: args.limit,
    cursor: args.cursor,
    toRecord: toSubscription,
    toJson: subscriptionJson,
  });
}

export interface ConfigureInput {
  readonly expected_revision: string;
  readonly enabled: boolean;
  readonly reason: string;
}

function requireRevision(current: bigint, expected: string, what: string): void {
  if (current !== BigInt(expected)) throw new OrbitError('STATE_CONFLICT', `${what} revision is ${current}, not ${expected}`);
}

export async function configureSubscription(
  db: Database,
  principal: Principal,
  id: string,
  key: string,
  digest: string,
  input: ConfigureInput,
  now: number,
): Promise<Receipt> {
  return idempotent(db, withScope(principal, `configure:${id}`, key, digest), async (tx) => {
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
    return { status: 200, data: { subscription: subscriptionJson({ ...current, enabled: input.enabled, revision, updatedAt: now }) } };
  });
}

export interface RetireInput {
  readonly expected_revision: string;
  readonly reason: string;
}

export async function retireSubscription(
  db: Database,
  principal: Principal,
  id: string,
  key: string,
  digest: string,
  input: RetireInput,
  now: number,
): Promise<Receipt> {
  return idempotent(db, withScope(principal, `retire:${id}`, key, digest), async (tx) => {
    const current = await ownedSubscription(tx, principal, id, true);
    if (current.retiredAt !== null) throw new OrbitError('STATE_CONFLICT', 'the subscription is already retired');
    requireRevision(current.revision, input.expected_revision, 'subscription');
    const [open] = await tx.all(`SELECT COUNT(*) AS n FROM deliveries WHERE subscription_id = ? AND ${pendingState('state')}`, [id]);
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
    return { status: 200, data: { subscription: subscriptionJson(retired) } };
  });
}

/**
 * @module
 * A subscription's configuration history: the audit trail read back, newest first..
 */
import type { PageCursors } from '../domain/page-cursor.ts';
import { newestFirst, type Page } from './paging.ts';
import type { Principal } from './principal.ts';
import { toHistory, type HistoryRecord } from './records.ts';
import type { Sql } from './sql.ts';
import { ownedSubscription } from './subscriptions.ts';

export async function listHistory(
  db: Sql,
  cursors: PageCursors,
  principal: Principal,
  args: { subscriptionId: string; limit: number; cursor?: string },
): Promise<Page<HistoryRecord>> {
  await ownedSubscription(db, principal, args.subscriptionId);
  return newestFirst(db, cursors, {
    scope: `history|${principal.namespaceId}|${principal.credentialId}|${args.subscriptionId}`,
    select: 'SELECT id, delivery_id, action, reason, revision, detail, created_at FROM audit_log',
    where: ['subscription_id = ?'],
    params: [args.subscriptionId],
    limit: args.limit,
    cursor: args.cursor,
    toRecord: toHistory,
  });
}

/**
 * @module
 * A subscription's configuration history: the audit trail read back, newest first. The fields of
 * `detail` that an action records become the entry's optional fields (spec/openapi.yaml
 * SubscriptionHistoryEntry).
 */
import type { PageCursors } from '../domain/page-cursor.ts';
import { newestFirst, type Page } from './paging.ts';
import type { Principal } from './principal.ts';
import { iso } from './records.ts';
import { num, type Row, type Sql } from './sql.ts';
import { ownedSubscription } from './subscriptions.ts';

interface HistoryRecord {
  readonly id: string;
  readonly createdAt: number;
  readonly json: Record<string, unknown>;
}

/** Which `detail` fields each entry may carry; anything else an older row holds stays internal. */
const DETAIL_FIELDS = ['from_sequence', 'retired_sequence', 'additional_attempts', 'attempt_budget'] as const;

function toHistory(row: Row): HistoryRecord {
  const createdAt = num(row.created_at);
  const detail = JSON.parse(String(row.detail)) as Record<string, unknown>;
  const json: Record<string, unknown> = {
    id: row.id,
    action: row.action,
    reason: row.reason,
    revision: String(row.revision),
    created_at: iso(createdAt),
  };
  if (row.delivery_id !== null && row.delivery_id !== undefined) json.delivery_id = row.delivery_id;
  for (const field of DETAIL_FIELDS) if (detail[field] !== undefined) json[field] = detail[field];
  return { id: String(row.id), createdAt, json };
}

export async function listHistory(
  db: Sql,
  cursors: PageCursors,
  principal: Principal,
  args: { subscriptionId: string; limit: number; cursor?: string },
): Promise<Page<Record<string, unknown>>> {
  await ownedSubscription(db, principal, args.subscriptionId);
  return newestFirst(db, cursors, {
    scope: `history|${principal.namespaceId}|${principal.credentialId}|${args.subscriptionId}`,
    select: 'SELECT id, delivery_id, action, reason, revision, detail, created_at FROM audit_log',
    where: ['subscription_id = ?'],
    params: [args.subscriptionId],
    limit: args.limit,
    cursor: args.cursor,
    toRecord: toHistory,
    toJson: (record) => record.json,
  });
}

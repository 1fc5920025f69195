/**
 * @module
 * The queues a credential may name (spec/README.md, The credential's own view): its queue set read
 * back, newest first, paged like every list.
 */
import type { PageCursors } from '../domain/page-cursor.ts';
import { newestFirst, type Page } from './paging.ts';
import type { Principal } from './principal.ts';
import { toQueue, type QueueRecord } from './records.ts';
import type { Sql } from './sql.ts';

export function listQueues(
  db: Sql,
  cursors: PageCursors,
  principal: Principal,
  args: { limit: number; cursor?: string },
): Promise<Page<QueueRecord>> {
  return newestFirst(db, cursors, {
    scope: `queues|${principal.namespaceId}|${principal.credentialId}`,
    select: 'SELECT id, name, created_at FROM queues',
    // The namespace too: a credential's queues are in its namespace, and a row that says otherwise is never shown.
    where: ['namespace_id = ?', 'id IN (SELECT queue_id FROM credential_queues WHERE credential_id = ?)'],
    params: [principal.namespaceId, principal.credentialId],
    limit: args.limit,
    cursor: args.cursor,
    toRecord: toQueue,
  });
}

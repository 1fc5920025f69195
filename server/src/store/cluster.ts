/**
 * @module
 * Cross-node views, read from the `nodes` and `sessions` tables (spec/README.md "Sessions and
 * nodes"): a subscription's connected sessions on every node, and the cluster-wide counts that
 * `/metrics` reports. Every node answers from the same rows, so every node gives the same figures,
 * and each session and delivery is counted once whichever node is asked. A node is live while it
 * has renewed its row within the node timeout, in the database's time; the sessions of a node past
 * it are left out at once, before any heartbeat has deleted their rows.
 */
import type { PageCursors } from '../domain/page-cursor.ts';
import { newestFirst, type Page } from './paging.ts';
import type { Principal } from './principal.ts';
import { toSession, type SessionRecord } from './records.ts';
import { num, type Sql } from './sql.ts';
import { ownedSubscription } from './subscriptions.ts';

/** The condition that node row `n` is live; takes the node timeout (ms) as its one parameter. */
const liveNode = (sql: Sql) => `n.last_seen_at >= ${sql.phrases.nowMs} - ?`;

/** The subscription's sessions on every live node, newest first (spec/openapi.yaml ListSubscriptionSessions). */
export async function listSessions(
  db: Sql,
  cursors: PageCursors,
  principal: Principal,
  args: { subscriptionId: string; limit: number; cursor?: string; nodeTtlMs: number },
): Promise<Page<SessionRecord>> {
  await ownedSubscription(db, principal, args.subscriptionId);
  // A derived table, so that the pager's `created_at` and `id` name the session's columns. `held`
  // is kept by the delivery engine: the LEASED deliveries that name the session, an expired one
  // until a turn or the sweep recovers it.
  const listed = `SELECT s.id, s.node_id, s.capacity, s.connected_at AS created_at, s.last_seen_at, n.last_seen_at AS node_last_seen_at,
      s.held AS leases_held
    FROM sessions s JOIN nodes n ON n.id = s.node_id
    WHERE s.subscription_id = ? AND ${liveNode(db)}`;
  return newestFirst(db, cursors, {
    scope: `sessions|${principal.namespaceId}|${principal.credentialId}|${args.subscriptionId}`,
    select: `SELECT * FROM (${listed}) listed`,
    where: ['1 = 1'],
    params: [args.subscriptionId, Math.trunc(args.nodeTtlMs)],
    limit: args.limit,
    cursor: args.cursor,
    toRecord: toSession,
  });
}

export interface ClusterOverview {
  /** Live `orbit serve` nodes on this database. */
  readonly nodes: number;
  /** Sessions bound on live nodes. */
  readonly sessions: number;
  /** PENDING, LEASED and EXPIRED deliveries of every subscription. */
  readonly backlog: number;
}

/** The cluster-wide counts, in one statement. */
export async function clusterOverview(db: Sql, nodeTtlMs: number): Promise<ClusterOverview> {
  const ttl = Math.trunc(nodeTtlMs);
  const [row] = await db.all(
    `SELECT (SELECT COUNT(*) FROM nodes n WHERE ${liveNode(db)}) AS nodes,
            (SELECT COUNT(*) FROM sessions s JOIN nodes n ON n.id = s.node_id WHERE ${liveNode(db)}) AS sessions,
            (SELECT COALESCE(SUM(pending_count), 0) FROM subscriptions) AS backlog`,
    [ttl, ttl],
  );
  return { nodes: num(row!.nodes), sessions: num(row!.sessions), backlog: num(row!.backlog) };
}

/** Sessions on live nodes per subscription, for the given subscriptions (absent: none). */
export async function sessionsBySubscription(db: Sql, subscriptionIds: readonly string[], nodeTtlMs: number): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  if (subscriptionIds.length === 0) return counts;
  const rows = await db.all(
    `SELECT s.subscription_id, COUNT(*) AS n FROM sessions s JOIN nodes n ON n.id = s.node_id
      WHERE s.subscription_id IN (${subscriptionIds.map(() => '?').join(', ')}) AND ${liveNode(db)} GROUP BY s.subscription_id`,
    [...subscriptionIds, Math.trunc(nodeTtlMs)],
  );
  for (const row of rows) counts.set(String(row.subscription_id), num(row.n));
  return counts;
}

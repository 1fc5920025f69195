/**
 * @module
 * Nodes and live sessions in the database (spec/README.md "Sessions and nodes"). A node renews its
 * row while it runs; a node that stops renewing for `ttlMs` is gone, and any node removes it and
 * its sessions. A session row names its node, subscription, credential and capacity, so claims
 * enforce capacity from the database and operators see who consumes what on every node. All
 * times are the database's clock.
 */
import type { AccessState } from '../domain/access.ts';
import { num, numOrNull, type Database, type Sql } from './sql.ts';

export interface NodeInfo {
  readonly id: string;
  /** For operators: host, process id, listen address. */
  readonly description: string;
}

/** Inserts the node's row, or renews it when it exists (a node that was taken for dead comes back). */
export async function registerNode(db: Database, node: NodeInfo): Promise<void> {
  const now = db.phrases.nowMs;
  await db.transaction(async (tx) => {
    const { changes } = await tx.run(`UPDATE nodes SET last_seen_at = ${now} WHERE id = ?`, [node.id]);
    if (changes === 0) {
      await tx.run(`INSERT INTO nodes (id, description, started_at, last_seen_at) VALUES (?, ?, ${now}, ${now})`, [
        node.id,
        node.description,
      ]);
    }
  });
}

/**
 * Renews the node and the sessions that read a frame since the last beat, then removes nodes (and
 * their sessions) that stopped renewing `ttlMs` ago. Returns how many sessions it removed.
 */
export async function heartbeat(db: Database, node: NodeInfo, activeSessions: readonly string[], ttlMs: number): Promise<number> {
  await registerNode(db, node);
  const now = db.phrases.nowMs;
  if (activeSessions.length > 0) {
    await db.run(`UPDATE sessions SET last_seen_at = ${now} WHERE node_id = ? AND id IN (${activeSessions.map(() => '?').join(', ')})`, [
      node.id,
      ...activeSessions,
    ]);
  }
  return db.transaction(async (tx) => {
    const dead = await tx.all(`SELECT id FROM nodes WHERE last_seen_at < ${now} - ? ORDER BY id`, [Math.trunc(ttlMs)]);
    if (dead.length === 0) return 0;
    const ids = dead.map((row) => String(row.id));
    const marks = ids.map(() => '?').join(', ');
    const { changes } = await tx.run(`DELETE FROM sessions WHERE node_id IN (${marks})`, ids);
    await tx.run(`DELETE FROM nodes WHERE id IN (${marks})`, ids);
    return changes;
  });
}

/** Removes the node and its sessions (graceful shutdown). */
export async function deregisterNode(db: Database, nodeId: string): Promise<void> {
  await db.transaction(async (tx) => {
    await tx.run('DELETE FROM sessions WHERE node_id = ?', [nodeId]);
    await tx.run('DELETE FROM nodes WHERE id = ?', [nodeId]);
  });
}

export interface SessionRow {
  readonly id: string;
  readonly nodeId: string;
  readonly subscriptionId: string;
  readonly credentialId: string;
  readonly capacity: number;
}

/** Records a bound session inside the hello's transaction. */
export async function openSession(tx: Sql, session: SessionRow): Promise<void> {
  const now = tx.phrases.nowMs;
  await tx.run(
    `INSERT INTO sessions (id, node_id, subscription_id, credential_id, capacity, connected_at, last_seen_at) VALUES (?, ?, ?, ?, ?, ${now}, ${now})`,
    [session.id, session.nodeId, session.subscriptionId, session.credentialId, session.capacity],
  );
}

export async function closeSession(db: Database, sessionId: string): Promise<void> {
  await db.run('DELETE FROM sessions WHERE id = ?', [sessionId]);
}

/**
 * What `decideConsumeAccess` needs for each subscription, in one query: its credential (revoked,
 * permissions), whether its queue is still in the credential's scope, and its own state.
 */
export async function accessOf(db: Sql, subscriptionIds: readonly string[]): Promise<Map<string, AccessState>> {
  const states = new Map<string, AccessState>();
  if (subscriptionIds.length === 0) return states;
  const rows = await db.all(
    `SELECT s.id, s.retired_at, s.enabled, c.id AS credential_id, c.revoked_at, c.permissions,
            c.token_digest, c.previous_token_digest, c.previous_token_expires_at,
            (SELECT COUNT(*) FROM credential_queues q WHERE q.credential_id = s.credential_id AND q.queue_id = s.queue_id) AS in_scope
       FROM subscriptions s LEFT JOIN credentials c ON c.id = s.credential_id
      WHERE s.id IN (${subscriptionIds.map(() => '?').join(', ')})`,
    subscriptionIds,
  );
  for (const row of rows) {
    states.set(String(row.id), {
      credential:
        row.credential_id === null || row.credential_id === undefined
          ? null
          : {
              revoked: row.revoked_at !== null && row.revoked_at !== undefined,
              permissions: new Set(String(row.permissions).split(',')),
              tokenDigest: String(row.token_digest),
              previousTokenDigest:
                row.previous_token_digest === null || row.previous_token_digest === undefined ? null : String(row.previous_token_digest),
              previousExpiresAt: numOrNull(row.previous_token_expires_at),
            },
      subscription: { retired: row.retired_at !== null && row.retired_at !== undefined, enabled: num(row.enabled) === 1 },
      queueInScope: num(row.in_scope) > 0,
    });
  }
  for (const id of subscriptionIds) if (!states.has(id)) states.set(id, { credential: null, subscription: null, queueInScope: false });
  return states;
}

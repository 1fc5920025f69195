/**
 * @module
 * Credentials (spec/rules.md#s1-1, #s1-4; docs/operations.md, Credentials): a bearer token is
 * stored only as its digest, belongs to one namespace and application, and holds a permission set
 * and a queue set. The operator commands list, revoke and rotate them. A rotation gives the
 * credential a new token and keeps its id (so its subscriptions stay bound); the replaced token
 * keeps working until the end of the grace period the operator chose, then stops.
 */
import { newId, newToken, sha256Hex } from '../crypto.ts';
import { num, numOrNull, type Sql } from './sql.ts';

export { PERMISSIONS, type Permission } from '@orbit/generated';

export interface Principal {
  readonly credentialId: string;
  readonly namespaceId: string;
  readonly applicationId: string;
  readonly permissions: ReadonlySet<string>;
  readonly queueIds: ReadonlySet<string>;
  /**
   * The digest of the token this principal authenticated with (absent when loaded by id): a
   * long-lived session re-checks it with `authenticateDigest`, which refuses a token that a
   * rotation replaced once its grace period is over.
   */
  readonly tokenDigest?: string;
}

export function authenticate(db: Sql, token: string, now: number): Promise<Principal | null> {
  return authenticateDigest(db, sha256Hex(token), now);
}

/** The credential whose current token, or whose previous token within its grace period, has this digest. */
export async function authenticateDigest(db: Sql, digest: string, now: number): Promise<Principal | null> {
  const rows = await db.all(
    `SELECT id, namespace_id, application_id, permissions FROM credentials
      WHERE (token_digest = ? OR (previous_token_digest = ? AND previous_token_expires_at > ?)) AND revoked_at IS NULL`,
    [digest, digest, now],
  );
  const principal = await principalOf(db, rows[0]);
  return principal && { ...principal, tokenDigest: digest };
}

/** Reloads a credential by id: a session re-checks that it still exists and is not revoked. */
export async function principalById(db: Sql, credentialId: string): Promise<Principal | null> {
  const rows = await db.all('SELECT id, namespace_id, application_id, permissions FROM credentials WHERE id = ? AND revoked_at IS NULL', [
    credentialId,
  ]);
  return principalOf(db, rows[0]);
}

async function principalOf(db: Sql, row: Record<string, unknown> | undefined): Promise<Principal | null> {
  if (!row) return null;
  const queues = await db.all<{ queue_id: string }>('SELECT queue_id FROM credential_queues WHERE credential_id = ?', [row.id]);
  return {
    credentialId: String(row.id),
    namespaceId: String(row.namespace_id),
    applicationId: String(row.application_id),
    permissions: new Set(String(row.permissions).split(',').filter(Boolean)),
    queueIds: new Set(queues.map((q) => String(q.queue_id))),
  };
}

/** Creates the named row unless it exists, and returns its id. */
async function ensureNamed(
  tx: Sql,
  table: 'namespaces' | 'applications' | 'queues',
  name: string,
  namespaceId: string | null,
  now: number,
): Promise<string> {
  const scope = namespaceId === null ? '' : ' AND namespace_id = ?';
  const params = namespaceId === null ? [name] : [name, namespaceId];
  const columns = namespaceId === null ? '(id, name, created_at)' : '(id, name, created_at, namespace_id)';
  const values = namespaceId === null ? [newId(), name, now] : [newId(), name, now, namespaceId];
  await tx.run(`${tx.phrases.insertIgnore} INTO ${table} ${columns} VALUES (${values.map(() => '?').join(', ')})`, values);
  const [row] = await tx.all(`SELECT id FROM ${table} WHERE name = ?${scope}`, params);
  return String(row!.id);
}

export interface BootstrapInput {
  readonly namespace: string;
  readonly application: string;
  readonly queues: readonly string[];
  readonly permissions: readonly string[];
}

export interface BootstrapResult {
  namespace_id: string;
  application_id: string;
  credential_id: string;
  queue_ids: Record<string, string>;
  token: string;
  permissions: string[];
}

/** Creates or reuses the namespace, application and queues, and always creates a new credential. */
export async function bootstrap(tx: Sql, input: BootstrapInput, now: number): Promise<BootstrapResult> {
  const namespaceId = await ensureNamed(tx, 'namespaces', input.namespace, null, now);
  const applicationId = await ensureNamed(tx, 'applications', input.application, namespaceId, now);
  const queueIds: Record<string, string> = {};
  for (const queue of input.queues) queueIds[queue] = await ensureNamed(tx, 'queues', queue, namespaceId, now);
  const credentialId = newId();
  const token = newToken();
  const permissions = [...new Set(input.permissions)].sort();
  await tx.run(
    'INSERT INTO credentials (id, namespace_id, application_id, token_digest, permissions, created_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?, NULL)',
    [credentialId, namespaceId, applicationId, sha256Hex(token), permissions.join(','), now],
  );
  for (const queueId of new Set(Object.values(queueIds))) {
    await tx.run('INSERT INTO credential_queues (credential_id, queue_id) VALUES (?, ?)', [credentialId, queueId]);
  }
  return { namespace_id: namespaceId, application_id: applicationId, credential_id: credentialId, queue_ids: queueIds, token, permissions };
}

export async function revokeCredential(db: Sql, credentialId: string, now: number): Promise<boolean> {
  const { changes } = await db.run('UPDATE credentials SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL', [now, credentialId]);
  return changes === 1;
}

/** What `orbit credentials list` shows of a credential: never a token or a digest. */
export interface CredentialInfo {
  readonly credentialId: string;
  readonly namespace: string;
  readonly namespaceId: string;
  readonly application: string;
  readonly applicationId: string;
  readonly permissions: string[];
  /** Queue name → id. */
  readonly queueIds: Record<string, string>;
  readonly createdAt: number;
  readonly revokedAt: number | null;
  /** Until when the token a rotation replaced still works; null when there is none (or it has ended). */
  readonly previousTokenExpiresAt: number | null;
}

/**
 * Credentials, oldest first, optionally of one namespace (by name); null when that namespace does
 * not exist.
 */
export async function listCredentials(db: Sql, filter: { namespace?: string; id?: string }, now: number): Promise<CredentialInfo[] | null> {
  const where: string[] = [];
  const params: unknown[] = [];
  if (filter.namespace !== undefined) {
    const [ns] = await db.all('SELECT id FROM namespaces WHERE name = ?', [filter.namespace]);
    if (!ns) return null;
    where.push('c.namespace_id = ?');
    params.push(ns.id);
  }
  if (filter.id !== undefined) {
    where.push('c.id = ?');
    params.push(filter.id);
  }
  const rows = await db.all(
    `SELECT c.id, c.namespace_id, n.name AS namespace, c.application_id, a.name AS application, c.permissions, c.created_at,
            c.revoked_at, c.previous_token_expires_at
       FROM credentials c JOIN namespaces n ON n.id = c.namespace_id JOIN applications a ON a.id = c.application_id
      ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''}
      ORDER BY c.created_at, c.id`,
    params,
  );
  const queues = await db.all(
    `SELECT cq.credential_id, q.id, q.name FROM credential_queues cq JOIN queues q ON q.id = cq.queue_id
      ${filter.id !== undefined ? 'WHERE cq.credential_id = ?' : ''} ORDER BY q.name`,
    filter.id !== undefined ? [filter.id] : [],
  );
  const byCredential = new Map<string, Record<string, string>>();
  for (const q of queues) {
    const set = byCredential.get(String(q.credential_id)) ?? {};
    set[String(q.name)] = String(q.id);
    byCredential.set(String(q.credential_id), set);
  }
  return rows.map((r) => {
    const revoked = numOrNull(r.revoked_at);
    const previous = numOrNull(r.previous_token_expires_at);
    return {
      credentialId: String(r.id),
      namespace: String(r.namespace),
      namespaceId: String(r.namespace_id),
      application: String(r.application),
      applicationId: String(r.application_id),
      permissions: String(r.permissions).split(',').filter(Boolean),
      queueIds: byCredential.get(String(r.id)) ?? {},
      createdAt: num(r.created_at),
      revokedAt: revoked,
      previousTokenExpiresAt: revoked === null && previous !== null && previous > now ? previous : null,
    };
  });
}

export type RotateOutcome =
  | { readonly kind: 'rotated'; readonly token: string; readonly previousExpiresAt: number | null }
  | { readonly kind: 'unknown' }
  | { readonly kind: 'revoked'; readonly revokedAt: number };

/**
 * Gives the credential a new token. With a grace period the replaced token stays valid until
 * `now + graceMs`; without one it stops at once. There is one previous token at most: a second
 * rotation ends the grace period of the first.
 */
export async function rotateCredential(tx: Sql, credentialId: string, graceMs: number, now: number): Promise<RotateOutcome> {
  const [row] = await tx.all(`SELECT token_digest, revoked_at FROM credentials WHERE id = ?${tx.phrases.forUpdate}`, [credentialId]);
  if (!row) return { kind: 'unknown' };
  const revokedAt = numOrNull(row.revoked_at);
  if (revokedAt !== null) return { kind: 'revoked', revokedAt };
  const token = newToken();
  const previousExpiresAt = graceMs > 0 ? now + graceMs : null;
  await tx.run('UPDATE credentials SET token_digest = ?, previous_token_digest = ?, previous_token_expires_at = ? WHERE id = ?', [
    sha256Hex(token),
    previousExpiresAt === null ? null : row.token_digest,
    previousExpiresAt,
    credentialId,
  ]);
  return { kind: 'rotated', token, previousExpiresAt };
}

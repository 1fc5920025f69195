/**
 * @module
 * Credentials (brief decision 7): a bearer token is stored only as its digest, belongs to one
 * namespace and application, and holds a permission set and a queue set.
 */
import { newId, newToken, sha256Hex } from '../crypto.ts';
import { PHRASES, type Sql } from './sql.ts';

export const PERMISSIONS = ['events:manage', 'events:read', 'events:consume', 'results:publish'] as const;
export type Permission = (typeof PERMISSIONS)[number];

export interface Principal {
  readonly credentialId: string;
  readonly namespaceId: string;
  readonly applicationId: string;
  readonly permissions: ReadonlySet<string>;
  readonly queueIds: ReadonlySet<string>;
}

export function authenticate(db: Sql, token: string): Promise<Principal | null> {
  return loadPrincipal(db, 'token_digest', sha256Hex(token));
}

/** Reloads a credential by id: a session re-checks that it still exists and is not revoked. */
export function principalById(db: Sql, credentialId: string): Promise<Principal | null> {
  return loadPrincipal(db, 'id', credentialId);
}

async function loadPrincipal(db: Sql, column: 'token_digest' | 'id', value: string): Promise<Principal | null> {
  const rows = await db.all(
    `SELECT id, namespace_id, application_id, permissions FROM credentials WHERE ${column} = ? AND revoked_at IS NULL`,
    [value],
  );
  const row = rows[0];
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
  await tx.run(`${PHRASES[tx.dialect].insertIgnore} INTO ${table} ${columns} VALUES (${values.map(() => '?').join(', ')})`, values);
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

/**
 * @module
 * Idempotent writes (seed §1–§4). A key is scoped to the credential and the operation; the first
 * request's receipt is stored in the same transaction as its effect. A replay with the same content
 * gets that receipt with `deduplicated: true` and HTTP 200; other content under the same key is
 * IDEMPOTENCY_CONFLICT. Concurrent first requests race on the primary key: the loser rolls back and
 * replays the winner's receipt.
 */
import { OrbitError } from '@orbit/spec/errors';
import { stringify, trustedRawJson } from '@orbit/spec/codec';
import type { Database, Sql } from './sql.ts';
import { isUniqueViolation } from './sql.ts';

export interface Receipt {
  readonly status: number;
  /** The response `data`: a fresh object, or the stored receipt as exact JSON text. */
  readonly data: unknown;
}

export interface IdempotencyScope {
  readonly credentialId: string;
  /** The operation and its target, e.g. `configure:<subscription id>`. */
  readonly scope: string;
  readonly key: string;
  /** Digest of the request's canonical content. */
  readonly digest: string;
}

/** What an operation returns on first execution: its status and `data` without `deduplicated`. */
export interface Outcome {
  readonly status: number;
  readonly data: Record<string, unknown>;
}

async function replay(tx: Sql, scope: IdempotencyScope): Promise<Receipt | null> {
  const [row] = await tx.all('SELECT request_digest, response FROM idempotency_records WHERE credential_id = ? AND scope = ? AND idem_key = ?', [
    scope.credentialId,
    scope.scope,
    scope.key,
  ]);
  if (!row) return null;
  if (String(row.request_digest) !== scope.digest) {
    throw new OrbitError('IDEMPOTENCY_CONFLICT', 'this Idempotency-Key was already used with different content');
  }
  const text = String(row.response);
  // The stored text is the original `data` object; close it with the replay flag.
  return { status: 200, data: trustedRawJson(`${text.slice(0, -1)},"deduplicated":true}`) };
}

export async function idempotent(db: Database, scope: IdempotencyScope, operation: (tx: Sql) => Promise<Outcome>): Promise<Receipt> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await db.transaction(async (tx) => {
        const previous = await replay(tx, scope);
        if (previous) return previous;
        const outcome = await operation(tx);
        await tx.run('INSERT INTO idempotency_records (credential_id, scope, idem_key, request_digest, status, response, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)', [
          scope.credentialId,
          scope.scope,
          scope.key,
          scope.digest,
          outcome.status,
          stringify(outcome.data),
          Date.now(),
        ]);
        return { status: outcome.status, data: { ...outcome.data, deduplicated: false } };
      });
    } catch (error) {
      // A concurrent first request with the same key committed first: replay its receipt.
      if (attempt === 0 && isUniqueViolation(error)) continue;
      throw error;
    }
  }
}

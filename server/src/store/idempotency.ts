/**
 * @module
 * Idempotent writes (seed §1–§4). A key is scoped to the credential and the operation; the first
 * request's receipt is stored in the same transaction as its effect. A replay with the same content
 * gets that receipt with `deduplicated: true` and HTTP 200; other content under the same key is
 * IDEMPOTENCY_CONFLICT. The key is reserved before the operation runs, so concurrent first requests
 * queue on it: the later ones roll back and replay the first one's receipt.
 *
 * Receipts are kept for a retention window (`idempotency_retention_ms`); after it the key is
 * unknown and a request with it is new. A publish receipt records the sequence of its result, and
 * pruning that result scrubs the receipt in the same transaction: the key and the request digest
 * stay, the embedded event goes, and a replay answers EVENT_HISTORY_EXPIRED instead of appending
 * a second time (spec/README.md, Idempotency).
 */
import { OrbitError } from '@orbit/spec/errors';
import { stringify, trustedRawJson } from '@orbit/spec/codec';
import type { Database, Row, Sql } from './sql.ts';
import { isUniqueViolation, num } from './sql.ts';

/** The `status` of a receipt whose result retention removed; its `response` is empty. */
const SCRUBBED = 410;

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
  /** The result the operation appended (a publish): pruning it scrubs the receipt. */
  readonly sequence?: bigint;
}

/**
 * The answer to a request whose key already has a stored receipt: the receipt with
 * `deduplicated: true` when the content is the same, IDEMPOTENCY_CONFLICT when it is not.
 */
export function replayOf(record: Row, digest: string): Receipt {
  if (String(record.request_digest) !== digest) {
    throw new OrbitError('IDEMPOTENCY_CONFLICT', 'this Idempotency-Key was already used with different content');
  }
  if (num(record.status) === SCRUBBED) {
    throw new OrbitError(
      'EVENT_HISTORY_EXPIRED',
      `the result published with this Idempotency-Key was appended once (sequence ${String(record.sequence)}) ` +
        'and retention has since removed it; it is not appended again',
    );
  }
  const text = String(record.response);
  // The stored text is the original `data` object; close it with the replay flag.
  return { status: 200, data: trustedRawJson(`${text.slice(0, -1)},"deduplicated":true}`) };
}

async function replay(tx: Sql, scope: IdempotencyScope): Promise<Receipt | null> {
  const [row] = await tx.all(
    'SELECT request_digest, status, response, sequence FROM idempotency_records WHERE credential_id = ? AND scope = ? AND idem_key = ?',
    [scope.credentialId, scope.scope, scope.key],
  );
  return row ? replayOf(row, scope.digest) : null;
}

export async function idempotent(db: Database, scope: IdempotencyScope, operation: (tx: Sql) => Promise<Outcome>): Promise<Receipt> {
  const key = [scope.credentialId, scope.scope, scope.key];
  for (let attempt = 0; ; attempt++) {
    try {
      return await db.transaction(async (tx) => {
        const previous = await replay(tx, scope);
        if (previous) return previous;
        // Reserve the key before doing the work: a concurrent request with the same key waits on
        // this row, then fails on the primary key and replays our receipt instead of re-running
        // (and tripping over) the operation.
        await tx.run(
          'INSERT INTO idempotency_records (credential_id, scope, idem_key, request_digest, status, response, created_at) VALUES (?, ?, ?, ?, 0, ?, ?)',
          [...key, scope.digest, '', Date.now()],
        );
        const outcome = await operation(tx);
        await tx.run(
          'UPDATE idempotency_records SET status = ?, response = ?, sequence = ? WHERE credential_id = ? AND scope = ? AND idem_key = ?',
          [outcome.status, stringify(outcome.data), outcome.sequence?.toString() ?? null, ...key],
        );
        return { status: outcome.status, data: { ...outcome.data, deduplicated: false } };
      });
    } catch (error) {
      // A concurrent first request with the same key committed first: replay its receipt.
      if (attempt < 2 && isUniqueViolation(error)) continue;
      throw error;
    }
  }
}

/** `WHERE` of `count` receipts by their key: `(credential_id, scope, idem_key)` tuples. */
export function whereKeys(count: number): string {
  return Array.from({ length: count }, () => '(credential_id = ? AND scope = ? AND idem_key = ?)').join(' OR ');
}

/**
 * Removes at most `batch` receipts created before `before` (epoch ms), oldest first, in one
 * transaction; `full` says whether more may be waiting.
 */
export async function expireReceipts(db: Database, before: number, batch: number): Promise<{ deleted: number; full: boolean }> {
  const limit = Math.max(1, Math.trunc(batch));
  return db.transaction(async (tx) => {
    const rows = await tx.all(
      `SELECT credential_id, scope, idem_key FROM idempotency_records WHERE created_at < ? ORDER BY created_at LIMIT ${limit}`,
      [before],
    );
    if (rows.length === 0) return { deleted: 0, full: false };
    await tx.run(
      `DELETE FROM idempotency_records WHERE ${whereKeys(rows.length)}`,
      rows.flatMap((r) => [r.credential_id, r.scope, r.idem_key]),
    );
    return { deleted: rows.length, full: rows.length === limit };
  });
}

/** Scrubs the receipts of removed results (in the transaction that removes them); returns how many. */
export async function scrubReceipts(tx: Sql, sequences: readonly string[]): Promise<number> {
  if (sequences.length === 0) return 0;
  const { changes } = await tx.run(
    `UPDATE idempotency_records SET status = ${SCRUBBED}, response = '' WHERE sequence IN (${sequences.map(() => '?').join(', ')})`,
    [...sequences],
  );
  return changes;
}

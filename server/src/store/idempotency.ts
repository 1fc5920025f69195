/**
 * @module
 * Idempotent writes (spec/README.md, Idempotency). A key is scoped to the credential and the
 * operation; the first request's answer, rendered by the transport, is stored in the same
 * transaction as its effect. A replay with the same content gets that answer back; other content
 * under the same key is IDEMPOTENCY_CONFLICT. The key is reserved before the operation runs, so
 * concurrent first requests queue on it: the later ones roll back and replay the first one's receipt.
 *
 * Receipts are kept for a retention window (`idempotency_retention_ms`); after it the key is
 * unknown and a request with it is new. A publish receipt refers to its result by sequence instead
 * of storing its answer: a replay reads the result with the receipt and renders the answer again,
 * and once retention has removed the result it answers EVENT_HISTORY_EXPIRED instead of appending
 * a second time (spec/README.md, Idempotency).
 */
import { OrbitError } from '@orbit/spec/errors';
import { resultColumnsAs, toResult, type ResultRecord } from './records.ts';
import type { Database, Row, Sql } from './sql.ts';
import { isUniqueViolation, num } from './sql.ts';

/**
 * The `status` of a receipt whose answer is its result in the log (a publish's), with an empty
 * `response`. Why 410: a receipt that a release embedding its event scrubbed when the result was
 * pruned has it too and now answers the same way, and a node of such a release, which reads 410
 * as "pruned", answers a replay of a newer receipt with EVENT_HISTORY_EXPIRED, which a publisher
 * counts as done (docs/operations.md, Upgrading).
 */
export const FROM_LOG = 410;

/** How a replay renders the answer of a receipt that refers to its result (`FROM_LOG`). */
export type FromLog = (result: ResultRecord) => StoredAnswer;

/**
 * What replays read: the receipts (`i`) and, for those that refer to their result, that result,
 * its columns prefixed `r_` (null once retention removed it). `replayOf` reads a row of it.
 */
export const RECEIPTS = {
  columns: `i.credential_id, i.scope, i.idem_key, i.request_digest, i.status, i.response, i.sequence, ${resultColumnsAs('r', 'r_')}`,
  from: `idempotency_records i LEFT JOIN results r ON i.status = ${FROM_LOG} AND r.sequence = i.sequence`,
} as const;

/**
 * The transport's answer to the first request of a key, given back for every repeat: stored with
 * the write's effect, or for a publish rendered again from its result (`FROM_LOG`). Opaque to the
 * store: the wire layer decides what `status` and `body` mean.
 */
export interface StoredAnswer {
  readonly status: number;
  readonly body: string;
}

/** An idempotent write's key, its request content's digest, and how its first answer is stored. */
export interface WriteKey<T> {
  readonly key: string;
  /** Digest of the request's canonical content. */
  readonly digest: string;
  readonly render: (value: T) => StoredAnswer;
}

/** What an idempotent write did: executed now (with its value), or answered by the stored answer of the first. */
export type Written<T> =
  | { readonly replayed: false; readonly value: T; readonly answer: StoredAnswer }
  | { readonly replayed: true; readonly answer: StoredAnswer };

export interface IdempotencyScope {
  readonly credentialId: string;
  /** The operation and its target, e.g. `configure:<subscription id>`. */
  readonly scope: string;
  readonly key: string;
  /** Digest of the request's canonical content. */
  readonly digest: string;
}

export function scopeOf(credentialId: string, scope: string, write: { readonly key: string; readonly digest: string }): IdempotencyScope {
  return { credentialId, scope, key: write.key, digest: write.digest };
}

/** What an operation returns on first execution. */
export interface Effect<T> {
  readonly value: T;
  /** The result the operation appended (a publish): its receipt refers to it. */
  readonly sequence?: bigint;
}

/**
 * The answer to a request whose key already has a stored receipt (a row of `RECEIPTS`): the stored
 * answer, or for a receipt that refers to its result the answer `fromLog` renders of it, when the
 * content is the same; IDEMPOTENCY_CONFLICT when it is not; EVENT_HISTORY_EXPIRED when retention
 * removed the result it appended.
 */
export function replayOf<T>(record: Row, digest: string, fromLog?: FromLog): Written<T> {
  if (String(record.request_digest) !== digest) {
    throw new OrbitError('IDEMPOTENCY_CONFLICT', 'this Idempotency-Key was already used with different content');
  }
  if (num(record.status) !== FROM_LOG) return { replayed: true, answer: { status: num(record.status), body: String(record.response) } };
  if (record.r_sequence === null || record.r_sequence === undefined || !fromLog) {
    throw new OrbitError(
      'EVENT_HISTORY_EXPIRED',
      `the result published with this Idempotency-Key was appended once (sequence ${String(record.sequence)}) ` +
        'and retention has since removed it; it is not appended again',
    );
  }
  return { replayed: true, answer: fromLog(toResult(record, 'r_')) };
}

async function replay<T>(tx: Sql, scope: IdempotencyScope, fromLog: FromLog | undefined): Promise<Written<T> | null> {
  const [row] = await tx.all(
    `SELECT ${RECEIPTS.columns} FROM ${RECEIPTS.from} WHERE i.credential_id = ? AND i.scope = ? AND i.idem_key = ?`,
    [scope.credentialId, scope.scope, scope.key],
  );
  return row ? replayOf<T>(row, scope.digest, fromLog) : null;
}

/**
 * Runs `operation` once per key. `fromLog` (a publish's): the receipt of an operation that
 * appended a result refers to it, and a replay renders its answer with `fromLog`.
 */
export async function idempotent<T>(
  db: Database,
  scope: IdempotencyScope,
  render: (value: T) => StoredAnswer,
  operation: (tx: Sql) => Promise<Effect<T>>,
  fromLog?: FromLog,
): Promise<Written<T>> {
  const key = [scope.credentialId, scope.scope, scope.key];
  for (let attempt = 0; ; attempt++) {
    try {
      return await db.transaction(async (tx) => {
        const previous = await replay<T>(tx, scope, fromLog);
        if (previous) return previous;
        // Reserve the key before doing the work: a concurrent request with the same key waits on
        // this row, then fails on the primary key and replays our receipt instead of re-running
        // (and tripping over) the operation.
        await tx.run(
          'INSERT INTO idempotency_records (credential_id, scope, idem_key, request_digest, status, response, created_at) VALUES (?, ?, ?, ?, 0, ?, ?)',
          [...key, scope.digest, '', Date.now()],
        );
        const effect = await operation(tx);
        const answer = render(effect.value);
        const logged = fromLog !== undefined && effect.sequence !== undefined;
        await tx.run(
          'UPDATE idempotency_records SET status = ?, response = ?, sequence = ? WHERE credential_id = ? AND scope = ? AND idem_key = ?',
          [logged ? FROM_LOG : answer.status, logged ? '' : answer.body, effect.sequence?.toString() ?? null, ...key],
        );
        return { replayed: false, value: effect.value, answer } as const;
      });
    } catch (error) {
      // A concurrent first request with the same key committed first: replay its receipt.
      if (attempt < 2 && isUniqueViolation(error)) continue;
      throw error;
    }
  }
}

/** `WHERE` of `count` receipts by their key: `(credential_id, scope, idem_key)` tuples, of table alias `table` when given (`i.`). */
export function whereKeys(count: number, table = ''): string {
  const one = `(${table}credential_id = ? AND ${table}scope = ? AND ${table}idem_key = ?)`;
  return Array.from({ length: count }, () => one).join(' OR ');
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

/**
 * Scrubs the receipts of removed results that embed their event (written by earlier releases), in
 * the transaction that removes the results: the event goes, and the receipt refers to the result
 * that is gone, as the receipts written now do (they need nothing). Returns how many it scrubbed.
 */
export async function scrubReceipts(tx: Sql, sequences: readonly string[]): Promise<number> {
  if (sequences.length === 0) return 0;
  const { changes } = await tx.run(
    `UPDATE idempotency_records SET status = ${FROM_LOG}, response = '' WHERE status <> ${FROM_LOG} AND sequence IN (${sequences.map(() => '?').join(', ')})`,
    [...sequences],
  );
  return changes;
}

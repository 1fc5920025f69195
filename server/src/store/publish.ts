/**
 * @module
 * Publishing through the result seam with group commit. Every publish is idempotent on its own
 * key, but publishes that arrive together share one transaction: one lock of the head row, one
 * multi-row INSERT of results, one of receipts, one durable commit. Without this the head row
 * serializes every publish behind its own commit.
 *
 * A group never half-commits: a receipt is written in the transaction of its result. When another
 * node commits one of the group's keys first (a unique violation), the group is rolled back and
 * each publish runs alone through `idempotent`, which replays that node's receipt.
 */
import { RawJson, stringify } from '@orbit/spec/codec';
import { idempotent, replayOf, whereKeys, type IdempotencyScope, type StoredAnswer, type Written } from './idempotency.ts';
import type { ResultRecord } from './records.ts';
import { appendAfter, appendResults, lockHead, type ResultInput } from './results.ts';
import { big, command, isUniqueViolation, query, type Database, type Query, type Row } from './sql.ts';

export interface PublishRequest {
  readonly scope: IdempotencyScope;
  readonly input: ResultInput;
  readonly render: (result: ResultRecord) => StoredAnswer;
}

/** Each publish's own answer; an error (IDEMPOTENCY_CONFLICT) belongs to that publish alone. */
export type PublishOutcome = { readonly written: Written<ResultRecord> } | { readonly error: unknown };

/** A publish's share of a group, in bytes: its result and details, stored twice (result and receipt). */
export function publishWeight(request: PublishRequest): number {
  const bytes = (value: ResultInput['details'] | ResultInput['result']): number =>
    value === undefined ? 0 : Buffer.byteLength(value instanceof RawJson ? value.text : stringify(value));
  return 2 * (bytes(request.input.details) + bytes(request.input.result)) + 1024;
}

/** Bytes of results per group: well below MySQL's default 16 MiB max_allowed_packet. */
export const MAX_GROUP_BYTES = 4 * 1024 * 1024;

const identity = (s: Pick<IdempotencyScope, 'credentialId' | 'scope' | 'key'>): string => `${s.credentialId}\u0000${s.scope}\u0000${s.key}`;

/** Publishes alone, as the seam did before groups: the key is reserved before the append. */
function publishAlone(db: Database, request: PublishRequest): Promise<PublishOutcome> {
  return idempotent(db, request.scope, request.render, async (tx) => {
    const [result] = await appendResults(tx, [request.input], Date.now());
    return { value: result!, sequence: result!.sequence };
  }).then(
    (written) => ({ written }),
    (error: unknown) => ({ error }),
  );
}

function storedReceipts(scopes: readonly IdempotencyScope[]): Query {
  return query(
    `SELECT credential_id, scope, idem_key, request_digest, status, response, sequence
       FROM idempotency_records WHERE ${whereKeys(scopes.length)}`,
    scopes.flatMap((s) => [s.credentialId, s.scope, s.key]),
  );
}

function byIdentity(rows: readonly Row[]): Map<string, Row> {
  return new Map(
    rows.map((r) => [identity({ credentialId: String(r.credential_id), scope: String(r.scope), key: String(r.idem_key) }), r]),
  );
}

/**
 * One transaction for publishes with distinct keys, in two round trips: the stored receipts and
 * the head's lock, then the results, the head's move, the receipts and the commit.
 */
function commitGroup(db: Database, group: readonly PublishRequest[]): Promise<PublishOutcome[]> {
  return db.transaction(async (tx) => {
    const [receipts, [head]] = await tx.batch([storedReceipts(group.map((r) => r.scope)), lockHead(tx)]);
    const stored = byIdentity(receipts);
    const outcomes: PublishOutcome[] = new Array(group.length);
    const fresh: number[] = [];
    group.forEach((request, i) => {
      const record = stored.get(identity(request.scope));
      if (!record) {
        fresh.push(i);
        return;
      }
      try {
        outcomes[i] = { written: replayOf<ResultRecord>(record, request.scope.digest) };
      } catch (error) {
        outcomes[i] = { error };
      }
    });
    if (fresh.length === 0) {
      await tx.finish([]);
      return outcomes;
    }
    const now = Date.now();
    const { results, statements } = appendAfter(
      big(head!.head_sequence),
      fresh.map((i) => group[i]!.input),
      now,
    );
    const answers = results.map((result, k) => group[fresh[k]!]!.render(result));
    await tx.finish([
      ...statements,
      command(
        `INSERT INTO idempotency_records (credential_id, scope, idem_key, request_digest, status, response, created_at, sequence)
         VALUES ${fresh.map(() => '(?, ?, ?, ?, ?, ?, ?, ?)').join(', ')}`,
        fresh.flatMap((i, k) => {
          const { credentialId, scope, key, digest } = group[i]!.scope;
          return [credentialId, scope, key, digest, answers[k]!.status, answers[k]!.body, now, results[k]!.sequence.toString()];
        }),
      ),
    ]);
    fresh.forEach((i, k) => {
      outcomes[i] = { written: { replayed: false, value: results[k]!, answer: answers[k]! } };
    });
    return outcomes;
  });
}

/**
 * Publishes a group and answers each request. The first request of each key goes in the group;
 * a repeat of a key within the group waits for it and then replays (or conflicts) like any replay.
 */
export async function publishAll(db: Database, requests: readonly PublishRequest[]): Promise<PublishOutcome[]> {
  const seen = new Set<string>();
  const leaders: number[] = [];
  const repeats: number[] = [];
  requests.forEach((request, i) => {
    const id = identity(request.scope);
    (seen.has(id) ? repeats : leaders).push(i);
    seen.add(id);
  });
  const outcomes: PublishOutcome[] = new Array(requests.length);
  const group = leaders.map((i) => requests[i]!);
  let answers: PublishOutcome[];
  try {
    answers = await commitGroup(db, group);
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
    answers = await Promise.all(group.map((request) => publishAlone(db, request)));
  }
  leaders.forEach((i, k) => {
    outcomes[i] = answers[k]!;
  });
  for (const i of repeats) outcomes[i] = await publishAlone(db, requests[i]!);
  return outcomes;
}

/** The highest sequence the outcomes appended, or undefined when none appended (all replays or errors). */
export function highestAppended(outcomes: readonly PublishOutcome[]): bigint | undefined {
  let highest: bigint | undefined;
  for (const o of outcomes)
    if ('written' in o && !o.written.replayed && (highest === undefined || o.written.value.sequence > highest))
      highest = o.written.value.sequence;
  return highest;
}

/**
 * @module
 * Publishing through the result seam with group commit. Every publish is idempotent on its own
 * key, but publishes that arrive together share one transaction: one lock of the head row, one
 * multi-row INSERT of results, one of receipts, one durable commit. Without this the head row
 * serializes every publish behind its own commit.
 *
 * A group goes in one round trip when none of its keys has a receipt yet, which is nearly always (a
 * key comes back only when a client retries): `commitFresh` writes the receipts without reading
 * first, and a key that has one after all fails the receipts' primary key, which rolls the group
 * back and sends it through `commitGroup` (two round trips: it reads the receipts, then replays or
 * appends). A group never half-commits: a receipt is written in the transaction of its result. When
 * another node commits one of the group's keys first (a unique violation there too), the group is
 * rolled back and each publish runs alone through `idempotent`, which replays that node's receipt.
 */
import { RawJson, stringify } from '@orbit/spec/codec';
import {
  FROM_LOG,
  idempotent,
  RECEIPTS,
  replayOf,
  whereKeys,
  type IdempotencyScope,
  type StoredAnswer,
  type Written,
} from './idempotency.ts';
import type { ResultRecord } from './records.ts';
import { appendAfter, appendAndCommit, appendResults, lockHead, type ResultInput, type SequenceSql } from './results.ts';
import { big, command, isUniqueViolation, query, type Command, type Database, type Query, type Row } from './sql.ts';

export interface PublishRequest {
  readonly scope: IdempotencyScope;
  readonly input: ResultInput;
  readonly render: (result: ResultRecord) => StoredAnswer;
}

/** Each publish's own answer; an error (IDEMPOTENCY_CONFLICT) belongs to that publish alone. */
export type PublishOutcome = { readonly written: Written<ResultRecord> } | { readonly error: unknown };

/** A publish's share of a group, in bytes: its result and details (its receipt refers to them). */
export function publishWeight(request: PublishRequest): number {
  const bytes = (value: ResultInput['details'] | ResultInput['result']): number =>
    value === undefined ? 0 : Buffer.byteLength(value instanceof RawJson ? value.text : stringify(value));
  return bytes(request.input.details) + bytes(request.input.result) + 1024;
}

/** Bytes of results per group: well below MySQL's default 16 MiB max_allowed_packet. */
export const MAX_GROUP_BYTES = 4 * 1024 * 1024;

const identity = (s: Pick<IdempotencyScope, 'credentialId' | 'scope' | 'key'>): string => `${s.credentialId}\u0000${s.scope}\u0000${s.key}`;

/** Publishes alone, as the seam did before groups: the key is reserved before the append. */
function publishAlone(db: Database, request: PublishRequest): Promise<PublishOutcome> {
  return idempotent(
    db,
    request.scope,
    request.render,
    async (tx) => {
      const [result] = await appendResults(tx, [request.input], Date.now());
      return { value: result!, sequence: result!.sequence };
    },
    request.render,
  ).then(
    (written) => ({ written }),
    (error: unknown) => ({ error }),
  );
}

function storedReceipts(scopes: readonly IdempotencyScope[]): Query {
  return query(
    `SELECT ${RECEIPTS.columns} FROM ${RECEIPTS.from} WHERE ${whereKeys(scopes.length, 'i.')}`,
    scopes.flatMap((s) => [s.credentialId, s.scope, s.key]),
  );
}

function byIdentity(rows: readonly Row[]): Map<string, Row> {
  return new Map(
    rows.map((r) => [identity({ credentialId: String(r.credential_id), scope: String(r.scope), key: String(r.idem_key) }), r]),
  );
}

/**
 * The receipts of publishes, each referring to its result by the sequence the SQL `sequence(k)`
 * gives (spec/README.md, "a publish receipt refers to its result"); both ways of committing a group
 * write them.
 */
function receiptsOf(scopes: readonly IdempotencyScope[], sequence: SequenceSql, now: number): Command {
  return command(
    `INSERT INTO idempotency_records (credential_id, scope, idem_key, request_digest, status, response, created_at, sequence)
       VALUES ${scopes.map((_, k) => `(?, ?, ?, ?, ${FROM_LOG}, '', ?, ${sequence(k)})`).join(', ')}`,
    scopes.flatMap((s) => [s.credentialId, s.scope, s.key, s.digest, now]),
  );
}

/** The outcome of a publish that appended `value`: its answer, rendered as every replay renders it. */
function appended(request: PublishRequest, value: ResultRecord): PublishOutcome {
  return { written: { replayed: false, value, answer: request.render(value) } };
}

/**
 * A group none of whose keys has a receipt, in one round trip (`appendAndCommit` with the
 * receipts). A key with a receipt after all fails the receipts' primary key and rejects with that
 * unique violation, with nothing written.
 */
async function commitFresh(db: Database, group: readonly PublishRequest[]): Promise<PublishOutcome[]> {
  const now = Date.now();
  const results = await db.transaction((tx) =>
    appendAndCommit(
      tx,
      group.map((r) => r.input),
      now,
      (sequence) => [
        receiptsOf(
          group.map((r) => r.scope),
          sequence,
          now,
        ),
      ],
    ),
  );
  return results.map((value, i) => appended(group[i]!, value));
}

/** A group in one round trip when it is fresh, else in two (`commitGroup`). */
async function commitFreshOrGroup(db: Database, group: readonly PublishRequest[]): Promise<PublishOutcome[]> {
  try {
    return await commitFresh(db, group);
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
  }
  return commitGroup(db, group);
}

/**
 * One transaction for publishes with distinct keys, in two round trips: the stored receipts (with
 * the results they refer to) and the head's lock, then the results, the head's move, the receipts
 * and the commit.
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
        outcomes[i] = { written: replayOf<ResultRecord>(record, request.scope.digest, request.render) };
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
    await tx.finish([
      ...statements,
      receiptsOf(
        fresh.map((i) => group[i]!.scope),
        (k) => results[k]!.sequence.toString(),
        now,
      ),
    ]);
    fresh.forEach((i, k) => {
      outcomes[i] = appended(group[i]!, results[k]!);
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
    answers = await commitFreshOrGroup(db, group);
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

/**
 * @module
 * The result log (spec/README.md, The result log). One ordered, append-only log per deployment. An
 * appender locks the single `result_head` row, takes the next sequence and moves the head in the
 * same transaction, so sequences commit in order and the committed head — every sequence at or
 * below it is committed — is simply the head row as other transactions see it. A scanner that
 * reads up to the head can never skip a result whose transaction commits late.
 */
import type { TraceContext } from '@orbit/generated';
import { RawJson, stringify } from '@orbit/spec/codec';
import { newId } from '../crypto.ts';
import type { EventType } from '../domain/subscription.ts';
import { RESULT_COLUMNS, toResult, type ResultRecord } from './records.ts';
import { big, command, query, type Command, type Query, type Row, type Sql, type Tx } from './sql.ts';

export interface ResultInput {
  readonly queueId: string;
  readonly type: EventType;
  readonly taskId: string;
  /** Canonical uint64 decimal string. */
  readonly taskRevision: string;
  /** A JSON object; RawJson keeps the publisher's exact text. Omitted means `{}`. */
  readonly details?: RawJson | Record<string, unknown>;
  /** Any JSON value, kept as exact text. Omitted means the snapshot has no `result`. */
  readonly result?: RawJson;
  readonly effectUncertain?: boolean;
  readonly currentAttemptId?: string;
  /** The publish's W3C trace context, stored and delivered as given (spec/README.md, Trace context). */
  readonly traceContext?: TraceContext;
}

export interface LogPosition {
  /** The committed head: the highest sequence below which everything is committed. */
  readonly head: bigint;
  /** Results at or below this sequence may have been pruned (spec/README.md, Retention). */
  readonly boundary: bigint;
}

export async function logPosition(db: Sql, lock = false): Promise<LogPosition> {
  const [row] = await db.all(`SELECT head_sequence, retention_boundary FROM result_head WHERE id = 1${lock ? db.phrases.forUpdate : ''}`);
  return { head: big(row!.head_sequence), boundary: big(row!.retention_boundary) };
}

const COLUMN_NAMES = RESULT_COLUMNS.split(', ');
const ROW_PLACEHOLDERS = `(${COLUMN_NAMES.map(() => '?').join(', ')})`;

function jsonText(value: RawJson | Record<string, unknown> | undefined): string {
  if (value === undefined) return '{}';
  return value instanceof RawJson ? value.text : stringify(value);
}

/** The head row, locked: an appender holds it until it commits, so sequences commit in order. */
export function lockHead(sql: Sql): Query {
  return query(`SELECT head_sequence, retention_boundary FROM result_head WHERE id = 1${sql.phrases.forUpdate}`);
}

/**
 * The results and the statements that append them after `head` (read with `lockHead`): one
 * multi-row INSERT and the move of the head, for the caller to send in one round trip.
 */
export function appendAfter(head: bigint, inputs: readonly ResultInput[], now: number): { results: ResultRecord[]; statements: Command[] } {
  if (inputs.length === 0) return { results: [], statements: [] };
  const rows: Row[] = [];
  let sequence = head;
  for (const input of inputs) {
    sequence += 1n;
    rows.push({
      sequence,
      id: newId(),
      queue_id: input.queueId,
      type: input.type,
      task_id: input.taskId,
      task_revision: input.taskRevision,
      occurred_at: now,
      details: jsonText(input.details),
      result: input.result === undefined ? null : input.result.text,
      effect_uncertain: input.effectUncertain ? 1 : 0,
      current_attempt_id: input.currentAttemptId ?? null,
      traceparent: input.traceContext?.traceparent ?? null,
      tracestate: input.traceContext?.tracestate ?? null,
    });
  }
  const placeholders = rows.map(() => ROW_PLACEHOLDERS).join(', ');
  const params = rows.flatMap((r) => COLUMN_NAMES.map((c) => (c === 'sequence' ? (r.sequence as bigint).toString() : r[c])));
  return {
    results: rows.map((row) => toResult(row)),
    statements: [
      command(`INSERT INTO results (${RESULT_COLUMNS}) VALUES ${placeholders}`, params),
      command('UPDATE result_head SET head_sequence = ? WHERE id = 1', [sequence.toString()]),
    ],
  };
}

/** The SQL of the `i`-th appended result's sequence (from 0), for what `appendAndCommit`'s `also` writes. */
export type SequenceSql = (i: number) => string;

/**
 * Appends results in a transaction of their own and commits it, in one round trip: the rows take
 * their sequences from the head inside the statements, and the last statement says where the head
 * was. MySQL locks the head and reads it into a session variable (`SELECT … INTO @orbit_head … FOR
 * UPDATE`); SQLite (one writer, so no lock) selects the rows from a VALUES list joined to the head.
 * So an append of one result costs one round trip, and on SQLite one message to its writer thread.
 *
 * `also` adds statements to the same round trip, after the results and before the head moves: it
 * gets the SQL of each result's sequence.
 */
export async function appendAndCommit(
  tx: Tx,
  inputs: readonly ResultInput[],
  now: number,
  also: (sequence: SequenceSql) => Command[] = () => [],
): Promise<ResultRecord[]> {
  if (inputs.length === 0) {
    await tx.finish([]);
    return [];
  }
  // The sequences are offsets here (1, 2, …): the statements add the head, the records get it below.
  const { results, statements } = appendAfter(0n, inputs, now);
  const columns = RESULT_COLUMNS.split(', ').length;
  const params = statements[0]!.params.filter((_, k) => k % columns !== 0);
  const n = inputs.length;
  const rows = (first: (i: number) => string) =>
    inputs.map((_, i) => `(${first(i)}, ${Array.from({ length: columns - 1 }, () => '?').join(', ')})`).join(', ');
  const answers =
    tx.dialect === 'mysql'
      ? await tx.finish([
          command(`SELECT head_sequence INTO @orbit_head FROM result_head WHERE id = 1${tx.phrases.forUpdate}`),
          command(`INSERT INTO results (${RESULT_COLUMNS}) VALUES ${rows((i) => `@orbit_head + ${i + 1}`)}`, params),
          ...also((i) => `@orbit_head + ${i + 1}`),
          command(`UPDATE result_head SET head_sequence = @orbit_head + ${n} WHERE id = 1`),
          query('SELECT @orbit_head AS head'),
        ])
      : await tx.finish([
          command(
            `INSERT INTO results (${RESULT_COLUMNS}) SELECT h.head_sequence + v.column1, ${Array.from({ length: columns - 1 }, (_, c) => `v.column${c + 2}`).join(', ')}
               FROM result_head h, (VALUES ${rows((i) => String(i + 1))}) v WHERE h.id = 1`,
            params,
          ),
          ...also((i) => `(SELECT head_sequence FROM result_head WHERE id = 1) + ${i + 1}`),
          command(`UPDATE result_head SET head_sequence = head_sequence + ${n} WHERE id = 1`),
          query(`SELECT head_sequence - ${n} AS head FROM result_head WHERE id = 1`),
        ]);
  const [head] = answers[answers.length - 1] as Row[];
  const base = big(head!.head);
  return results.map((r) => ({ ...r, sequence: base + r.sequence }));
}

/**
 * Appends results inside the caller's transaction and returns them. Call it from your own
 * `db.transaction` to publish atomically with your own writes; the head row stays locked until
 * that transaction ends, so keep it short.
 */
export async function appendResults(tx: Sql, inputs: readonly ResultInput[], now: number): Promise<ResultRecord[]> {
  if (inputs.length === 0) return [];
  const [[row]] = await tx.batch([lockHead(tx)]);
  const { results, statements } = appendAfter(big(row!.head_sequence), inputs, now);
  await tx.batch(statements);
  return results;
}

export async function resultBySequence(db: Sql, sequence: bigint): Promise<ResultRecord | undefined> {
  const [row] = await db.all(`SELECT ${RESULT_COLUMNS} FROM results WHERE sequence = ?`, [sequence.toString()]);
  return row && toResult(row);
}

/** Matching results of a queue after `after`, up to `upTo`, ascending. */
export async function matchingResults(
  db: Sql,
  args: { queueId: string; types: readonly string[]; after: bigint; upTo: bigint; limit: number; columns?: string },
): Promise<Row[]> {
  const types = args.types.map(() => '?').join(', ');
  return db.all(
    `SELECT ${args.columns ?? RESULT_COLUMNS} FROM results WHERE queue_id = ? AND sequence > ? AND sequence <= ? AND type IN (${types}) ORDER BY sequence LIMIT ${Math.trunc(args.limit)}`,
    [args.queueId, args.after.toString(), args.upTo.toString(), ...args.types],
  );
}

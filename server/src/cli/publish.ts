/**
 * @module
 * `orbit publish`: appends one result through the same rules as the HTTP seam, directly to the
 * database (an operator tool; no credential involved). With `--batch FILE` it appends the results
 * of a file (spec/README.md, Batch publish), each read by the HTTP seam's own `publishInput`.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { isCanonicalUint64, parseStrict, RawJson, stringify } from '@orbit/spec/codec';
import { MAX_BATCH_ITEMS } from '@orbit/spec/protocol';
import { EVENT_TYPES, type EventType } from '../domain/subscription.ts';
import { eventJson } from '../wire/json.ts';
import { Store, type ResultInput } from '../store/store.ts';
import { publishInput } from '../http/results.ts';
import { UsageError } from './usage.ts';
import { PATTERNS, RAW_JSON_PATHS, validatePublishResultRequest } from '@orbit/generated';

function jsonArgument(name: string, text: string): RawJson {
  try {
    parseStrict(text);
  } catch (error) {
    throw new Error(`--${name} is not strict JSON: ${(error as Error).message}`);
  }
  return new RawJson(text.trim());
}

/**
 * The results of a batch file: a JSON array of `PublishResultRequest` bodies, or one body per line
 * (JSON lines; blank lines are skipped). Every item is checked before anything is written; the
 * first bad one names its place (`/3/task_revision`, `line 4: /task_revision`).
 */
export function batchInputs(queueId: string, text: string): ResultInput[] {
  /** `at` is the item's JSON pointer in an array; `label` names its line in JSON lines. */
  const one = (value: unknown, at: string, label = ''): ResultInput => {
    if (!validatePublishResultRequest(value)) {
      const first = validatePublishResultRequest.errors?.[0];
      const extra = (first?.params as { unevaluatedProperty?: string } | undefined)?.unevaluatedProperty;
      const where = `${at}${first?.instancePath ?? ''}` || 'the result';
      throw new UsageError(`${label}${where} ${first?.message ?? 'is invalid'}${extra ? `: "${extra}"` : ''}`, { showUsage: false });
    }
    try {
      return publishInput(queueId, value, at);
    } catch (error) {
      throw new UsageError(`${label}${(error as Error).message}`, { showUsage: false });
    }
  };
  const strict = (source: string, raw: readonly (readonly string[])[], where: string): unknown => {
    try {
      return parseStrict(source, { raw });
    } catch (error) {
      throw new UsageError(`${where}is not strict JSON: ${(error as Error).message}`, { showUsage: false });
    }
  };
  const trimmed = text.trim();
  let inputs: ResultInput[];
  if (trimmed.startsWith('[')) {
    const items = strict(
      trimmed,
      RAW_JSON_PATHS.PublishResultRequest.map((path) => ['*', ...path]),
      'the batch ',
    );
    inputs = (items as unknown[]).map((item, i) => one(item, `/${i}`));
  } else {
    inputs = [];
    text.split('\n').forEach((line, i) => {
      if (line.trim() === '') return;
      inputs.push(one(strict(line, RAW_JSON_PATHS.PublishResultRequest, `line ${i + 1} `), '', `line ${i + 1}: `));
    });
  }
  if (inputs.length === 0) throw new UsageError('the batch has no results', { showUsage: false });
  return inputs;
}

/** `--batch FILE` (`-` is stdin): appends in transactions of up to MAX_BATCH_ITEMS and prints one `{event}` line per result. */
async function publishBatch(store: Store, queueId: string, file: string): Promise<void> {
  const inputs = batchInputs(queueId, readFileSync(file === '-' ? 0 : file, 'utf8'));
  if (!(await store.queueExists(queueId))) throw new Error(`queue ${queueId} does not exist`);
  for (let from = 0; from < inputs.length; from += MAX_BATCH_ITEMS) {
    const rows = await store.appendResults(inputs.slice(from, from + MAX_BATCH_ITEMS));
    for (const row of rows) console.log(stringify({ event: eventJson(row) }));
  }
}

export async function publishCommand(
  args: string[],
  databaseUrl: (v: { database?: string | undefined; config?: string | undefined }) => string,
): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      'queue-id': { type: 'string' },
      type: { type: 'string' },
      'task-id': { type: 'string' },
      'task-revision': { type: 'string', default: '1' },
      details: { type: 'string' },
      result: { type: 'string' },
      'effect-uncertain': { type: 'boolean' },
      'current-attempt-id': { type: 'string' },
      batch: { type: 'string' },
      database: { type: 'string' },
      config: { type: 'string' },
    },
    strict: true,
  });
  const queueId = values['queue-id'];
  const taskId = values['task-id'];
  if (!queueId || !PATTERNS.id.test(queueId)) throw new UsageError('--queue-id must be 32 lower-case hex characters');
  if (values.batch !== undefined) {
    const single = ['type', 'task-id', 'details', 'result', 'effect-uncertain', 'current-attempt-id'] as const;
    const mixed = single.find((name) => values[name] !== undefined);
    if (mixed) throw new UsageError(`--batch takes every result from the file; --${mixed} is not allowed with it`);
    const store = await Store.open(databaseUrl(values));
    try {
      await publishBatch(store, queueId, values.batch);
    } finally {
      await store.close();
    }
    return;
  }
  if (!taskId || !PATTERNS.id.test(taskId)) throw new UsageError('--task-id must be 32 lower-case hex characters');
  if (!values.type || !(EVENT_TYPES as readonly string[]).includes(values.type)) {
    throw new UsageError(`--type must be one of ${EVENT_TYPES.join(', ')}`);
  }
  if (!isCanonicalUint64(values['task-revision'])) throw new UsageError('--task-revision must be a canonical uint64');
  const attempt = values['current-attempt-id'];
  if (attempt !== undefined && !PATTERNS.id.test(attempt))
    throw new UsageError('--current-attempt-id must be 32 lower-case hex characters');
  const details = values.details === undefined ? undefined : jsonArgument('details', values.details);
  if (details && !details.text.startsWith('{')) throw new UsageError('--details must be a JSON object');
  const store = await Store.open(databaseUrl(values));
  try {
    if (!(await store.queueExists(queueId))) throw new Error(`queue ${queueId} does not exist`);
    const [row] = await store.appendResults([
      {
        queueId,
        type: values.type as EventType,
        taskId,
        taskRevision: values['task-revision'],
        ...(details ? { details } : {}),
        ...(values.result !== undefined ? { result: jsonArgument('result', values.result) } : {}),
        ...(values['effect-uncertain'] ? { effectUncertain: true } : {}),
        ...(attempt ? { currentAttemptId: attempt } : {}),
      },
    ]);
    console.log(stringify({ event: eventJson(row!) }));
  } finally {
    await store.close();
  }
}

/**
 * @module
 * `orbit publish`: appends one result through the same rules as the HTTP seam, directly to the
 * database (an operator tool; no credential involved). With `--batch FILE` it appends the results
 * of a file (spec/README.md, Batch publish), each read by the HTTP seam's own `publishInput`.
 */
import { readFileSync } from 'node:fs';
import { isCanonicalUint64, parseStrict, RawJson, stringify } from '@orbit/spec/codec';
import { MAX_BATCH_ITEMS } from '@orbit/spec/protocol';
import { EVENT_TYPES, type EventType } from '../domain/subscription.ts';
import { eventJson } from '../wire/json.ts';
import type { ResultInput, Store } from '../store/store.ts';
import { publishInput } from '../http/results.ts';
import { DATABASE_OPTIONS, openStore } from './options.ts';
import { type Form, parseForm, UsageError } from './usage.ts';
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

/** The text of `--batch FILE` (`-` is stdin); a file that cannot be read is a usage error naming it. */
function readBatch(file: string): string {
  try {
    return readFileSync(file === '-' ? 0 : file, 'utf8');
  } catch (error) {
    throw new UsageError(`--batch: cannot read ${file === '-' ? 'stdin' : `"${file}"`}: ${(error as Error).message}`, { showUsage: false });
  }
}

/** Appends a batch's results in transactions of up to MAX_BATCH_ITEMS and prints one `{event}` line per result. */
async function publishBatch(store: Store, queueId: string, inputs: readonly ResultInput[]): Promise<void> {
  if (!(await store.queueExists(queueId))) throw new Error(`queue ${queueId} does not exist`);
  for (let from = 0; from < inputs.length; from += MAX_BATCH_ITEMS) {
    const rows = await store.appendResults(inputs.slice(from, from + MAX_BATCH_ITEMS));
    for (const row of rows) console.log(stringify({ event: eventJson(row) }));
  }
}

export const PUBLISH_FORM = {
  name: 'publish',
  summary: 'append one result, or the results of a file, to a queue (no credential involved; no idempotency receipts)',
  options: {
    'queue-id': { type: 'string', value: 'ID', required: true, help: 'The queue (32 lower-case hex characters).' },
    type: { type: 'string', value: 'T', help: `One result: its type, one of ${EVENT_TYPES.join(', ')}.` },
    'task-id': { type: 'string', value: 'ID', help: 'One result: the task (32 lower-case hex characters).' },
    'task-revision': { type: 'string', value: 'N', default: '1', help: 'One result: the task revision (a canonical uint64).' },
    details: { type: 'string', value: 'JSON', help: 'One result: its details, a strict JSON object.' },
    result: { type: 'string', value: 'JSON', help: 'One result: its result, strict JSON (big integers kept exactly).' },
    'effect-uncertain': { type: 'boolean', help: 'One result: the task may have had its effect although it failed.' },
    'current-attempt-id': { type: 'string', value: 'ID', help: 'One result: the attempt it reports (32 lower-case hex characters).' },
    batch: {
      type: 'string',
      value: 'FILE',
      help:
        'Instead of one result, the results of FILE (- for stdin): a JSON array of PublishResultRequest bodies, or one per line. ' +
        `Every one is checked before any is written; they are appended in transactions of up to ${MAX_BATCH_ITEMS}.`,
    },
    ...DATABASE_OPTIONS,
  },
  notes: ['Prints one {"event": ...} line per appended result.'],
} as const satisfies Form;

export async function publishCommand(args: string[]): Promise<void> {
  const { values } = parseForm(PUBLISH_FORM, args);
  const queueId = values['queue-id'];
  const taskId = values['task-id'];
  if (!queueId || !PATTERNS.id.test(queueId)) throw new UsageError('--queue-id must be 32 lower-case hex characters');
  if (values.batch !== undefined) {
    const single = ['type', 'task-id', 'details', 'result', 'effect-uncertain', 'current-attempt-id'] as const;
    const mixed = single.find((name) => values[name] !== undefined);
    if (mixed) throw new UsageError(`--batch takes every result from the file; --${mixed} is not allowed with it`);
    const inputs = batchInputs(queueId, readBatch(values.batch));
    const store = await openStore(values);
    try {
      await publishBatch(store, queueId, inputs);
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
  const store = await openStore(values);
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

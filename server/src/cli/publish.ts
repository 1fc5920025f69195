/**
 * @module
 * `orbit publish`: appends one result through the same rules as the HTTP seam, directly to the
 * database (an operator tool; no credential involved).
 */
import { parseArgs } from 'node:util';
import { isCanonicalUint64, parseStrict, RawJson, stringify } from '@orbit/spec/codec';
import { EVENT_TYPES, type EventType } from '../domain/subscription.ts';
import { eventJson } from '../wire/json.ts';
import { Store } from '../store/store.ts';
import { UsageError } from './usage.ts';
import { PATTERNS } from '@orbit/generated';

function jsonArgument(name: string, text: string): RawJson {
  try {
    parseStrict(text);
  } catch (error) {
    throw new Error(`--${name} is not strict JSON: ${(error as Error).message}`);
  }
  return new RawJson(text.trim());
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
      database: { type: 'string' },
      config: { type: 'string' },
    },
    strict: true,
  });
  const queueId = values['queue-id'];
  const taskId = values['task-id'];
  if (!queueId || !PATTERNS.id.test(queueId)) throw new UsageError('--queue-id must be 32 lower-case hex characters');
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

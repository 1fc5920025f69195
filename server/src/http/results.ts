/**
 * @module
 * The result seam over HTTP (spec/README.md, The result log): `POST /v1/queues/{queue_id}/results`
 * appends one result to the log. `result` and `details` are kept as the exact JSON text that was sent.
 * `publishInput` and `publishKey` are the one reading of a result to publish, shared with the batch
 * route (results-batch.ts).
 */
import { type PublishResultMembers, validatePublishResultRequest } from '@orbit/generated';
import { isCanonicalUint64, isRawJson, type RawJson } from '@orbit/spec/codec';
import { OrbitError } from '@orbit/spec/errors';
import { MAX_EVENT_PAYLOAD_BYTES } from '@orbit/spec/protocol';
import type { Hono } from 'hono';
import type { ResultInput, ResultRecord, WriteKey } from '../store/store.ts';
import { eventText } from '../wire/json.ts';
import { writeKeyOfText, writtenResponse } from '../wire/receipts.ts';
import type { AppEnv, RouteContext } from './context.ts';
import { tracedPublish, tracingOn } from '../tracing.ts';
import { contentDigest, withoutMembers } from './digest.ts';
import { idempotencyKey, parseQuery, parseTarget, readJsonBody } from './request.ts';

/** A member that `readJsonBody` kept as exact text (the schema's `x-orbit-raw-json`). */
function raw(value: unknown): RawJson | undefined {
  if (value === undefined) return undefined;
  if (!isRawJson(value)) throw new Error('a raw JSON member was parsed as a value');
  return value;
}

/**
 * The store's input for one schema-valid result to publish, after the rules the schema cannot say
 * (`details` an object, the uint64 range, the payload limit). `at` is the item's JSON pointer in
 * the body (`''` for a single publish, `/items/3` in a batch), for the error message.
 */
export function publishInput(queueId: string, value: PublishResultMembers, at = ''): ResultInput {
  const details = raw(value.details);
  const result = raw(value.result);
  if (details !== undefined && !details.text.trimStart().startsWith('{'))
    throw new OrbitError('INVALID_ARGUMENT', `${at}/details must be an object`);
  if (!isCanonicalUint64(value.task_revision))
    throw new OrbitError('INVALID_ARGUMENT', `${at}/task_revision must be a canonical uint64 decimal string`);
  const payload = Buffer.byteLength(details?.text ?? '') + Buffer.byteLength(result?.text ?? '');
  if (payload > MAX_EVENT_PAYLOAD_BYTES) {
    throw new OrbitError(
      'INVALID_ARGUMENT',
      `${at === '' ? '' : `${at}: `}result and details together are ${payload} bytes; at most ${MAX_EVENT_PAYLOAD_BYTES} fit in one event.deliver frame`,
    );
  }
  const { type, task_id, task_revision, effect_uncertain, current_attempt_id, trace_context } = value;
  return {
    queueId,
    type,
    taskId: task_id,
    taskRevision: task_revision,
    ...(details !== undefined ? { details } : {}),
    ...(result !== undefined ? { result } : {}),
    ...(effect_uncertain !== undefined ? { effectUncertain: effect_uncertain } : {}),
    ...(current_attempt_id !== undefined ? { currentAttemptId: current_attempt_id } : {}),
    ...(trace_context !== undefined ? { traceContext: trace_context } : {}),
  };
}

/**
 * The members of a publish that are not its content (spec/README.md, Idempotency): its trace
 * context, since a retry is a new span, and it must replay rather than conflict (spec/README.md,
 * Trace context). A single publish's body reader leaves them out of its one digest.
 */
export const NOT_CONTENT: readonly string[] = ['trace_context'] satisfies (keyof PublishResultMembers)[];

/** The content identity of one item of a batch publish: the digest a single publish of it has. */
export function publishDigest(value: PublishResultMembers): string {
  return contentDigest(withoutMembers(value, NOT_CONTENT));
}

/**
 * The key of one publish: its first answer is 201 with `{event}`. Single and batch publishes answer
 * the same way under the same scope, so a key replays across the two routes (spec/README.md, Batch
 * publish). A replay renders the answer again from the result (spec/README.md, Idempotency): a
 * change to how an event is written changes the replays of publishes made before it.
 */
export function publishKey(key: string, digest: string): WriteKey<ResultRecord> {
  // `{event: eventJson(event)}` as `eventText` writes it: the stored details and result verbatim.
  return writeKeyOfText(key, digest, 201, (event: ResultRecord) => `{"event":${eventText(event)}}`);
}

export function resultRoutes(app: Hono<AppEnv>, { store, authorize }: RouteContext): void {
  app.post('/v1/queues/:queue/results', async (c) => {
    const who = await authorize(c.req.raw, 'PublishResult');
    parseQuery(c.req.url, []);
    const { id: queueId, action } = parseTarget(c.req.param('queue'), []);
    if (action !== null) throw new OrbitError('NOT_FOUND', 'no such resource');
    const key = idempotencyKey(c.req.header('idempotency-key'));
    const body = await readJsonBody(c.req.raw, validatePublishResultRequest, 'PublishResultRequest', NOT_CONTENT);
    const write = publishKey(key, body.digest);
    const input = publishInput(queueId, body.value);
    const written = tracingOn()
      ? await tracedPublish(
          [input],
          ([traced]) => store.publishResult(who, traced!, write),
          (w) => ('value' in w ? [w.value] : []),
        )
      : await store.publishResult(who, input, write);
    return writtenResponse(c.get('requestId'), written);
  });
}

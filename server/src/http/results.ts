/**
 * @module
 * The result seam over HTTP (spec/README.md, The result log): `POST /v1/queues/{queue_id}/results`
 * appends one result to the log. `result` and `details` are kept as the exact JSON text that was sent.
 */
import { validatePublishResultRequest } from '@orbit/generated';
import { isRawJson, type RawJson } from '@orbit/spec/codec';
import { OrbitError } from '@orbit/spec/errors';
import { MAX_EVENT_PAYLOAD_BYTES } from '@orbit/spec/protocol';
import type { Hono } from 'hono';
import type { ResultRecord } from '../store/store.ts';
import { eventJson } from '../wire/json.ts';
import { writeKey, writtenResponse } from '../wire/receipts.ts';
import type { AppEnv, RouteContext } from './context.ts';
import { idempotencyKey, parseQuery, parseTarget, readJsonBody } from './request.ts';

/** A member that `readJsonBody` kept as exact text (the schema's `x-orbit-raw-json`). */
function raw(value: unknown): RawJson | undefined {
  if (value === undefined) return undefined;
  if (!isRawJson(value)) throw new Error('a raw JSON member was parsed as a value');
  return value;
}

export function resultRoutes(app: Hono<AppEnv>, { store, authorize }: RouteContext): void {
  app.post('/v1/queues/:queue/results', async (c) => {
    const who = await authorize(c.req.raw, 'PublishResult');
    parseQuery(c.req.url, []);
    const { id: queueId, action } = parseTarget(c.req.param('queue'), []);
    if (action !== null) throw new OrbitError('NOT_FOUND', 'no such resource');
    const key = idempotencyKey(c.req.header('idempotency-key'));
    const body = await readJsonBody(c.req.raw, validatePublishResultRequest, 'PublishResultRequest');
    const details = raw(body.value.details);
    const result = raw(body.value.result);
    if (details !== undefined && !details.text.trimStart().startsWith('{'))
      throw new OrbitError('INVALID_ARGUMENT', '/details must be an object');
    const payload = Buffer.byteLength(details?.text ?? '') + Buffer.byteLength(result?.text ?? '');
    if (payload > MAX_EVENT_PAYLOAD_BYTES) {
      throw new OrbitError(
        'INVALID_ARGUMENT',
        `result and details together are ${payload} bytes; at most ${MAX_EVENT_PAYLOAD_BYTES} fit in one event.deliver frame`,
      );
    }
    const { type, task_id, task_revision, effect_uncertain, current_attempt_id } = body.value;
    const input = {
      queueId,
      type,
      taskId: task_id,
      taskRevision: task_revision,
      ...(details !== undefined ? { details } : {}),
      ...(result !== undefined ? { result } : {}),
      ...(effect_uncertain !== undefined ? { effectUncertain: effect_uncertain } : {}),
      ...(current_attempt_id !== undefined ? { currentAttemptId: current_attempt_id } : {}),
    };
    const written = await store.publishResult(
      who,
      input,
      writeKey(key, body.digest, 201, (event: ResultRecord) => ({ event: eventJson(event) })),
    );
    return writtenResponse(c.get('requestId'), written);
  });
}

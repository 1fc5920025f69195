/**
 * @module
 * The result seam over HTTP (brief decision 2): `POST /v1/queues/{queue_id}/results` appends one
 * result to the log. `result` and `details` are kept as the exact JSON text that was sent.
 */
import type { Hono } from 'hono';
import { OrbitError } from '@orbit/spec/errors';
import { MAX_EVENT_PAYLOAD_BYTES } from '@orbit/spec/protocol';
import type { RawJson } from '@orbit/spec/codec';
import { validatePublishResultRequest } from '@orbit/generated';
import type { EventType } from '../domain/subscription.ts';
import type { AppEnv, RouteContext } from './app.ts';
import { dataResponse } from './envelope.ts';
import { idempotencyKey, parseQuery, readJsonBody } from './request.ts';
import { parseTarget } from './subscriptions.ts';

export interface PublishBody {
  readonly type: EventType;
  readonly task_id: string;
  readonly task_revision: string;
  readonly details?: RawJson;
  readonly result?: RawJson;
  readonly effect_uncertain?: boolean;
  readonly current_attempt_id?: string;
}

export function resultRoutes(app: Hono<AppEnv>, { store, principal }: RouteContext): void {
  app.post('/v1/queues/:queue/results', async (c) => {
    const who = await principal(c.req.raw, 'results:publish');
    parseQuery(c.req.url, []);
    const { id: queueId, action } = parseTarget(c.req.param('queue'), []);
    if (action !== null) throw new OrbitError('NOT_FOUND', 'no such resource');
    const key = idempotencyKey(c.req.header('idempotency-key'));
    const body = await readJsonBody<PublishBody>(c.req.raw, validatePublishResultRequest, {
      raw: ['result', 'details'],
      uint64: ['task_revision'],
    });
    const { details, result } = body.value;
    if (details !== undefined && !details.text.trimStart().startsWith('{'))
      throw new OrbitError('INVALID_ARGUMENT', '/details must be an object');
    const payload = Buffer.byteLength(details?.text ?? '') + Buffer.byteLength(result?.text ?? '');
    if (payload > MAX_EVENT_PAYLOAD_BYTES) {
      throw new OrbitError(
        'INVALID_ARGUMENT',
        `result and details together are ${payload} bytes; at most ${MAX_EVENT_PAYLOAD_BYTES} fit in one event.deliver frame`,
      );
    }
    const receipt = await store.publishResult(who, queueId, key, body.digest, {
      queueId,
      type: body.value.type,
      taskId: body.value.task_id,
      taskRevision: body.value.task_revision,
      ...(details !== undefined ? { details } : {}),
      ...(body.value.result !== undefined ? { result: body.value.result } : {}),
      ...(body.value.effect_uncertain !== undefined ? { effectUncertain: body.value.effect_uncertain } : {}),
      ...(body.value.current_attempt_id !== undefined ? { currentAttemptId: body.value.current_attempt_id } : {}),
    });
    return dataResponse(c.get('requestId'), receipt.status, receipt.data);
  });
}

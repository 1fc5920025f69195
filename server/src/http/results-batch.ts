/**
 * @module
 * The batch publish (spec/README.md, Batch publish): `POST /v1/queues/{queue_id}/results:batch`
 * appends up to 100 results in one transaction, each item with its own idempotency key and its own
 * outcome. Every item is read by `publishInput`, the single publish's own reading, and every item is
 * checked before the store is called, so a bad item writes nothing.
 */
import { validatePublishResultsRequest } from '@orbit/generated';
import { OrbitError } from '@orbit/spec/errors';
import type { Hono } from 'hono';
import { dataResponse } from '../wire/envelope.ts';
import { writtenAnswer } from '../wire/receipts.ts';
import type { AppEnv, RouteContext } from './context.ts';
import { tracedPublish, tracingOn } from '../tracing.ts';
import { parseQuery, parseTarget, readJsonBody } from './request.ts';
import { publishDigest, publishInput, publishKey } from './results.ts';

/** The errors that belong to one item; anything else fails the whole request (and retrying it is safe). */
const ITEM_ERRORS: ReadonlySet<string> = new Set(['IDEMPOTENCY_CONFLICT', 'EVENT_HISTORY_EXPIRED']);

export function resultBatchRoutes(app: Hono<AppEnv>, { store, authorize }: RouteContext): void {
  // A pattern, not the literal path: Hono reads ":batch" in "results:batch" as a parameter.
  app.post('/v1/queues/:queue/:action{results:batch}', async (c) => {
    const who = await authorize(c.req.raw, 'PublishResults');
    parseQuery(c.req.url, []);
    const { id: queueId } = parseTarget(c.req.param('queue'), []);
    if (c.req.header('idempotency-key') !== undefined)
      throw new OrbitError(
        'INVALID_ARGUMENT',
        'a batch publish takes its keys per item (/items/N/idempotency_key), not in the Idempotency-Key header',
      );
    const body = await readJsonBody(c.req.raw, validatePublishResultsRequest, 'PublishResultsRequest');
    const seen = new Map<string, number>();
    const items = body.value.items.map(({ idempotency_key: key, ...request }, i) => {
      const first = seen.get(key);
      if (first !== undefined) throw new OrbitError('INVALID_ARGUMENT', `/items/${i}/idempotency_key repeats the key of /items/${first}`);
      seen.set(key, i);
      // The content identity of a single publish of the same request (spec/README.md, Idempotency).
      return { input: publishInput(queueId, request, `/items/${i}`), write: publishKey(key, publishDigest(request)) };
    });
    const outcomes = tracingOn()
      ? await tracedPublish(
          items.map((item) => item.input),
          (inputs) =>
            store.publishResults(
              who,
              queueId,
              inputs.map((input, i) => ({ input, write: items[i]!.write })),
            ),
          (answer) => answer.flatMap((o) => ('written' in o && 'value' in o.written ? [o.written.value] : [])),
        )
      : await store.publishResults(who, queueId, items);
    const results = outcomes.map((outcome) => {
      if ('written' in outcome) return writtenAnswer(outcome.written).data;
      const { error } = outcome;
      if (error instanceof OrbitError && ITEM_ERRORS.has(error.code)) return { error: { code: error.code, message: error.message } };
      throw error;
    });
    return dataResponse(c.get('requestId'), 200, { results });
  });
}

/**
 * @module
 * The batch publish, Orbit's extension of the result seam (spec/README.md, Batch publish):
 * `POST /v1/queues/{queue_id}/results:batch` answers one outcome per item in order; each item is
 * idempotent on its own key, in one namespace with the single publish; a bad item, an empty list
 * or too many items reject the whole batch and write nothing.
 */
import { validatePublishResultResponse, validatePublishResultsResponse } from '@orbit/generated';
import { MAX_BATCH_ITEMS } from '@orbit/spec/protocol';
import { defineCase, type ConformanceCase } from '../case.ts';
import type { CaseContext } from '../context.ts';
import type { HttpResponse } from '../http.ts';
import { randomId } from '../ids.ts';

type Item = Record<string, unknown> & { idempotency_key: string };
type Outcome = { event?: { id: string; sequence: string; aggregate_id: string }; deduplicated?: boolean; error?: { code: string } };

const FEATURES = ['results-http', 'batch-publish'] as const;
const CHOICE = { anchor: 'batch-publish' } as const;

function item(ctx: CaseContext, fields: Record<string, unknown> = {}): Item {
  return { idempotency_key: ctx.key(), type: 'task.succeeded', task_id: randomId(), task_revision: '1', ...fields };
}

/** The batch as the publisher; a batch carries its keys per item, so no Idempotency-Key header. */
function sendBatch(ctx: CaseContext, body: unknown): Promise<HttpResponse> {
  return ctx.request('publisher', 'POST', `/v1/queues/${ctx.queue}/results:batch`, { body });
}

async function published(ctx: CaseContext, items: readonly Item[], what: string): Promise<Outcome[]> {
  const data = ctx.expectData(await sendBatch(ctx, { items }), 200, what, validatePublishResultsResponse);
  ctx.equal(data.results.length, items.length, `${what}: the number of results`);
  return data.results as Outcome[];
}

export const publishBatchCases: ConformanceCase[] = [
  defineCase({
    id: 'idempotency.batch-publish-in-order',
    area: 'idempotency',
    level: 'MUST',
    title: 'MUST answer a batch publish with 200 and one new event per item, in request order, on ascending sequences',
    orbit: { ...CHOICE, text: 'a batch answers 200 with {event, deduplicated} per item in request order' },
    features: FEATURES,
    async run(ctx: CaseContext) {
      const items = [item(ctx), item(ctx, { type: 'task.failed', task_revision: '2' }), item(ctx, { details: { n: 1 } })];
      const results = await published(ctx, items, 'batch publish');
      results.forEach((r, i) => {
        ctx.check(r.event !== undefined && r.deduplicated === false, `item ${i}: expected a new event, got ${JSON.stringify(r)}`);
        ctx.equal(r.event.aggregate_id, items[i]!.task_id, `item ${i}: the event's aggregate_id`);
      });
      const sequences = results.map((r) => BigInt(r.event!.sequence));
      ctx.check(
        sequences.every((s, i) => i === 0 || s > sequences[i - 1]!),
        `sequences are not ascending in item order: ${sequences.join(', ')}`,
      );
    },
  }),
  defineCase({
    id: 'idempotency.batch-publish-replay',
    area: 'idempotency',
    level: 'MUST',
    title: 'MUST answer a repeated batch with the original events and deduplicated=true for every item',
    orbit: { ...CHOICE, text: 'each item of a batch is idempotent on its own key' },
    features: FEATURES,
    async run(ctx: CaseContext) {
      const items = [item(ctx), item(ctx)];
      const first = await published(ctx, items, 'batch publish');
      const again = await published(ctx, items, 'repeated batch');
      again.forEach((r, i) => {
        ctx.equal(r.deduplicated, true, `item ${i}: deduplicated of the repeat`);
        ctx.equal(r.event, first[i]!.event, `item ${i}: the replayed event`);
      });
    },
  }),
  defineCase({
    id: 'idempotency.batch-publish-item-conflict',
    area: 'idempotency',
    level: 'MUST',
    title: 'MUST answer an item whose key was used with other content with its own IDEMPOTENCY_CONFLICT, the others appended',
    orbit: { ...CHOICE, text: 'an item that reuses a key with other content gets {error} alone' },
    features: FEATURES,
    async run(ctx: CaseContext) {
      const used = item(ctx);
      await published(ctx, [used], 'first batch');
      const [a, conflict, b] = await published(ctx, [item(ctx), { ...used, task_revision: '2' }, item(ctx)], 'batch with a reused key');
      ctx.equal(conflict!.error?.code, 'IDEMPOTENCY_CONFLICT', 'the reused key');
      ctx.check(a!.deduplicated === false && b!.deduplicated === false, `the other items were not appended: ${JSON.stringify([a, b])}`);
    },
  }),
  defineCase({
    id: 'idempotency.batch-publish-atomic-validation',
    area: 'idempotency',
    level: 'MUST',
    title: 'MUST reject a batch with one invalid item, an empty list or too many items with 400 INVALID_ARGUMENT, writing nothing',
    orbit: { ...CHOICE, text: 'every item is checked before anything is written; 1 to 100 items' },
    features: FEATURES,
    async run(ctx: CaseContext) {
      const good = [item(ctx), item(ctx)];
      ctx.expectError(
        await sendBatch(ctx, { items: [...good, item(ctx, { task_revision: '01' })] }),
        'INVALID_ARGUMENT',
        'a batch with a bad item',
      );
      ctx.expectError(await sendBatch(ctx, { items: [] }), 'INVALID_ARGUMENT', 'an empty batch');
      const many = Array.from({ length: MAX_BATCH_ITEMS + 1 }, () => item(ctx));
      ctx.expectError(await sendBatch(ctx, { items: many }), 'INVALID_ARGUMENT', `a batch of ${many.length} items`);
      const repeated = item(ctx);
      ctx.expectError(await sendBatch(ctx, { items: [repeated, { ...repeated }] }), 'INVALID_ARGUMENT', 'a batch with one key twice');
      // Nothing was stored: the good items' keys, and the repeated key, are still new.
      const results = await published(ctx, [...good, repeated, many[0]!], 'the good items alone');
      for (const [i, r] of results.entries()) ctx.equal(r.deduplicated, false, `item ${i}: deduplicated (a rejected batch stored it)`);
    },
  }),
  defineCase({
    id: 'idempotency.batch-publish-shares-keys',
    area: 'idempotency',
    level: 'MUST',
    title: 'MUST treat a batch item and a single publish with the same key and content as one publish, in both directions',
    orbit: { ...CHOICE, text: 'batch items and single publishes share one idempotency namespace' },
    features: FEATURES,
    async run(ctx: CaseContext) {
      const { idempotency_key: soloKey, ...solo } = item(ctx);
      const alone = ctx.expectData(
        await ctx.post('publisher', `/v1/queues/${ctx.queue}/results`, solo, { key: soloKey }),
        201,
        'single publish',
        validatePublishResultResponse,
      );
      const later = item(ctx);
      const [replayed, fresh] = await published(ctx, [{ idempotency_key: soloKey, ...solo }, later], 'batch');
      ctx.equal(replayed, { event: alone.event, deduplicated: true }, 'the batch item with the single publish key');
      const { idempotency_key: laterKey, ...laterBody } = later;
      const single = ctx.expectData(
        await ctx.post('publisher', `/v1/queues/${ctx.queue}/results`, laterBody, { key: laterKey }),
        200,
        'single publish with a batch key',
        validatePublishResultResponse,
      );
      ctx.equal(single, { event: fresh!.event, deduplicated: true }, 'the single publish with the batch item key');
    },
  }),
];

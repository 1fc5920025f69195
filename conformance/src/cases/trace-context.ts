/**
 * @module
 * The trace context, Orbit's optional extension (spec/README.md, Trace context): the W3C context a
 * publish carries is stored with the event and delivered unchanged in `event.deliver` and the
 * delivery detail; a malformed one is INVALID_ARGUMENT; a retry with another context replays.
 */
import { validatePublishResultResponse } from '@orbit/generated';
import { defineCase, type ConformanceCase } from '../case.ts';
import type { CaseContext } from '../context.ts';
import { randomId } from '../ids.ts';

const CHOICE = { anchor: 'trace-context' } as const;

/** A version-00 traceparent with fresh ids (randomId is 32 hex digits). */
const traceparent = (): string => `00-${randomId()}-${randomId().slice(0, 16)}-01`;

export const traceContextCases: ConformanceCase[] = [
  defineCase({
    id: 'deliveries.trace-context-delivered',
    area: 'deliveries',
    level: 'MUST',
    title: 'MUST deliver the trace_context a publish carried, unchanged, in event.deliver and the delivery detail',
    orbit: { ...CHOICE, text: 'a publish’s trace_context is stored with the event and delivered unchanged' },
    features: ['results-http'],
    async run(ctx: CaseContext) {
      const sub = await ctx.createSubscription();
      const { conn } = await ctx.bind(sub.id, 1);
      const context = { traceparent: traceparent(), tracestate: 'orbit=conformance,other=1' };
      const key = ctx.key();
      const body = { type: 'task.succeeded', task_id: randomId(), task_revision: '1', trace_context: context };
      const published = ctx.expectData(
        await ctx.post('publisher', `/v1/queues/${ctx.queue}/results`, body, { key }),
        201,
        'publish with a trace_context',
        validatePublishResultResponse,
      );
      ctx.equal(published.event.trace_context, context, 'the published event’s trace_context');
      const deliver = await ctx.deliver(conn, ctx.deliverMs, `the event.deliver of event ${published.event.id}`);
      ctx.equal(deliver.body.event.id, published.event.id, 'the delivered event');
      ctx.equal(deliver.body.event.trace_context, context, 'the delivered trace_context');
      const detail = await ctx.deliveryDetail(sub.id, deliver.body.delivery.id);
      ctx.equal(detail.event.trace_context, context, 'the trace_context of the delivery detail');
      // A retry is a new span: the context is not part of the content identity, so it replays.
      const retry = ctx.expectData(
        await ctx.post('publisher', `/v1/queues/${ctx.queue}/results`, { ...body, trace_context: { traceparent: traceparent() } }, { key }),
        200,
        'a retry with another trace_context',
        validatePublishResultResponse,
      );
      ctx.equal(retry.deduplicated, true, 'deduplicated of the retry');
      ctx.equal(retry.event, published.event, 'the replayed event, with the first trace_context');
    },
  }),
  defineCase({
    id: 'deliveries.trace-context-malformed',
    area: 'deliveries',
    level: 'MUST',
    title: 'MUST refuse a malformed trace_context (version, all-zero ids, empty tracestate, unknown member) with INVALID_ARGUMENT',
    orbit: { ...CHOICE, text: 'trace_context is W3C version 00 with ids not all zero; tracestate 1-512 printable characters' },
    features: ['results-http'],
    async run(ctx: CaseContext) {
      for (const bad of [
        { traceparent: `00-${'0'.repeat(32)}-${randomId().slice(0, 16)}-01` },
        { traceparent: `00-${randomId()}-${'0'.repeat(16)}-01` },
        { traceparent: `ff-${randomId()}-${randomId().slice(0, 16)}-01` },
        { traceparent: traceparent().toUpperCase() },
        { traceparent: traceparent(), tracestate: '' },
        { traceparent: traceparent(), baggage: 'k=v' },
      ]) {
        const body = { type: 'task.succeeded', task_id: randomId(), task_revision: '1', trace_context: bad };
        ctx.expectError(
          await ctx.post('publisher', `/v1/queues/${ctx.queue}/results`, body, { key: ctx.key() }),
          'INVALID_ARGUMENT',
          `publish with trace_context ${JSON.stringify(bad)}`,
        );
      }
    },
  }),
];

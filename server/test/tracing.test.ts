/**
 * OpenTelemetry on both stores (docs/operations.md, Tracing; spec/README.md, Trace context), with
 * an in-memory exporter and real sockets: the trace context a publish carries is the one
 * delivered; the server's request, publish, commit and turn spans carry the ids and link the
 * publish to its deliveries; and with no tracer provider registered nothing is recorded or added.
 */
import { randomBytes } from 'node:crypto';
import { SpanKind, trace } from '@opentelemetry/api';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  api,
  parentSpanId,
  recordSpans,
  type SpanRecorder,
  startTestServer,
  STORES,
  subscribe,
  TASK,
  type TestServer,
  TestSocket,
  traceparentOf,
} from '@orbit/testing';
import { tracingOn } from '../src/tracing.ts';

const hex = (bytes: number): string => randomBytes(bytes).toString('hex');
const traceparent = (): string => `00-${hex(16)}-${hex(8)}-01`;

describe.each(STORES)('tracing on %s', (kind) => {
  let server: TestServer;
  let token: string;
  let queueId: string;
  let recorder: SpanRecorder | undefined;
  const sockets: TestSocket[] = [];

  beforeAll(async () => {
    server = await startTestServer(kind, { ORBIT_POLL_INTERVAL_MS: '50' });
    const boot = await server.bootstrap();
    token = boot.token;
    queueId = boot.queue_ids.q!;
  });
  afterEach(async () => {
    for (const s of sockets.splice(0)) {
      expect(s.invalid).toEqual([]);
      s.close();
    }
    await recorder?.stop();
    recorder = undefined;
  });
  afterAll(async () => server.stop());

  const publish = (body: Record<string, unknown>, headers: Record<string, string> = {}, key = `t-${hex(8)}`) =>
    api(server.url, 'POST', `/v1/queues/${queueId}/results`, {
      token,
      key,
      headers,
      body: { type: 'task.succeeded', task_id: TASK, task_revision: '1', ...body },
      expect: 'validatePublishResultResponse',
    });

  async function consumeOne(subscriptionId: string): Promise<{ socket: TestSocket; deliver: Awaited<ReturnType<TestSocket['deliver']>> }> {
    const socket = await TestSocket.open(server.url, token);
    sockets.push(socket);
    await socket.hello(subscriptionId, 1);
    return { socket, deliver: await socket.deliver() };
  }

  it('MUST deliver the trace context a publish carried, unchanged, and replay a retry with another context', async () => {
    const sub = await subscribe(server.url, token, queueId);
    const context = { traceparent: traceparent(), tracestate: 'vendor=a1,other=b2' };
    const key = `t-${hex(8)}`;
    const first = await publish({ trace_context: context }, {}, key);
    expect(first.status).toBe(201);
    expect(first.json.data.event.trace_context).toEqual(context);
    // A retry is a new span: the content identity leaves the context out, so it replays (spec/README.md, Trace context).
    const retry = await publish({ trace_context: { traceparent: traceparent() } }, {}, key);
    expect(retry.status).toBe(200);
    expect(retry.json.data).toMatchObject({ deduplicated: true, event: { id: first.json.data.event.id, trace_context: context } });
    const { deliver } = await consumeOne(sub.id);
    expect(deliver.body.event.id).toBe(first.json.data.event.id);
    expect(deliver.body.event.trace_context).toEqual(context);
    const detail = await api(server.url, 'GET', `/v1/subscriptions/${sub.id}/deliveries/${deliver.body.delivery.id}`, { token });
    expect(detail.json.data.event.trace_context).toEqual(context);
  });

  it('MUST refuse a malformed trace context with INVALID_ARGUMENT', async () => {
    for (const bad of [
      { traceparent: `00-${'0'.repeat(32)}-${hex(8)}-01` },
      { traceparent: `01-${hex(16)}-${hex(8)}-01` },
      { traceparent: traceparent(), tracestate: '' },
      { tracestate: 'a=b' },
      { traceparent: traceparent(), baggage: 'x' },
    ]) {
      const r = await publish({ trace_context: bad });
      expect(r.status, JSON.stringify(bad)).toBe(400);
      expect(r.json.error.code).toBe('INVALID_ARGUMENT');
    }
  });

  it('MUST add nothing and start no span with no tracer provider registered', async () => {
    expect(tracingOn()).toBe(false);
    // Every span of the server starts from trace.getTracer: with tracing off, not one call.
    const getTracer = vi.spyOn(trace, 'getTracer');
    try {
      const sub = await subscribe(server.url, token, queueId);
      const r = await publish({});
      expect(r.status).toBe(201);
      expect(r.json.data.event).not.toHaveProperty('trace_context');
      const { socket, deliver } = await consumeOne(sub.id);
      expect(deliver.body.event).not.toHaveProperty('trace_context');
      expect((await socket.ack(deliver)).body).toMatchObject({ delivery_id: deliver.body.delivery.id, deduplicated: false });
      expect(getTracer).not.toHaveBeenCalled();
    } finally {
      getTracer.mockRestore();
    }
    recorder = recordSpans();
    expect(tracingOn()).toBe(true);
  });

  it('MUST trace publish → commit → claim → ACK with the ids, joined to the caller by the traceparent header', async () => {
    recorder = recordSpans();
    const sub = await subscribe(server.url, token, queueId);
    const caller = { traceId: hex(16), spanId: hex(8), traceFlags: 1 };
    const published = await publish({}, { traceparent: traceparentOf(caller) });
    const event = published.json.data.event;

    // The request span is the header's child; the publish span is the request's child and is the stored context.
    const [request] = recorder
      .spans()
      .filter((s) => s.name === 'POST /v1/queues/:queue/results' && s.spanContext().traceId === caller.traceId);
    expect(request?.kind).toBe(SpanKind.SERVER);
    expect(parentSpanId(request!)).toBe(caller.spanId);
    expect(request!.attributes['http.response.status_code']).toBe(201);
    const [publishSpan] = recorder.named('orbit.publish').filter((s) => s.spanContext().traceId === caller.traceId);
    expect(parentSpanId(publishSpan!)).toBe(request!.spanContext().spanId);
    expect(publishSpan!.attributes['orbit.event.id']).toEqual([event.id]);
    expect(publishSpan!.attributes['orbit.queue.id']).toEqual([queueId]);
    expect(event.trace_context).toEqual({ traceparent: traceparentOf(publishSpan!.spanContext()) });
    const commit = recorder
      .named('orbit.publish.commit')
      .find((s) => s.links.some((l) => l.context.spanId === publishSpan!.spanContext().spanId));
    expect(commit?.links.every((l) => l.context.traceId !== '')).toBe(true);

    const { socket, deliver } = await consumeOne(sub.id);
    expect(deliver.body.event.trace_context).toEqual(event.trace_context);
    await socket.ack(deliver);
    const deliveryId = deliver.body.delivery.id;
    const claim = recorder
      .spans()
      .find((s) => s.name.endsWith('claim') && (s.attributes['orbit.delivery.id'] as string[]).includes(deliveryId));
    expect(claim?.attributes['orbit.subscription.id']).toBe(sub.id);
    expect(claim?.attributes['orbit.event.id']).toContain(event.id);
    // The claim links the publish span, so the trace runs from publish to delivery.
    expect(claim?.links.map((l) => l.context.spanId)).toContain(publishSpan!.spanContext().spanId);
    const ack = recorder
      .spans()
      .find((s) => s.name.startsWith('orbit.ack') && (s.attributes['orbit.ack.delivery_ids'] as string[]).includes(deliveryId));
    expect(ack?.attributes['orbit.subscription.id']).toBe(sub.id);
    expect(ack?.attributes['orbit.ack.event_ids']).toEqual([event.id]);
    expect(ack?.attributes['orbit.ack.outcomes']).toEqual(['acknowledged']);
  });

  it('MUST keep each batch item its own context, and give the others the batch publish span', async () => {
    recorder = recordSpans();
    const own = { traceparent: traceparent() };
    const item = (trace?: object) => ({
      idempotency_key: `b-${hex(8)}`,
      type: 'task.failed',
      task_id: TASK,
      task_revision: '2',
      ...(trace ? { trace_context: trace } : {}),
    });
    const r = await api(server.url, 'POST', `/v1/queues/${queueId}/results:batch`, {
      token,
      body: { items: [item(own), item()] },
      expect: 'validatePublishResultsResponse',
    });
    expect(r.status).toBe(200);
    const [first, second] = r.json.data.results;
    expect(first.event.trace_context).toEqual(own);
    const [span] = recorder.named('orbit.publish').filter((s) => (s.attributes['orbit.event.id'] as string[]).includes(second.event.id));
    expect(span?.attributes['orbit.batch.size']).toBe(2);
    expect(second.event.trace_context).toEqual({ traceparent: traceparentOf(span!.spanContext()) });
  });
});

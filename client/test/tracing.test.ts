/**
 * The SDK's spans with an in-memory exporter, against a real server (docs/sdk.md, Tracing): a
 * result published by the client inside the application's span is handled in a consumer span that
 * is a child of the publish span, the handler's own spans nest in it and the ACK is its child, so
 * one trace runs publish → deliver → ACK; the context crosses only the wire and the database. A
 * result published without tracing carries no context and its handler span starts a trace of its own.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SpanKind, trace } from '@opentelemetry/api';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { eventually, parentSpanId, recordSpans, type SpanRecorder, STORES } from '@orbit/testing';
import { createEventConsumer, type EventConsumer } from '../src/index.ts';
import { SqliteInbox } from '../src/inbox/sqlite.ts';
import { id, key, name, setup, type Setup } from './support.ts';

describe.each(STORES)('SDK tracing on %s', (kind) => {
  let env: Setup;
  let dir: string;
  let recorder: SpanRecorder | undefined;
  let consumer: EventConsumer<unknown> | undefined;
  let inbox: SqliteInbox | undefined;

  beforeAll(async () => {
    env = await setup(kind);
    dir = mkdtempSync(join(tmpdir(), 'orbit-tracing-'));
  });
  afterEach(async () => {
    await consumer?.stop({ timeoutMs: 1000 });
    await inbox?.close();
    await recorder?.stop();
    consumer = undefined;
    inbox = undefined;
    recorder = undefined;
  });
  afterAll(async () => {
    await env.server.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const subscribe = async (): Promise<string> =>
    (await env.client.createSubscription(key(), { name: name(), queue_id: env.queueId })).subscription.id;

  /** Consumes the subscription; the handler records each event it sees and opens a span of its own. */
  function consume(subscriptionId: string): Map<string, string | undefined> {
    const handled = new Map<string, string | undefined>();
    inbox = new SqliteInbox({ path: join(dir, `${id()}.db`) });
    consumer = createEventConsumer({
      baseUrl: env.server.url,
      token: env.token,
      subscriptionId,
      inbox,
      capacity: 4,
      handler: ({ event }) => {
        trace.getTracer('app').startActiveSpan('app.handle', (span) => {
          handled.set(event.id, event.trace_context?.traceparent);
          span.end();
        });
      },
    }) as EventConsumer<unknown>;
    return handled;
  }

  it('MUST link publish → process → ACK in one trace, with the handler inside the process span', async () => {
    recorder = recordSpans();
    const handled = consume(await subscribe());
    const app = trace.getTracer('app');
    const published = await app.startActiveSpan('app.request', async (span) => {
      try {
        return await env.client.publishResult(env.queueId, key('p'), { type: 'task.succeeded', task_id: id(), task_revision: '1' });
      } finally {
        span.end();
      }
    });
    const eventId = published.event.id;
    await eventually(() => recorder!.named('orbit.ack').some((s) => s.attributes['orbit.event.id'] === eventId), 10_000, 'the ACK span');

    const [request] = recorder.named('app.request');
    const publish = recorder
      .named('orbit.publish')
      .find((s) => s.kind === SpanKind.PRODUCER && s.instrumentationScope.name === '@orbit/client');
    expect(parentSpanId(publish!)).toBe(request!.spanContext().spanId);
    const traceId = request!.spanContext().traceId;
    // The event carries the client's publish span, stored by the server and delivered unchanged.
    expect(published.event.trace_context?.traceparent).toBe(`00-${traceId}-${publish!.spanContext().spanId}-01`);
    expect(handled.get(eventId)).toBe(published.event.trace_context?.traceparent);

    const process = recorder.named('orbit.process').find((s) => s.attributes['orbit.event.id'] === eventId)!;
    expect(process.kind).toBe(SpanKind.CONSUMER);
    expect(process.spanContext().traceId).toBe(traceId);
    expect(parentSpanId(process)).toBe(publish!.spanContext().spanId);
    expect(process.attributes['orbit.delivery.id']).toMatch(/^[0-9a-f]{32}$/);
    const handler = recorder.named('app.handle').find((s) => s.spanContext().traceId === traceId)!;
    expect(parentSpanId(handler)).toBe(process.spanContext().spanId);
    const ack = recorder.named('orbit.ack').find((s) => s.attributes['orbit.event.id'] === eventId)!;
    expect(ack.kind).toBe(SpanKind.CLIENT);
    expect(parentSpanId(ack)).toBe(process.spanContext().spanId);
    expect(ack.attributes['orbit.delivery.id']).toBe(process.attributes['orbit.delivery.id']);
    // The server's claim of that delivery links the same publish span.
    const claim = recorder.spans().find((s) => s.name.endsWith('claim') && (s.attributes['orbit.event.id'] as string[]).includes(eventId));
    expect(claim?.links.map((l) => l.context.spanId)).toContain(publish!.spanContext().spanId);
  });

  it('MUST start a trace of its own for an event published with no context', async () => {
    // Published with tracing off: no span, no context; consumed with tracing on.
    const subscriptionId = await subscribe();
    const plain = await env.client.publishResult(env.queueId, key('p'), { type: 'task.failed', task_id: id(), task_revision: '1' });
    expect(plain.event).not.toHaveProperty('trace_context');
    recorder = recordSpans();
    const handled = consume(subscriptionId);
    await eventually(() => handled.has(plain.event.id), 10_000, 'the handler');
    await eventually(
      () => recorder!.named('orbit.ack').some((s) => s.attributes['orbit.event.id'] === plain.event.id),
      10_000,
      'the ACK span',
    );
    const process = recorder.named('orbit.process').find((s) => s.attributes['orbit.event.id'] === plain.event.id)!;
    expect(parentSpanId(process)).toBeUndefined();
  });
});

/**
 * The content identity of a publish (spec/README.md, Idempotency) is computed once per result,
 * on both stores: the body reader leaves the members that are not content (`trace_context`,
 * spec/README.md, Trace context) out of the one digest it computes, instead of a whole-body digest
 * that the publish route then throws away for a second one without them. A spy wraps the real
 * digest function, so every answer is the server's own; the replay and conflict cases show the
 * one digest is still the content identity.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { api, startTestServer, STORES, TASK, type TestServer } from '@orbit/testing';
import * as digest from '../src/http/digest.ts';

vi.mock('../src/http/digest.ts', async (importOriginal) => {
  const real = await importOriginal<typeof digest>();
  return { ...real, contentDigest: vi.fn(real.contentDigest) };
});

const hex = (bytes: number): string => randomBytes(bytes).toString('hex');
const traceparent = (): string => `00-${hex(16)}-${hex(8)}-01`;
const contentDigest = vi.mocked(digest.contentDigest);

describe.each(STORES)('the digest of a publish on %s', (kind) => {
  let server: TestServer;
  let token: string;
  let queueId: string;

  beforeAll(async () => {
    server = await startTestServer(kind);
    const boot = await server.bootstrap();
    token = boot.token;
    queueId = boot.queue_ids.q!;
  });
  afterAll(async () => server.stop());
  // A block, not an arrow's value: a function that beforeEach returns is run as its cleanup.
  beforeEach(() => {
    contentDigest.mockClear();
  });

  const publish = (body: Record<string, unknown>, key: string) =>
    api(server.url, 'POST', `/v1/queues/${queueId}/results`, {
      token,
      key,
      body: { type: 'task.succeeded', task_id: TASK, task_revision: '1', ...body },
    });

  it('digests a publish with a trace_context once, without the context', async () => {
    const r = await publish({ trace_context: { traceparent: traceparent() }, result: { n: 1 } }, `d-${hex(8)}`);
    expect(r.status).toBe(201);
    expect(contentDigest).toHaveBeenCalledTimes(1);
    expect(contentDigest.mock.calls[0]![0]).not.toHaveProperty('trace_context');
  });

  it('digests a publish without a trace_context once', async () => {
    const r = await publish({ result: { n: 2 } }, `d-${hex(8)}`);
    expect(r.status).toBe(201);
    expect(contentDigest).toHaveBeenCalledTimes(1);
  });

  it('replays a retry with another trace_context, and refuses other content under the key', async () => {
    const key = `d-${hex(8)}`;
    const first = await publish({ trace_context: { traceparent: traceparent() }, result: { n: 3 } }, key);
    expect(first.status).toBe(201);
    const retry = await publish({ trace_context: { traceparent: traceparent(), tracestate: 'a=1' }, result: { n: 3 } }, key);
    expect(retry.status).toBe(200);
    expect(retry.json.data).toMatchObject({ deduplicated: true, event: { id: first.json.data.event.id } });
    const other = await publish({ trace_context: { traceparent: traceparent() }, result: { n: 4 } }, key);
    expect(other.status).toBe(409);
    expect(other.json.error.code).toBe('IDEMPOTENCY_CONFLICT');
    expect(contentDigest).toHaveBeenCalledTimes(3);
  });

  it('digests each item of a batch once, and not the batch body', async () => {
    const item = (n: number, trace: boolean) => ({
      idempotency_key: `b-${hex(8)}`,
      type: 'task.succeeded',
      task_id: TASK,
      task_revision: '1',
      result: { n },
      ...(trace ? { trace_context: { traceparent: traceparent() } } : {}),
    });
    const r = await api(server.url, 'POST', `/v1/queues/${queueId}/results:batch`, {
      token,
      body: { items: [item(5, true), item(6, false), item(7, true)] },
    });
    expect(r.status).toBe(200);
    expect(contentDigest).toHaveBeenCalledTimes(3);
    for (const [value] of contentDigest.mock.calls) {
      expect(value).not.toHaveProperty('trace_context');
      expect(value).not.toHaveProperty('items');
    }
  });
});

/**
 * The management client against a scripted `fetch` (no sockets): request shape, strict parsing
 * and validation of answers, error mapping, and the retry rules (same key, same bytes, bounded,
 * Retry-After honoured, only transport failures retried).
 */
import { describe, expect, it } from 'vitest';
import { OrbitError } from '@orbit/spec/errors';
import { createClient, newIdempotencyKey, type ClientOptions } from './client.ts';
import { OrbitTransportError } from './errors.ts';
import { id } from '../test/fakes.ts';

const REQUEST_ID = 'a'.repeat(32);
const SUB_ID = 'b'.repeat(32);
const QUEUE = 'c'.repeat(32);

function subscription(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: SUB_ID,
    queue_id: QUEUE,
    credential_id: 'd'.repeat(32),
    name: 'object-results',
    revision: '1',
    enabled: true,
    types: ['task.cancelled', 'task.failed', 'task.needs_review', 'task.succeeded'],
    cursor_sequence: '12',
    pending_count: 0,
    max_pending: 100,
    max_attempts: 20,
    created_at: '2026-09-17T10:00:00Z',
    updated_at: '2026-09-17T10:00:00Z',
    ...overrides,
  };
}

interface Sent {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: string | undefined;
}

type Script = (sent: Sent, attempt: number) => Response | Promise<Response>;

function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(typeof body === 'string' ? body : JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json', 'x-request-id': REQUEST_ID, 'cache-control': 'no-store', ...headers },
  });
}

function scripted(script: Script, options: Partial<ClientOptions> = {}) {
  const sent: Sent[] = [];
  const fetch = (async (input: string | URL | Request, init?: RequestInit) => {
    const headers = Object.fromEntries(new Headers(init?.headers).entries());
    const entry = { url: String(input), method: init?.method ?? 'GET', headers, body: init?.body as string | undefined };
    sent.push(entry);
    if (init?.signal?.aborted) throw init.signal.reason;
    return script(entry, sent.length);
  }) as typeof globalThis.fetch;
  const client = createClient({
    baseUrl: 'http://orbit.test/base/',
    token: 'tok',
    fetch,
    retry: { initialDelayMs: 1, maxDelayMs: 5, random: () => 0 },
    ...options,
  });
  return { client, sent };
}

describe('management client', () => {
  it('MUST send the bearer token, the caller’s Idempotency-Key and a JSON body, and return the validated data', async () => {
    const { client, sent } = scripted(() =>
      json(201, { request_id: REQUEST_ID, data: { subscription: subscription(), deduplicated: false } }),
    );
    const result = await client.createSubscription('key-1', { name: 'object-results', queue_id: QUEUE, max_pending: 100 });
    expect(result).toEqual({ subscription: subscription(), deduplicated: false });
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({
      url: 'http://orbit.test/base/v1/subscriptions',
      method: 'POST',
      body: JSON.stringify({ name: 'object-results', queue_id: QUEUE, max_pending: 100 }),
    });
    expect(sent[0]!.headers).toMatchObject({ authorization: 'Bearer tok', 'idempotency-key': 'key-1', 'content-type': 'application/json' });
  });

  it('MUST build each route and query exactly (only the list operations take query parameters)', async () => {
    const delivery = {
      id: id(),
      subscription_id: SUB_ID,
      event_id: id(),
      sequence: '13',
      revision: '3',
      state: 'EXPIRED',
      created_at: '2026-09-17T10:00:00Z',
      available_at: '2026-09-17T10:00:00Z',
      lease_epoch: '2',
      attempts: 2,
      attempt_budget: 2,
    };
    const answers: Record<string, unknown> = {
      'GET /base/v1/subscriptions': { items: [subscription()] },
      [`GET /base/v1/subscriptions/${SUB_ID}`]: subscription(),
      [`POST /base/v1/subscriptions/${SUB_ID}:configure`]: {
        subscription: subscription({ revision: '2', enabled: false }),
        deduplicated: false,
      },
      [`POST /base/v1/subscriptions/${SUB_ID}:retire`]: {
        subscription: subscription({ revision: '3', retired_at: '2026-09-17T10:00:00Z', retired_sequence: '12' }),
        deduplicated: false,
      },
      [`GET /base/v1/subscriptions/${SUB_ID}/deliveries`]: { items: [delivery] },
      [`GET /base/v1/subscriptions/${SUB_ID}/history`]: {
        items: [{ id: REQUEST_ID, action: 'pause', reason: 'maintenance', revision: '2', created_at: '2026-09-17T10:00:00Z' }],
      },
      [`POST /base/v1/subscriptions/${SUB_ID}/deliveries/${delivery.id}:retry`]: {
        delivery: { ...delivery, state: 'PENDING', attempt_budget: 4 },
        deduplicated: false,
      },
    };
    const { client, sent } = scripted((s) => {
      const url = new URL(s.url);
      const data = answers[`${s.method} ${url.pathname}`];
      return data
        ? json(200, { request_id: REQUEST_ID, data })
        : json(404, { request_id: REQUEST_ID, error: { code: 'NOT_FOUND', message: 'no' } });
    });
    await client.listSubscriptions({ queueId: QUEUE, limit: 5, cursor: 'abc/+=' });
    await client.getSubscription(SUB_ID);
    await client.configureSubscription(SUB_ID, 'k2', { expected_revision: '1', enabled: false, reason: 'maintenance' });
    await client.retireSubscription(SUB_ID, 'k3', { expected_revision: '2', reason: 'done' });
    await client.listEventDeliveries(SUB_ID, { state: 'EXPIRED', limit: 10 });
    await client.listEventDeliveries(SUB_ID);
    await client.listSubscriptionHistory(SUB_ID, { limit: 3, cursor: 'c' });
    await client.retryEventDelivery(SUB_ID, delivery.id, 'k4', { expected_revision: '3', reason: 'fixed', additional_attempts: 2 });
    expect(sent.map((s) => `${s.method} ${s.url.replace('http://orbit.test', '')}`)).toEqual([
      `GET /base/v1/subscriptions?queue_id=${QUEUE}&limit=5&cursor=abc%2F%2B%3D`,
      `GET /base/v1/subscriptions/${SUB_ID}`,
      `POST /base/v1/subscriptions/${SUB_ID}:configure`,
      `POST /base/v1/subscriptions/${SUB_ID}:retire`,
      `GET /base/v1/subscriptions/${SUB_ID}/deliveries?limit=10&state=EXPIRED`,
      `GET /base/v1/subscriptions/${SUB_ID}/deliveries`,
      `GET /base/v1/subscriptions/${SUB_ID}/history?limit=3&cursor=c`,
      `POST /base/v1/subscriptions/${SUB_ID}/deliveries/${delivery.id}:retry`,
    ]);
    expect(sent.filter((s) => s.method === 'GET').every((s) => s.headers['idempotency-key'] === undefined && s.body === undefined)).toBe(
      true,
    );
  });

  it('MUST iterate every page by next_cursor', async () => {
    const pages: Record<string, unknown> = {
      '': { items: [subscription({ id: '1'.repeat(32) }), subscription({ id: '2'.repeat(32) })], next_cursor: 'p2' },
      p2: { items: [subscription({ id: '3'.repeat(32) })], next_cursor: 'p3' },
      p3: { items: [] },
    };
    const { client } = scripted((s) => json(200, { request_id: REQUEST_ID, data: pages[new URL(s.url).searchParams.get('cursor') ?? ''] }));
    const ids: string[] = [];
    for await (const sub of client.iterateSubscriptions({ queueId: QUEUE, limit: 2 })) ids.push(sub.id);
    expect(ids).toEqual(['1'.repeat(32), '2'.repeat(32), '3'.repeat(32)]);
  });

  it('MUST map an error envelope to OrbitError with code, HTTP status and request_id, without retrying', async () => {
    for (const [status, code] of [
      [400, 'INVALID_ARGUMENT'],
      [401, 'UNAUTHENTICATED'],
      [403, 'PERMISSION_DENIED'],
      [404, 'NOT_FOUND'],
      [409, 'STATE_CONFLICT'],
      [409, 'IDEMPOTENCY_CONFLICT'],
      [409, 'SUBSCRIPTION_LIMIT'],
      [410, 'EVENT_HISTORY_EXPIRED'],
    ] as const) {
      const { client, sent } = scripted(() => json(status, { request_id: REQUEST_ID, error: { code, message: `said ${code}` } }));
      const error = (await client.getSubscription(SUB_ID).catch((e: unknown) => e)) as OrbitError;
      expect(error).toBeInstanceOf(OrbitError);
      expect(error).not.toBeInstanceOf(OrbitTransportError);
      expect({ code: error.code, status: error.status, requestId: error.requestId, message: error.message }).toEqual({
        code,
        status,
        requestId: REQUEST_ID,
        message: `said ${code}`,
      });
      expect(sent).toHaveLength(1);
    }
  });

  it('MUST retry a network failure with the same Idempotency-Key and the same body bytes', async () => {
    const { client, sent } = scripted((_s, attempt) => {
      if (attempt < 3) throw new TypeError('fetch failed');
      return json(200, { request_id: REQUEST_ID, data: { subscription: subscription(), deduplicated: true } });
    });
    const result = await client.createSubscription('stable-key', {
      name: 'object-results',
      queue_id: QUEUE,
      from_sequence: '18446744073709551615',
    });
    expect(result.deduplicated).toBe(true);
    expect(sent).toHaveLength(3);
    expect(new Set(sent.map((s) => s.headers['idempotency-key']))).toEqual(new Set(['stable-key']));
    expect(new Set(sent.map((s) => s.body)).size).toBe(1);
  });

  it('MUST retry 503 UNAVAILABLE and 429, honouring Retry-After, and give up after maxAttempts with the last error', async () => {
    const started = Date.now();
    const { client, sent } = scripted(
      (_s, attempt) =>
        attempt === 1
          ? json(429, { request_id: REQUEST_ID, error: { code: 'CAPACITY_EXCEEDED', message: 'busy' } }, { 'retry-after': '0' })
          : json(503, { request_id: 'e'.repeat(32), error: { code: 'UNAVAILABLE', message: 'db down' } }, { 'retry-after': '1' }),
      { retry: { maxAttempts: 3, initialDelayMs: 1, maxDelayMs: 2, random: () => 0 } },
    );
    const error = (await client
      .publishResult(QUEUE, 'pk', { type: 'task.succeeded', task_id: id(), task_revision: '1' })
      .catch((e: unknown) => e)) as OrbitError;
    expect(sent).toHaveLength(3);
    expect({ code: error.code, status: error.status, requestId: error.requestId }).toEqual({
      code: 'UNAVAILABLE',
      status: 503,
      requestId: 'e'.repeat(32),
    });
    expect(Date.now() - started).toBeGreaterThanOrEqual(990); // one Retry-After: 1 wait
  });

  it('MUST retry a gateway error without an Orbit envelope, but not a malformed success', async () => {
    const gateway = scripted((_s, attempt) =>
      attempt === 1
        ? new Response('<html>bad gateway</html>', { status: 502 })
        : json(200, { request_id: REQUEST_ID, data: subscription() }),
    );
    expect((await gateway.client.getSubscription(SUB_ID)).id).toBe(SUB_ID);
    expect(gateway.sent).toHaveLength(2);

    const teapot = scripted(() => new Response('nope', { status: 418 }));
    const refused = (await teapot.client.getSubscription(SUB_ID).catch((e: unknown) => e)) as OrbitTransportError;
    expect(refused).toBeInstanceOf(OrbitTransportError);
    expect({ code: refused.code, failure: refused.failure, status: refused.status, retryable: refused.retryable }).toEqual({
      code: 'UNAVAILABLE',
      failure: 'bad_response',
      status: 418,
      retryable: false,
    });
    expect(teapot.sent).toHaveLength(1);
  });

  it('MUST refuse answers that break the contract: duplicate keys, schema violations, uint64 out of range', async () => {
    const bodies = [
      `{"request_id":"${REQUEST_ID}","data":${JSON.stringify(subscription())},"data":${JSON.stringify(subscription())}}`,
      JSON.stringify({ request_id: REQUEST_ID, data: subscription({ revision: '01' }) }),
      JSON.stringify({ request_id: REQUEST_ID, data: subscription({ revision: '18446744073709551616' }) }),
      JSON.stringify({ request_id: REQUEST_ID, data: subscription({ Enabled: true }) }),
      'not json',
    ];
    for (const body of bodies) {
      const { client, sent } = scripted(() => json(200, body));
      const error = (await client.getSubscription(SUB_ID).catch((e: unknown) => e)) as OrbitTransportError;
      expect(error).toBeInstanceOf(OrbitTransportError);
      expect(error.failure).toBe('bad_response');
      expect(error.requestId).toBe(REQUEST_ID);
      expect(sent).toHaveLength(1);
    }
    const unknownCode = scripted(() => json(400, { request_id: REQUEST_ID, error: { code: 'TEAPOT', message: 'x' } }));
    expect(((await unknownCode.client.getSubscription(SUB_ID).catch((e: unknown) => e)) as OrbitTransportError).failure).toBe(
      'bad_response',
    );
  });

  it('MUST keep event.snapshot.result and event.details byte-exact as RawJson', async () => {
    const eventId = id();
    const text = `{"request_id":"${REQUEST_ID}","data":{"delivery":{"id":"${'1'.repeat(32)}","subscription_id":"${SUB_ID}","event_id":"${eventId}","sequence":"13","revision":"4","state":"ACKED","created_at":"2026-09-17T10:00:00Z","available_at":"2026-09-17T10:00:00Z","lease_epoch":"1","attempts":1,"attempt_budget":20,"acknowledged_at":"2026-09-17T10:00:01Z"},"event":{"id":"${eventId}","sequence":"13","type":"task.succeeded","aggregate_kind":"task","aggregate_id":"${'6'.repeat(32)}","aggregate_revision":"2","occurred_at":"2026-09-17T10:00:00Z","details":{ "a" : 1.10 },"snapshot":{"schema_version":1,"task_id":"${'6'.repeat(32)}","queue_id":"${QUEUE}","state":"SUCCEEDED","revision":"2","effect_uncertain":false,"result":{"big": 123456789012345678901234567890, "f": 0.1000000000000000055511151231257827}}}}}`;
    const { client } = scripted(() => json(200, text));
    const detail = await client.getEventDelivery(SUB_ID, '1'.repeat(32));
    expect(detail.event.snapshot.result?.text).toBe('{"big": 123456789012345678901234567890, "f": 0.1000000000000000055511151231257827}');
    expect(detail.event.details.text).toBe('{ "a" : 1.10 }');
  });

  it('MUST send a RawJson result byte for byte when publishing', async () => {
    const { RawJson } = await import('@orbit/spec/codec');
    const { client, sent } = scripted(() =>
      json(500, { request_id: REQUEST_ID, error: { code: 'INVALID_ARGUMENT', message: 'stop here' } }),
    );
    await client
      .publishResult(QUEUE, 'pk', {
        type: 'task.succeeded',
        task_id: QUEUE,
        task_revision: '1',
        result: new RawJson('12345678901234567890123'),
        details: { a: 1 },
      })
      .catch(() => {});
    expect(sent[0]!.body).toBe(
      `{"type":"task.succeeded","task_id":"${QUEUE}","task_revision":"1","result":12345678901234567890123,"details":{"a":1}}`,
    );
  });

  it('MUST check keys and ids locally and never send an invalid one', async () => {
    const { client, sent } = scripted(() => json(200, {}));
    for (const call of [
      () => client.createSubscription('', { name: 'x', queue_id: QUEUE }),
      () => client.createSubscription('has space', { name: 'x', queue_id: QUEUE }),
      () => client.createSubscription('x'.repeat(256), { name: 'x', queue_id: QUEUE }),
      () => client.getSubscription('../admin'),
      () => client.getSubscription(SUB_ID.toUpperCase()),
      () => client.listSubscriptions({ queueId: 'q' }),
      () => client.getEventDelivery(SUB_ID, 'x'),
      () => client.publishResults(QUEUE, []),
      () => client.publishResults(QUEUE, [{ idempotency_key: 'has space', type: 'task.succeeded', task_id: QUEUE, task_revision: '1' }]),
      () =>
        client.publishResults(
          QUEUE,
          Array.from({ length: 101 }, (_, i) => ({
            idempotency_key: `k${i}`,
            type: 'task.succeeded' as const,
            task_id: QUEUE,
            task_revision: '1',
          })),
        ),
      () =>
        client.publishResults(QUEUE, [
          { idempotency_key: 'k', type: 'task.succeeded', task_id: QUEUE, task_revision: '1' },
          { idempotency_key: 'k', type: 'task.failed', task_id: QUEUE, task_revision: '1' },
        ]),
    ] as Array<() => Promise<unknown>>) {
      const error = (await Promise.resolve()
        .then(call)
        .catch((e: unknown) => e)) as OrbitError;
      expect(error).toBeInstanceOf(OrbitError);
      expect(error.code).toBe('INVALID_ARGUMENT');
      expect(error.status).toBeNull();
    }
    expect(sent).toHaveLength(0);
    expect(() => createClient({ baseUrl: 'http://h/?token=x', token: 't' })).toThrow(/query/);
    expect(() => createClient({ baseUrl: 'ftp://h', token: 't' })).toThrow(/http/);
    expect(newIdempotencyKey()).toMatch(/^orbit-[0-9a-f]{32}$/);
  });

  it('MUST time out a silent attempt and retry it; a caller abort stops at once', async () => {
    const hang = (s: Sent, attempt: number, signalOf: () => AbortSignal | undefined): Promise<Response> =>
      attempt === 1
        ? new Promise((_resolve, reject) => signalOf()?.addEventListener('abort', () => reject(signalOf()!.reason)))
        : Promise.resolve(json(200, { request_id: REQUEST_ID, data: subscription() }));
    let lastSignal: AbortSignal | undefined;
    const fetch = (async (input: string | URL | Request, init?: RequestInit) => {
      lastSignal = init?.signal ?? undefined;
      calls++;
      return hang({ url: String(input), method: 'GET', headers: {}, body: undefined }, calls, () => lastSignal);
    }) as typeof globalThis.fetch;
    let calls = 0;
    const client = createClient({
      baseUrl: 'http://orbit.test',
      token: 't',
      fetch,
      timeoutMs: 50,
      retry: { initialDelayMs: 1, random: () => 0 },
    });
    expect((await client.getSubscription(SUB_ID)).id).toBe(SUB_ID);
    expect(calls).toBe(2);

    calls = 0;
    const controller = new AbortController();
    const pending = client.getSubscription(SUB_ID, { signal: controller.signal });
    controller.abort(new Error('caller gave up'));
    await expect(pending).rejects.toThrow('caller gave up');
    expect(calls).toBe(1);
  });
});

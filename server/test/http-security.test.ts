/**
 * Authentication, authorization, scoping and strict request reading over real HTTP on both stores
 * (spec/rules.md#s1-6, #s1-7, #s1-20; #s7-11 to #s7-13): 401/403/404 per route, another credential
 * of the same namespace sees NOT_FOUND, strict bodies and query strings, and after every refused
 * write nothing was written.
 *
 * Longer than 400 lines: one fixture per store (owner, colleague, one credential lacking each
 * action, foreign queues, a subscription with an acknowledged delivery) and one table of routes
 * serve every refusal, route by route; split files would each rebuild the fixture and restate the
 * table.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseStrict } from '@orbit/spec/codec';
import { validateErrorEnvelope } from '@orbit/generated';
import type { BootstrapResult } from '../src/store/principal.ts';
import { ALL_PERMISSIONS, api, type ApiResponse, startTestServer, STORES, type TestServer, TestSocket } from '@orbit/testing';

const newKey = (): string => `key-${randomBytes(8).toString('hex')}`;
const hex32 = (): string => randomBytes(16).toString('hex');
const MAX_BODY = 512 * 1024;

function expectError(res: ApiResponse, status: number, code: string): void {
  expect({ status: res.status, code: res.json?.error?.code }, res.text).toEqual({ status, code });
}

/** Sends exact bytes (e.g. invalid UTF-8) and checks the envelope rules like `api` does. */
async function rawApi(
  base: string,
  method: string,
  path: string,
  options: { token?: string; key?: string; body: Uint8Array | ReadableStream<Uint8Array>; contentType?: string },
): Promise<ApiResponse> {
  const headers: Record<string, string> = { 'content-type': options.contentType ?? 'application/json' };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (options.key) headers['idempotency-key'] = options.key;
  const init: RequestInit & { duplex?: 'half' } = { method, headers, body: options.body as NonNullable<RequestInit['body']> };
  if (options.body instanceof ReadableStream) init.duplex = 'half';
  const response = await fetch(base + path, init);
  const text = await response.text();
  const json = parseStrict(text) as any;
  if (response.status >= 400 && !validateErrorEnvelope(json)) throw new Error(`not an ErrorEnvelope: ${text}`);
  expect(response.headers.get('cache-control')).toBe('no-store');
  expect(response.headers.get('x-request-id')).toBe(json.request_id);
  return { status: response.status, headers: response.headers, text, json };
}

interface Route {
  readonly name: string;
  readonly method: 'GET' | 'POST';
  readonly permission: string;
  /** Path and body, built once the fixtures exist. */
  readonly path: () => string;
  readonly body?: () => unknown;
  /** Whether the route belongs to a subscription (another credential must get NOT_FOUND). */
  readonly owned: boolean;
  /** A write whose keys are in its body (the batch publish), not in the Idempotency-Key header. */
  readonly keysInBody?: true;
}

/** The options of a route's request: its body and, for a POST with the key in a header, a fresh key. */
function writeOptions(route: Route): Record<string, unknown> {
  if (route.method !== 'POST') return {};
  return route.keysInBody ? { body: route.body!() } : { key: newKey(), body: route.body!() };
}

describe.each(STORES)('HTTP security and strictness (%s)', (kind) => {
  let server: TestServer;
  let base: string;
  let owner: BootstrapResult;
  let colleague: BootstrapResult;
  let q1: string;
  let q2: string;
  /** A queue of the same namespace that `owner` has no access to. */
  let foreignQueue: string;
  /** A queue of another namespace. */
  let otherNamespaceQueue: string;
  let sub: any;
  let deliveryId: string;
  const lacking: Record<string, BootstrapResult> = {};

  beforeAll(async () => {
    server = await startTestServer(kind);
    base = server.url;
    owner = await server.bootstrap({ namespace: 'sec', application: 'app', queues: ['q1', 'q2'] });
    colleague = await server.bootstrap({ namespace: 'sec', application: 'app', queues: ['q1', 'q2'] });
    q1 = owner.queue_ids.q1!;
    q2 = owner.queue_ids.q2!;
    foreignQueue = (await server.bootstrap({ namespace: 'sec', application: 'app', queues: ['private'] })).queue_ids.private!;
    otherNamespaceQueue = (await server.bootstrap({ namespace: 'sec-2', application: 'app', queues: ['q1'] })).queue_ids.q1!;
    for (const permission of ALL_PERMISSIONS) {
      lacking[permission] = await server.bootstrap({
        namespace: 'sec',
        application: 'app',
        queues: ['q1', 'q2'],
        permissions: ALL_PERMISSIONS.filter((p) => p !== permission),
      });
    }

    // One subscription with one acknowledged delivery.
    const created = await api(base, 'POST', '/v1/subscriptions', {
      token: owner.token,
      key: newKey(),
      body: { name: 'owned', queue_id: q1 },
      expect: 'validateSubscriptionResult',
    });
    expect(created.status, created.text).toBe(201);
    sub = created.json.data.subscription;
    await publish(q1);
    const socket = await TestSocket.open(base, owner.token);
    expect((await socket.hello(sub.id, 1)).type).toBe('events.welcome');
    const deliver = await socket.deliver();
    expect((await socket.ack(deliver)).type).toBe('ack');
    socket.close();
    await socket.waitClosed();
    deliveryId = deliver.body.delivery.id;
    sub = (await api(base, 'GET', `/v1/subscriptions/${sub.id}`, { token: owner.token, expect: 'validateSubscription' })).json.data;
  });

  afterAll(async () => {
    await server?.stop();
  });

  async function publish(queueId: string): Promise<any> {
    const res = await api(base, 'POST', `/v1/queues/${queueId}/results`, {
      token: owner.token,
      key: newKey(),
      body: { type: 'task.succeeded', task_id: hex32(), task_revision: '1' },
      expect: 'validatePublishResultResponse',
    });
    expect(res.status, res.text).toBe(201);
    return res.json.data.event;
  }

  /** Everything a refused write could have touched, as seen by the owner and the colleague. */
  async function snapshot(): Promise<unknown> {
    const read = async (path: string, token: string) => {
      const res = await api(base, 'GET', path, { token });
      expect(res.status, res.text).toBe(200);
      return res.json.data;
    };
    return {
      owner1: await read(`/v1/subscriptions?queue_id=${q1}&limit=100`, owner.token),
      owner2: await read(`/v1/subscriptions?queue_id=${q2}&limit=100`, owner.token),
      colleague1: await read(`/v1/subscriptions?queue_id=${q1}&limit=100`, colleague.token),
      deliveries: await read(`/v1/subscriptions/${sub.id}/deliveries?limit=100`, owner.token),
      head: (await server.orbit.store.logPosition()).head.toString(),
    };
  }

  const ROUTES: Route[] = [
    {
      name: 'create',
      method: 'POST',
      permission: 'events:manage',
      path: () => '/v1/subscriptions',
      body: () => ({ name: 'never', queue_id: q1 }),
      owned: false,
    },
    { name: 'list', method: 'GET', permission: 'events:read', path: () => `/v1/subscriptions?queue_id=${q1}`, owned: false },
    { name: 'get', method: 'GET', permission: 'events:read', path: () => `/v1/subscriptions/${sub.id}`, owned: true },
    {
      name: 'configure',
      method: 'POST',
      permission: 'events:manage',
      path: () => `/v1/subscriptions/${sub.id}:configure`,
      body: () => ({ expected_revision: sub.revision, enabled: false, reason: 'r' }),
      owned: true,
    },
    {
      name: 'retire',
      method: 'POST',
      permission: 'events:manage',
      path: () => `/v1/subscriptions/${sub.id}:retire`,
      body: () => ({ expected_revision: sub.revision, reason: 'r' }),
      owned: true,
    },
    { name: 'history', method: 'GET', permission: 'events:read', path: () => `/v1/subscriptions/${sub.id}/history`, owned: true },
    { name: 'deliveries', method: 'GET', permission: 'events:read', path: () => `/v1/subscriptions/${sub.id}/deliveries`, owned: true },
    { name: 'queues', method: 'GET', permission: 'events:read', path: () => '/v1/queues', owned: false },
    { name: 'credential', method: 'GET', permission: 'events:read', path: () => '/v1/credential', owned: false },
    { name: 'settings', method: 'GET', permission: 'events:read', path: () => '/v1/settings', owned: false },
    {
      name: 'delivery',
      method: 'GET',
      permission: 'events:read',
      path: () => `/v1/subscriptions/${sub.id}/deliveries/${deliveryId}`,
      owned: true,
    },
    {
      name: 'retry',
      method: 'POST',
      permission: 'events:manage',
      path: () => `/v1/subscriptions/${sub.id}/deliveries/${deliveryId}:retry`,
      body: () => ({ expected_revision: '1', reason: 'r', additional_attempts: 1 }),
      owned: true,
    },
    {
      name: 'publish',
      method: 'POST',
      permission: 'results:publish',
      path: () => `/v1/queues/${q1}/results`,
      body: () => ({ type: 'task.failed', task_id: hex32(), task_revision: '1' }),
      owned: false,
    },
    {
      name: 'publish batch',
      method: 'POST',
      permission: 'results:publish',
      path: () => `/v1/queues/${q1}/results:batch`,
      body: () => ({ items: [{ idempotency_key: newKey(), type: 'task.failed', task_id: hex32(), task_revision: '1' }] }),
      owned: false,
      keysInBody: true,
    },
  ];

  function call(route: Route, token: string | undefined, headers: Record<string, string> = {}): Promise<ApiResponse> {
    return api(base, route.method, route.path(), {
      ...(token ? { token } : {}),
      headers,
      ...writeOptions(route),
    });
  }

  it('the fixtures are readable by their owner', async () => {
    for (const route of ROUTES.filter((r) => r.method === 'GET')) {
      expect((await call(route, owner.token)).status, route.name).toBe(200);
    }
  });

  it('answers 401 UNAUTHENTICATED without a valid bearer token on every route', async () => {
    const before = await snapshot();
    const malformed = [
      `Basic ${owner.token}`,
      'Bearer',
      'Bearer ',
      `Bearer ${owner.token} x`,
      `Token ${owner.token}`,
      owner.token,
      `Bearer ${owner.token}x`,
    ];
    for (const route of ROUTES) {
      expectError(await call(route, undefined), 401, 'UNAUTHENTICATED');
      expectError(await call(route, `not-a-token-${randomBytes(8).toString('hex')}`), 401, 'UNAUTHENTICATED');
      for (const header of malformed) expectError(await call(route, undefined, { authorization: header }), 401, 'UNAUTHENTICATED');
    }
    // A revoked credential is no credential.
    const revoked = await server.bootstrap({ namespace: 'sec', application: 'app', queues: ['q1'] });
    await server.orbit.store.revokeCredential(revoked.credential_id);
    for (const route of ROUTES) expectError(await call(route, revoked.token), 401, 'UNAUTHENTICATED');
    expect(await snapshot()).toEqual(before);
  });

  it('answers 403 PERMISSION_DENIED on every route when the credential lacks its action', async () => {
    const before = await snapshot();
    for (const route of ROUTES) {
      expectError(await call(route, lacking[route.permission]!.token), 403, 'PERMISSION_DENIED');
      // A credential with only the other actions is refused as well.
      const only = await server.bootstrap({
        namespace: 'sec',
        application: 'app',
        queues: ['q1'],
        permissions: ALL_PERMISSIONS.filter((p) => p !== route.permission),
      });
      expectError(await call(route, only.token), 403, 'PERMISSION_DENIED');
    }
    // Consume does not imply read, read does not imply manage.
    const consumeOnly = await server.bootstrap({ namespace: 'sec', application: 'app', queues: ['q1'], permissions: ['events:consume'] });
    for (const route of ROUTES) expectError(await call(route, consumeOnly.token), 403, 'PERMISSION_DENIED');
    expect(await snapshot()).toEqual(before);
  });

  it("gives another credential of the same namespace NOT_FOUND for someone else's subscription", async () => {
    const before = await snapshot();
    for (const route of ROUTES.filter((r) => r.owned)) {
      expectError(await call(route, colleague.token), 404, 'NOT_FOUND');
    }
    const theirs = await api(base, 'GET', `/v1/subscriptions?queue_id=${q1}`, {
      token: colleague.token,
      expect: 'validateSubscriptionList',
    });
    expect(theirs.json.data.items.map((s: any) => s.id)).not.toContain(sub.id);
    expect(await snapshot()).toEqual(before);
  });

  it('answers NOT_FOUND for a queue outside the credential, and for unknown subscriptions and deliveries', async () => {
    const before = await snapshot();
    for (const queue of [foreignQueue, otherNamespaceQueue, hex32()]) {
      expectError(
        await api(base, 'POST', '/v1/subscriptions', { token: owner.token, key: newKey(), body: { name: 'elsewhere', queue_id: queue } }),
        404,
        'NOT_FOUND',
      );
      expectError(await api(base, 'GET', `/v1/subscriptions?queue_id=${queue}`, { token: owner.token }), 404, 'NOT_FOUND');
      expectError(
        await api(base, 'POST', `/v1/queues/${queue}/results`, {
          token: owner.token,
          key: newKey(),
          body: { type: 'task.failed', task_id: hex32(), task_revision: '1' },
        }),
        404,
        'NOT_FOUND',
      );
      expectError(
        await api(base, 'POST', `/v1/queues/${queue}/results:batch`, {
          token: owner.token,
          body: { items: [{ idempotency_key: newKey(), type: 'task.failed', task_id: hex32(), task_revision: '1' }] },
        }),
        404,
        'NOT_FOUND',
      );
    }
    const unknown = hex32();
    expectError(await api(base, 'GET', `/v1/subscriptions/${unknown}`, { token: owner.token }), 404, 'NOT_FOUND');
    expectError(await api(base, 'GET', `/v1/subscriptions/${unknown}/deliveries`, { token: owner.token }), 404, 'NOT_FOUND');
    expectError(await api(base, 'GET', `/v1/subscriptions/${unknown}/history`, { token: owner.token }), 404, 'NOT_FOUND');
    expectError(await api(base, 'GET', `/v1/subscriptions/${sub.id}/deliveries/${hex32()}`, { token: owner.token }), 404, 'NOT_FOUND');
    expectError(
      await api(base, 'POST', `/v1/subscriptions/${unknown}:configure`, {
        token: owner.token,
        key: newKey(),
        body: { expected_revision: '1', enabled: false, reason: 'r' },
      }),
      404,
      'NOT_FOUND',
    );
    expectError(
      await api(base, 'POST', `/v1/subscriptions/${sub.id}/deliveries/${hex32()}:retry`, {
        token: owner.token,
        key: newKey(),
        body: { expected_revision: '1', reason: 'r', additional_attempts: 1 },
      }),
      404,
      'NOT_FOUND',
    );
    expect(await snapshot()).toEqual(before);
  });

  it('refuses query parameters on every route that takes none', async () => {
    const before = await snapshot();
    for (const route of ROUTES.filter((r) => !['list', 'deliveries', 'history', 'queues'].includes(r.name))) {
      for (const query of ['?x=1', `?queue_id=${q1}`, '?limit=1', `?access_token=${owner.token}`, '?cursor=abc', '?x']) {
        const res = await api(base, route.method, route.path() + query, {
          token: owner.token,
          ...writeOptions(route),
        });
        expectError(res, 400, 'INVALID_ARGUMENT');
      }
    }
    for (const query of ['?x=1', `?queue_id=${q1}`, '?state=ACKED&state=ACKED', '?limit=1&limit=1', '?State=ACKED', '?LIMIT=1']) {
      expectError(
        await api(base, 'GET', `/v1/subscriptions/${sub.id}/deliveries${query}`, { token: owner.token }),
        400,
        'INVALID_ARGUMENT',
      );
      expectError(await api(base, 'GET', `/v1/subscriptions/${sub.id}/history${query}`, { token: owner.token }), 400, 'INVALID_ARGUMENT');
    }
    expectError(await api(base, 'GET', '/healthz?x=1'), 400, 'INVALID_ARGUMENT');
    expect(await snapshot()).toEqual(before);
  });

  describe('strict bodies', () => {
    const CREATE_BAD: Array<[string, string]> = [
      ['unknown field', '{"name":"strict","queue_id":"Q","extra":1}'],
      ['case alias Name', '{"Name":"strict","queue_id":"Q"}'],
      ['case alias QUEUE_ID', '{"name":"strict","QUEUE_ID":"Q"}'],
      ['case alias with both', '{"name":"strict","Name":"strict","queue_id":"Q"}'],
      ['duplicate key', '{"name":"strict","name":"strict2","queue_id":"Q"}'],
      ['duplicate identical key', '{"name":"strict","name":"strict","queue_id":"Q"}'],
      ['escaped duplicate key', '{"name":"strict","n\\u0061me":"strict2","queue_id":"Q"}'],
      ['escaped duplicate queue_id', '{"name":"strict","queue_id":"Q","queue\\u005fid":"Q"}'],
      ['nested duplicate', '{"name":"strict","queue_id":"Q","types":["task.failed"],"types":[]}'],
      ['from_sequence 01', '{"name":"strict","queue_id":"Q","from_sequence":"01"}'],
      ['from_sequence 00', '{"name":"strict","queue_id":"Q","from_sequence":"00"}'],
      ['from_sequence +1', '{"name":"strict","queue_id":"Q","from_sequence":"+1"}'],
      ['from_sequence -1', '{"name":"strict","queue_id":"Q","from_sequence":"-1"}'],
      ['from_sequence 1.0', '{"name":"strict","queue_id":"Q","from_sequence":"1.0"}'],
      ['from_sequence 1e0', '{"name":"strict","queue_id":"Q","from_sequence":"1e0"}'],
      ['from_sequence space', '{"name":"strict","queue_id":"Q","from_sequence":" 1"}'],
      ['from_sequence empty', '{"name":"strict","queue_id":"Q","from_sequence":""}'],
      ['from_sequence 2^64', '{"name":"strict","queue_id":"Q","from_sequence":"18446744073709551616"}'],
      ['from_sequence huge', '{"name":"strict","queue_id":"Q","from_sequence":"99999999999999999999999"}'],
      ['from_sequence number', '{"name":"strict","queue_id":"Q","from_sequence":1}'],
      ['max_pending string', '{"name":"strict","queue_id":"Q","max_pending":"100"}'],
      ['max_pending fraction', '{"name":"strict","queue_id":"Q","max_pending":1.5}'],
      ['queue_id upper case', '{"name":"strict","queue_id":"UPPER"}'],
      ['self-declared namespace_id', '{"name":"strict","queue_id":"Q","namespace_id":"Q"}'],
      ['self-declared application_id', '{"name":"strict","queue_id":"Q","application_id":"Q"}'],
      ['self-declared credential_id', '{"name":"strict","queue_id":"Q","credential_id":"Q"}'],
      ['server-assigned id', '{"name":"strict","queue_id":"Q","id":"Q"}'],
      ['enabled at create', '{"name":"strict","queue_id":"Q","enabled":false}'],
      ['not an object', '["strict"]'],
      ['null', 'null'],
      ['empty body', ''],
      ['truncated', '{"name":"strict","queue_id":"Q"'],
      ['trailing garbage', '{"name":"strict","queue_id":"Q"} x'],
      ['two documents', '{"name":"strict","queue_id":"Q"}{}'],
      ['single quotes', "{'name':'strict','queue_id':'Q'}"],
      ['comment', '{"name":"strict","queue_id":"Q"/* c */}'],
      ['trailing comma', '{"name":"strict","queue_id":"Q",}'],
    ];

    it.each(CREATE_BAD)('create: %s → 400 and nothing written', async (_label, template) => {
      const before = await snapshot();
      const key = newKey();
      const rawBody = template.replace(/"Q"/g, `"${q1}"`).replace('"UPPER"', `"${q1.toUpperCase()}"`);
      expectError(await api(base, 'POST', '/v1/subscriptions', { token: owner.token, key, rawBody }), 400, 'INVALID_ARGUMENT');
      expect(await snapshot()).toEqual(before);
      // The refused request did not use up its key.
      const ok = await api(base, 'POST', '/v1/subscriptions', {
        token: owner.token,
        key,
        body: { name: `after-${key}`, queue_id: q2 },
        expect: 'validateSubscriptionResult',
      });
      expect(ok.status, ok.text).toBe(201);
      expect(ok.json.data.deduplicated).toBe(false);
    });

    it('accepts the largest uint64 as a canonical counter (then STATE_CONFLICT on the revision)', async () => {
      const before = await snapshot();
      for (const action of ['configure', 'retire']) {
        const body =
          action === 'configure'
            ? { expected_revision: '18446744073709551615', enabled: true, reason: 'r' }
            : { expected_revision: '18446744073709551615', reason: 'r' };
        expectError(
          await api(base, 'POST', `/v1/subscriptions/${sub.id}:${action}`, { token: owner.token, key: newKey(), body }),
          409,
          'STATE_CONFLICT',
        );
      }
      expect(await snapshot()).toEqual(before);
    });

    it('refuses unknown fields, aliases, duplicate keys and non-canonical counters on configure, retire, retry and publish', async () => {
      const before = await snapshot();
      const targets: Array<{ path: string; good: Record<string, unknown>; counter: string }> = [
        {
          path: `/v1/subscriptions/${sub.id}:configure`,
          good: { expected_revision: sub.revision, enabled: false, reason: 'r' },
          counter: 'expected_revision',
        },
        {
          path: `/v1/subscriptions/${sub.id}:retire`,
          good: { expected_revision: sub.revision, reason: 'r' },
          counter: 'expected_revision',
        },
        {
          path: `/v1/subscriptions/${sub.id}/deliveries/${deliveryId}:retry`,
          good: { expected_revision: '1', reason: 'r', additional_attempts: 1 },
          counter: 'expected_revision',
        },
        { path: `/v1/queues/${q1}/results`, good: { type: 'task.failed', task_id: hex32(), task_revision: '1' }, counter: 'task_revision' },
      ];
      for (const target of targets) {
        const good = JSON.stringify(target.good);
        const inner = good.slice(1, -1);
        const firstKey = Object.keys(target.good)[0]!;
        const escaped = firstKey.replace(/_/, '\\u005f').replace(/e/, '\\u0065');
        const bodies = [
          `{${inner},"extra":true}`,
          `{${inner},"${firstKey.toUpperCase()}":${JSON.stringify(target.good[firstKey])}}`,
          `{${inner},"${firstKey}":${JSON.stringify(target.good[firstKey])}}`,
          `{${inner},"${escaped}":${JSON.stringify(target.good[firstKey])}}`,
          `{${inner},"namespace_id":"${hex32()}"}`,
          `{${inner},"credential_id":"${owner.credential_id}"}`,
          ...['01', '+1', '1.0', '-1', ' 1', '1 ', '0x1', '1e0', '', '18446744073709551616'].map((v) =>
            JSON.stringify({ ...target.good, [target.counter]: v }),
          ),
          JSON.stringify({ ...target.good, [target.counter]: 1 }),
          JSON.stringify({ ...target.good, [target.counter]: null }),
        ];
        for (const rawBody of bodies) {
          expectError(await api(base, 'POST', target.path, { token: owner.token, key: newKey(), rawBody }), 400, 'INVALID_ARGUMENT');
        }
      }
      expect(await snapshot()).toEqual(before);
    });

    it('refuses a wrong Content-Type', async () => {
      const before = await snapshot();
      const body = JSON.stringify({ name: 'content-type', queue_id: q1 });
      for (const type of [
        'text/plain',
        'application/x-www-form-urlencoded',
        'application/jsonx',
        'application/json-patch+json',
        'application/json; charset=latin1',
        'multipart/form-data; boundary=x',
      ]) {
        expectError(
          await api(base, 'POST', '/v1/subscriptions', {
            token: owner.token,
            key: newKey(),
            rawBody: body,
            headers: { 'content-type': type },
          }),
          400,
          'INVALID_ARGUMENT',
        );
      }
      // No Content-Type at all.
      const res = await rawApi(base, 'POST', '/v1/subscriptions', {
        token: owner.token,
        key: newKey(),
        body: new TextEncoder().encode(body),
        contentType: '',
      });
      expectError(res, 400, 'INVALID_ARGUMENT');
      expect(await snapshot()).toEqual(before);
    });

    it('refuses a body over 512 KiB and accepts one of exactly 512 KiB', async () => {
      const before = await snapshot();
      const json = JSON.stringify({ name: 'big-body', queue_id: q1 });
      const over = json + ' '.repeat(MAX_BODY + 1 - json.length);
      expect(Buffer.byteLength(over)).toBe(MAX_BODY + 1);
      expectError(
        await api(base, 'POST', '/v1/subscriptions', { token: owner.token, key: newKey(), rawBody: over }),
        400,
        'INVALID_ARGUMENT',
      );
      const huge = JSON.stringify({ name: 'big-body', queue_id: q1, extra: 'x'.repeat(2 * MAX_BODY) });
      expectError(
        await api(base, 'POST', '/v1/subscriptions', { token: owner.token, key: newKey(), rawBody: huge }),
        400,
        'INVALID_ARGUMENT',
      );
      // Without Content-Length (chunked): the limit still holds.
      const chunk = new TextEncoder().encode(' '.repeat(64 * 1024));
      let sent = 0;
      const stream = new ReadableStream<Uint8Array>({
        pull(controller) {
          if (sent === 0) controller.enqueue(new TextEncoder().encode(json));
          if (sent > MAX_BODY + chunk.length) controller.close();
          else controller.enqueue(chunk);
          sent += chunk.length;
        },
      });
      expectError(
        await rawApi(base, 'POST', '/v1/subscriptions', { token: owner.token, key: newKey(), body: stream }),
        400,
        'INVALID_ARGUMENT',
      );
      expect(await snapshot()).toEqual(before);

      const exact = json + ' '.repeat(MAX_BODY - json.length);
      const ok = await api(base, 'POST', '/v1/subscriptions', {
        token: owner.token,
        key: newKey(),
        rawBody: exact,
        expect: 'validateSubscriptionResult',
      });
      expect(ok.status, ok.text).toBe(201);
    });

    it('refuses a body that is not valid UTF-8', async () => {
      const before = await snapshot();
      const prefix = new TextEncoder().encode(`{"queue_id":"${q1}","name":"utf`);
      const suffix = new TextEncoder().encode('"}');
      for (const bad of [[0xff], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xe2, 0x82], [0x80], [0xf4, 0x90, 0x80, 0x80]]) {
        const bytes = new Uint8Array([...prefix, ...bad, ...suffix]);
        expectError(
          await rawApi(base, 'POST', '/v1/subscriptions', { token: owner.token, key: newKey(), body: bytes }),
          400,
          'INVALID_ARGUMENT',
        );
      }
      // Invalid UTF-8 inside a raw `result` is refused too.
      const publishPrefix = new TextEncoder().encode(`{"type":"task.failed","task_id":"${hex32()}","task_revision":"1","result":"`);
      expectError(
        await rawApi(base, 'POST', `/v1/queues/${q1}/results`, {
          token: owner.token,
          key: newKey(),
          body: new Uint8Array([...publishPrefix, 0xff, ...suffix]),
        }),
        400,
        'INVALID_ARGUMENT',
      );
      expect(await snapshot()).toEqual(before);
    });
  });

  it('answers unknown routes with a NOT_FOUND envelope', async () => {
    const before = await snapshot();
    const cases: Array<[string, string]> = [
      ['GET', '/v1/nope'],
      ['GET', '/'],
      ['GET', '/v2/subscriptions'],
      ['POST', `/v1/subscriptions/${sub.id}`],
      ['POST', `/v1/subscriptions/${sub.id}:delete`],
      ['POST', `/v1/subscriptions/${sub.id}:enable`],
      ['GET', `/v1/subscriptions/${sub.id}:configure`],
      ['DELETE', `/v1/subscriptions/${sub.id}`],
      ['PUT', `/v1/subscriptions/${sub.id}`],
      ['PATCH', `/v1/subscriptions/${sub.id}`],
      ['GET', `/v1/subscriptions/${sub.id}/deliveries/${deliveryId}:retry`],
      ['POST', `/v1/subscriptions/${sub.id}/deliveries/${deliveryId}`],
      ['POST', `/v1/subscriptions/${sub.id}/deliveries/${deliveryId}:ack`],
      ['GET', `/v1/queues/${q1}/results`],
      ['POST', `/v1/subscriptions/${sub.id}:rebind`],
    ];
    for (const [method, path] of cases) {
      const res = await api(base, method, path, {
        token: owner.token,
        ...(method === 'POST' || method === 'PUT' || method === 'PATCH' ? { key: newKey(), body: {} } : {}),
      });
      expectError(res, 404, 'NOT_FOUND');
    }
    expectError(await api(base, 'GET', '/v1/nope'), 404, 'NOT_FOUND');
    expect(await snapshot()).toEqual(before);
  });

  it('maps every HTTP error code to its status', async () => {
    // A namespace at its limit, for SUBSCRIPTION_LIMIT.
    const full = await server.bootstrap({ namespace: 'sec-full', application: 'app', queues: ['fq'] });
    for (let i = 0; i < 64; i++) {
      const res = await api(base, 'POST', '/v1/subscriptions', {
        token: full.token,
        key: newKey(),
        body: { name: `full-${i}`, queue_id: full.queue_ids.fq! },
      });
      expect(res.status, res.text).toBe(201);
    }
    const usedKey = newKey();
    expect(
      (await api(base, 'POST', '/v1/subscriptions', { token: owner.token, key: usedKey, body: { name: 'table-idem', queue_id: q2 } }))
        .status,
    ).toBe(201);
    // Retention: results below `boundary + 1` are pruned.
    for (let i = 0; i < 3; i++) await publish(q2);
    const { head } = await server.orbit.store.logPosition();
    await server.orbit.store.prune(head);
    const boundary = head - 1n;

    const table: Array<{ code: string; status: number; send: () => Promise<ApiResponse> }> = [
      {
        code: 'INVALID_ARGUMENT',
        status: 400,
        send: () => api(base, 'POST', '/v1/subscriptions', { token: owner.token, body: { name: 'no-key', queue_id: q1 } }),
      },
      { code: 'UNAUTHENTICATED', status: 401, send: () => api(base, 'GET', `/v1/subscriptions/${sub.id}`) },
      {
        code: 'PERMISSION_DENIED',
        status: 403,
        send: () => api(base, 'GET', `/v1/subscriptions/${sub.id}`, { token: lacking['events:read']!.token }),
      },
      { code: 'NOT_FOUND', status: 404, send: () => api(base, 'GET', `/v1/subscriptions/${sub.id}`, { token: colleague.token }) },
      {
        code: 'STATE_CONFLICT',
        status: 409,
        send: () =>
          api(base, 'POST', `/v1/subscriptions/${sub.id}:configure`, {
            token: owner.token,
            key: newKey(),
            body: { expected_revision: '999', enabled: true, reason: 'r' },
          }),
      },
      {
        code: 'IDEMPOTENCY_CONFLICT',
        status: 409,
        send: () =>
          api(base, 'POST', '/v1/subscriptions', { token: owner.token, key: usedKey, body: { name: 'table-idem-2', queue_id: q2 } }),
      },
      {
        code: 'SUBSCRIPTION_LIMIT',
        status: 409,
        send: () =>
          api(base, 'POST', '/v1/subscriptions', {
            token: full.token,
            key: newKey(),
            body: { name: 'full-64', queue_id: full.queue_ids.fq! },
          }),
      },
      {
        code: 'EVENT_HISTORY_EXPIRED',
        status: 410,
        send: () =>
          api(base, 'POST', '/v1/subscriptions', {
            token: owner.token,
            key: newKey(),
            body: { name: 'too-old', queue_id: q2, from_sequence: (boundary - 1n).toString() },
          }),
      },
    ];
    const before = await snapshot();
    for (const row of table) {
      const res = await row.send();
      expectError(res, row.status, row.code);
      expect(res.json.error.message.length).toBeGreaterThan(0);
    }
    expect(await snapshot()).toEqual(before);
    // The boundary itself is still a valid start.
    const atBoundary = await api(base, 'POST', '/v1/subscriptions', {
      token: owner.token,
      key: newKey(),
      body: { name: 'at-boundary', queue_id: q2, from_sequence: boundary.toString() },
    });
    expect(atBoundary.status, atBoundary.text).toBe(201);
    expect(atBoundary.json.data.subscription.cursor_sequence).toBe(boundary.toString());
  });
});

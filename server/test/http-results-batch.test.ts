/**
 * The batch publish over real HTTP on both stores (spec/README.md, Batch publish): items in order
 * with one outcome each, replays, per-item conflicts, a bad item writing nothing, the limits, one
 * idempotency namespace with the single publish, delivery over WebSocket, and one wake-up per batch.
 * Every response is checked by the generated validators (`api`).
 */
import { randomBytes } from 'node:crypto';
import { MAX_BATCH_ITEMS, MAX_EVENT_PAYLOAD_BYTES } from '@orbit/spec/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BootstrapResult } from '../src/store/principal.ts';
import { api, type ApiResponse, startTestServer, STORES, type TestServer, TestSocket } from '@orbit/testing';

const hex32 = (): string => randomBytes(16).toString('hex');
const newKey = (): string => `bk-${randomBytes(8).toString('hex')}`;
const EXACT_RESULT = '{"big":123456789012345678901234567890,"precise":0.1000000000000000055511151231257827,"n":1.10}';

type Item = Record<string, unknown> & { idempotency_key: string };
const item = (extra: Record<string, unknown> = {}): Item => ({
  idempotency_key: newKey(),
  type: 'task.succeeded',
  task_id: hex32(),
  task_revision: '1',
  ...extra,
});

function expectError(res: ApiResponse, status: number, code: string, message?: RegExp): void {
  expect({ status: res.status, code: res.json?.error?.code }, res.text).toEqual({ status, code });
  if (message) expect(res.json.error.message).toMatch(message);
}

describe.each(STORES)('batch publish over HTTP (%s)', (kind) => {
  let server: TestServer;
  let owner: BootstrapResult;
  let reader: BootstrapResult;

  beforeAll(async () => {
    server = await startTestServer(kind);
    owner = await server.bootstrap({ namespace: 'batch', application: 'app', queues: ['q', 'other'] });
    reader = await server.bootstrap({ namespace: 'batch', application: 'app', queues: ['q'], permissions: ['events:read'] });
  });
  afterAll(async () => {
    await server?.stop();
  });

  const batchPath = (queue = owner.queue_ids.q!): string => `/v1/queues/${queue}/results:batch`;
  const batch = (body: unknown, options: { token?: string; queue?: string; key?: string } = {}): Promise<ApiResponse> =>
    api(server.url, 'POST', batchPath(options.queue), {
      token: options.token ?? owner.token,
      ...(options.key ? { key: options.key } : {}),
      ...(typeof body === 'string' ? { rawBody: body } : { body }),
      expect: 'validatePublishResultsResponse',
    });
  const single = (body: unknown, key: string): Promise<ApiResponse> =>
    api(server.url, 'POST', `/v1/queues/${owner.queue_ids.q}/results`, {
      token: owner.token,
      key,
      body,
      expect: 'validatePublishResultResponse',
    });

  async function counts(): Promise<{ results: number; receipts: number }> {
    const [r] = await server.orbit.store.db.all('SELECT COUNT(*) AS n FROM results');
    const [k] = await server.orbit.store.db.all('SELECT COUNT(*) AS n FROM idempotency_records');
    return { results: Number(r!.n), receipts: Number(k!.n) };
  }

  it('appends the items in request order, on consecutive sequences, byte-exact', async () => {
    const { head } = await server.orbit.store.logPosition();
    const items = Array.from({ length: 5 }, (_, i) => item({ task_revision: String(i + 1) }));
    const text = JSON.stringify({ items }).replace('"task_revision":"3"', `"task_revision":"3","result":${EXACT_RESULT}`);
    const res = await batch(text);
    expect(res.status, res.text).toBe(200);
    const results = res.json.data.results as any[];
    expect(results.map((r) => [r.deduplicated, r.event.aggregate_id, r.event.aggregate_revision, r.event.sequence])).toEqual(
      items.map((it, i) => [false, it.task_id, String(i + 1), (head + BigInt(i + 1)).toString()]),
    );
    expect(res.text).toContain(`"result":${EXACT_RESULT}`);
    expect((await server.orbit.store.logPosition()).head).toBe(head + 5n);
  });

  it('replays a repeated batch with the same events and appends nothing', async () => {
    const items = [item(), item({ details: { a: 1 } }), item({ type: 'task.failed' })];
    const first = await batch({ items });
    expect(first.status, first.text).toBe(200);
    const before = await counts();
    const again = await batch({ items });
    expect(again.status, again.text).toBe(200);
    expect(again.json.data.results).toEqual(first.json.data.results.map((r: any) => ({ ...r, deduplicated: true })));
    expect(await counts()).toEqual(before);
  });

  it('answers a key reused with other content with that item’s own error; the others succeed', async () => {
    const used = item();
    expect((await batch({ items: [used] })).status).toBe(200);
    const before = await counts();
    const fresh = [item(), item()];
    const res = await batch({ items: [fresh[0], { ...used, task_revision: '2' }, fresh[1]] });
    expect(res.status, res.text).toBe(200);
    const [a, conflict, b] = res.json.data.results;
    expect(conflict).toEqual({ error: { code: 'IDEMPOTENCY_CONFLICT', message: expect.any(String) } });
    expect([a.deduplicated, b.deduplicated, a.event.aggregate_id, b.event.aggregate_id]).toEqual([
      false,
      false,
      fresh[0]!.task_id,
      fresh[1]!.task_id,
    ]);
    expect(await counts()).toEqual({ results: before.results + 2, receipts: before.receipts + 2 });
  });

  it('rejects the whole batch for one bad item, naming it, and writes nothing', async () => {
    const before = await counts();
    const { head } = await server.orbit.store.logPosition();
    const good = (): Item => item();
    const cases: Array<[unknown, RegExp]> = [
      [{ items: [good(), good(), item({ task_revision: '03' })] }, /^\/items\/2\/task_revision/],
      [{ items: [good(), item({ task_revision: '18446744073709551616' })] }, /^\/items\/1\/task_revision must be a canonical uint64/],
      [{ items: [good(), item({ sequence: '9' })] }, /^\/items\/1 .*"sequence"/],
      [{ items: [good(), item({ details: [1] })] }, /^\/items\/1\/details/],
      [{ items: [good(), { type: 'task.succeeded', task_id: hex32(), task_revision: '1' }] }, /^\/items\/1 .*idempotency_key/],
      [{ items: [good(), item({ idempotency_key: 'has space' })] }, /^\/items\/1\/idempotency_key/],
      [{ items: [] }, /^\/items/],
      [{ items: Array.from({ length: MAX_BATCH_ITEMS + 1 }, good) }, /^\/items/],
      [{ items: [good()], atomic: true }, /"atomic"/],
    ];
    for (const [body, message] of cases) expectError(await batch(body), 400, 'INVALID_ARGUMENT', message);
    const twice = good();
    expectError(
      await batch({ items: [good(), twice, { ...twice }] }),
      400,
      'INVALID_ARGUMENT',
      /^\/items\/2\/idempotency_key repeats .*\/items\/1/,
    );
    const big = `"${'x'.repeat(MAX_EVENT_PAYLOAD_BYTES)}"`;
    const oversized = JSON.stringify({ items: [good(), good()] }).replace(/}]}$/, `,"result":${big}}]}`);
    expectError(await batch(oversized), 400, 'INVALID_ARGUMENT', /^\/items\/1: result and details together/);
    expectError(await batch({ items: [good()] }, { key: newKey() }), 400, 'INVALID_ARGUMENT', /Idempotency-Key/);
    expect(await counts()).toEqual(before);
    expect((await server.orbit.store.logPosition()).head).toBe(head);
  });

  it('refuses without permission, outside the queue set and on an unknown queue, writing nothing', async () => {
    const before = await counts();
    expectError(await batch({ items: [item()] }, { token: reader.token }), 403, 'PERMISSION_DENIED');
    expectError(await batch({ items: [item()] }, { queue: hex32() }), 404, 'NOT_FOUND');
    expectError(await batch({ items: [item()] }, { token: 'nope' }), 401, 'UNAUTHENTICATED');
    expectError(
      await api(server.url, 'POST', `/v1/queues/${owner.queue_ids.q}/results:other`, { token: owner.token, body: {} }),
      404,
      'NOT_FOUND',
    );
    expect(await counts()).toEqual(before);
  });

  it('shares one idempotency namespace with the single publish, in both directions', async () => {
    const { idempotency_key: soloKey, ...solo } = item({ result: [1, 2] });
    const alone = await single(solo, soloKey);
    expect(alone.status, alone.text).toBe(201);
    const { idempotency_key: laterKey, ...later } = item();
    const res = await batch({
      items: [
        { idempotency_key: soloKey, ...solo },
        { idempotency_key: laterKey, ...later },
      ],
    });
    expect(res.json.data.results[0]).toEqual({ event: alone.json.data.event, deduplicated: true });
    const replayed = await single(later, laterKey);
    expect(replayed.status, replayed.text).toBe(200);
    expect(replayed.json.data).toEqual({ event: res.json.data.results[1].event, deduplicated: true });
    expectError(await single({ ...later, task_revision: '9' }, laterKey), 409, 'IDEMPOTENCY_CONFLICT');
    const other = await batch({ items: [{ idempotency_key: soloKey, ...solo, task_revision: '9' }] });
    expect(other.json.data.results[0].error.code).toBe('IDEMPOTENCY_CONFLICT');
  });

  it('delivers a batch to a subscriber over WebSocket, waking the sessions once per batch', async () => {
    const created = await api(server.url, 'POST', '/v1/subscriptions', {
      token: owner.token,
      key: newKey(),
      body: { name: `batch-${hex32().slice(0, 8)}`, queue_id: owner.queue_ids.other },
      expect: 'validateSubscriptionResult',
    });
    expect(created.status, created.text).toBe(201);
    const socket = await TestSocket.open(server.url, owner.token);
    try {
      expect((await socket.hello(created.json.data.subscription.id, 4)).type).toBe('events.welcome');
      const wakes: bigint[] = [];
      const stop = server.orbit.store.onAppend((head) => wakes.push(head));
      const items = [item(), item(), item()];
      const res = await batch({ items }, { queue: owner.queue_ids.other });
      stop();
      const events = res.json.data.results.map((r: any) => r.event);
      expect(wakes).toEqual([BigInt(events[2].sequence)]);
      const delivered: string[] = [];
      for (let i = 0; i < items.length; i++) {
        const frame = await socket.deliver();
        delivered.push(frame.body.event.id);
        expect((await socket.ack(frame)).type).toBe('ack');
      }
      expect(delivered).toEqual(events.map((e: any) => e.id));
      expect(socket.invalid).toEqual([]);
    } finally {
      socket.close();
    }
  });
});

/**
 * The management client against a real server on both stores: every operation's happy path,
 * error mapping (code, HTTP status, request_id), byte-exact results, and the retry of a request
 * whose answer was lost, with the same Idempotency-Key.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORES } from '@orbit/testing';
import { createClient, OrbitError, OrbitTransportError, RawJson, toBigInt, type OrbitClient } from '../src/index.ts';
import { id, key, name, CuttingProxy, setup, type Setup } from './support.ts';

async function failure(promise: Promise<unknown>): Promise<OrbitError> {
  const error = await promise.then(
    () => {
      throw new Error('expected a failure');
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(OrbitError);
  return error as OrbitError;
}

describe.each(STORES)('management client on %s', (kind) => {
  let env: Setup;
  let client: OrbitClient;
  let queueId: string;

  beforeAll(async () => {
    env = await setup(kind);
    client = env.client;
    queueId = env.queueId;
  });
  afterAll(async () => env.server.stop());

  it('MUST create (201, then deduplicated for the same key), get, pause and resume a subscription', async () => {
    const createKey = key('create');
    const body = {
      name: name(),
      queue_id: queueId,
      types: ['task.succeeded' as const, 'task.failed' as const],
      max_pending: 50,
      max_attempts: 5,
    };
    const created = await client.createSubscription(createKey, body);
    expect(created.deduplicated).toBe(false);
    expect(created.subscription).toMatchObject({
      name: body.name,
      queue_id: queueId,
      revision: '1',
      enabled: true,
      types: ['task.failed', 'task.succeeded'],
      max_pending: 50,
      max_attempts: 5,
    });
    const replay = await client.createSubscription(createKey, body);
    expect(replay).toEqual({ subscription: created.subscription, deduplicated: true });

    const current = await client.getSubscription(created.subscription.id);
    expect(current).toEqual(created.subscription);
    const pauseKey = key('pause');
    const pauseBody = { expected_revision: current.revision, enabled: false, reason: 'receiver maintenance' };
    const paused = await client.configureSubscription(current.id, pauseKey, pauseBody);
    expect(paused.subscription).toMatchObject({ enabled: false, revision: '2' });
    // A replay keeps the original body (and its original expected_revision).
    expect(await client.configureSubscription(current.id, pauseKey, pauseBody)).toEqual({
      subscription: paused.subscription,
      deduplicated: true,
    });

    const again = await client.getSubscription(current.id);
    const resumed = await client.configureSubscription(current.id, key('resume'), {
      expected_revision: again.revision,
      enabled: true,
      reason: 'maintenance over',
    });
    expect(resumed.subscription).toMatchObject({ enabled: true, revision: '3' });
    expect(toBigInt(resumed.subscription.revision)).toBe(3n);

    // The history has each operation once (the replayed pause is not repeated), newest first.
    const page = await client.listSubscriptionHistory(current.id, { limit: 2 });
    expect(page.items.map((e) => e.action)).toEqual(['resume', 'pause']);
    expect(page.next_cursor).toBeTypeOf('string');
    const history = [];
    for await (const entry of client.iterateSubscriptionHistory(current.id, { limit: 1 }))
      history.push([entry.action, entry.revision, entry.reason]);
    expect(history).toEqual([
      ['resume', '3', 'maintenance over'],
      ['pause', '2', 'receiver maintenance'],
      ['create', '1', ''],
    ]);
  });

  it('MUST list one page at a time and iterate all pages, newest first', async () => {
    // A separate credential and queue so the listing is exactly what this test created.
    const server = env.server;
    const boot = await server.bootstrap({ application: `lister-${kind}`, queues: ['listed'] });
    const own = createClient({ baseUrl: server.url, token: boot.token });
    const queue = boot.queue_ids.listed!;
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await own.createSubscription(key(), { name: name(), queue_id: queue })).subscription.id);
    const first = await own.listSubscriptions({ queueId: queue, limit: 2 });
    expect(first.items).toHaveLength(2);
    expect(first.next_cursor).toBeTypeOf('string');
    const all: string[] = [];
    for await (const sub of own.iterateSubscriptions({ queueId: queue, limit: 2 })) all.push(sub.id);
    expect(new Set(all)).toEqual(new Set(ids));
    expect(all).toHaveLength(5);
    expect(all[0]).toBe(first.items[0]!.id);
  });

  it('MUST retire a subscription that has nothing pending; it stays readable', async () => {
    const sub = (await client.createSubscription(key(), { name: name(), queue_id: queueId })).subscription;
    const retired = await client.retireSubscription(sub.id, key('retire'), { expected_revision: sub.revision, reason: 'no longer needed' });
    expect(retired.subscription.retired_at).toBeTypeOf('string');
    expect(retired.subscription.retired_sequence).toMatch(/^(0|[1-9][0-9]*)$/);
    expect((await client.getSubscription(sub.id)).retired_at).toBe(retired.subscription.retired_at);
  });

  it('MUST publish a result and keep a 20+ digit integer byte-exact; a replay is deduplicated', async () => {
    const publishKey = key('publish');
    const body = {
      type: 'task.succeeded' as const,
      task_id: id(),
      task_revision: '1',
      result: new RawJson('{"n":123456789012345678901234567890,"f":1.10}'),
      details: { source: 'test' },
    };
    const first = await client.publishResult(queueId, publishKey, body);
    expect(first.deduplicated).toBe(false);
    expect(first.event.snapshot.result?.text).toBe('{"n":123456789012345678901234567890,"f":1.10}');
    expect(first.event.details.text).toBe('{"source":"test"}');
    const replay = await client.publishResult(queueId, publishKey, body);
    expect(replay.deduplicated).toBe(true);
    expect(replay.event.id).toBe(first.event.id);
  });

  it('MUST publish a batch in order with one outcome per item; a key shared with publishResult replays', async () => {
    const soloKey = key('solo');
    const solo = { type: 'task.failed' as const, task_id: id(), task_revision: '2' };
    const alone = await client.publishResult(queueId, soloKey, solo);
    const items = [
      {
        idempotency_key: key('b0'),
        type: 'task.succeeded' as const,
        task_id: id(),
        task_revision: '1',
        result: new RawJson('[1.10,123456789012345678901234567890]'),
      },
      { idempotency_key: soloKey, ...solo },
      { idempotency_key: soloKey.replace('solo', 'oops'), ...solo },
      { idempotency_key: key('b1'), ...solo, task_revision: '3' },
    ];
    // The third item reuses the second's content under a new key: a new result, not a replay.
    const first = await client.publishResults(queueId, items);
    const [a, b, c, d] = first.results as Array<{
      event: { sequence: string; id: string; snapshot: { result?: RawJson } };
      deduplicated: boolean;
    }>;
    expect([a!.deduplicated, b!.deduplicated, c!.deduplicated, d!.deduplicated]).toEqual([false, true, false, false]);
    expect(a!.event.snapshot.result?.text).toBe('[1.10,123456789012345678901234567890]');
    expect(b!.event.id).toBe(alone.event.id);
    expect(toBigInt(c!.event.sequence) + 1n).toBe(toBigInt(d!.event.sequence));
    const conflict = await client.publishResults(queueId, [{ ...items[3]!, task_revision: '4' }]);
    expect(conflict.results).toEqual([{ error: { code: 'IDEMPOTENCY_CONFLICT', message: expect.any(String) } }]);
    const invalid = await failure(client.publishResults(queueId, [{ ...items[0]!, task_revision: '18446744073709551616' }]));
    expect({ code: invalid.code, status: invalid.status }).toEqual({ code: 'INVALID_ARGUMENT', status: 400 });
  });

  it('MUST map server errors to OrbitError with code, HTTP status and request_id', async () => {
    const checks: Array<[() => Promise<unknown>, string, number]> = [];
    const stranger = createClient({ baseUrl: env.server.url, token: 'orbit_not-a-token' });
    checks.push([() => stranger.getSubscription(id()), 'UNAUTHENTICATED', 401]);
    const reader = await env.server.bootstrap({ application: `reader-${kind}`, permissions: ['events:read'] });
    const readOnly = createClient({ baseUrl: env.server.url, token: reader.token });
    checks.push([() => readOnly.createSubscription(key(), { name: name(), queue_id: reader.queue_ids.q! }), 'PERMISSION_DENIED', 403]);
    checks.push([() => client.getSubscription(id()), 'NOT_FOUND', 404]);
    const sub = (await client.createSubscription(key(), { name: name(), queue_id: queueId })).subscription;
    checks.push([
      () => client.configureSubscription(sub.id, key(), { expected_revision: '7', enabled: false, reason: 'stale' }),
      'STATE_CONFLICT',
      409,
    ]);
    const reused = key();
    await client.configureSubscription(sub.id, reused, { expected_revision: '1', enabled: false, reason: 'first' });
    checks.push([
      () => client.configureSubscription(sub.id, reused, { expected_revision: '1', enabled: false, reason: 'different content' }),
      'IDEMPOTENCY_CONFLICT',
      409,
    ]);
    checks.push([
      () => client.createSubscription(key(), { name: name(), queue_id: queueId, from_sequence: '18446744073709551615' }),
      'INVALID_ARGUMENT',
      400,
    ]);
    checks.push([() => client.createSubscription(key(), { name: sub.name, queue_id: queueId }), 'STATE_CONFLICT', 409]);
    for (const [promise, code, status] of checks) {
      const error = await failure(promise());
      expect({ code: error.code, status: error.status }).toEqual({ code, status });
      expect(error.requestId).toMatch(/^[0-9a-f]{32}$/);
      expect(error).not.toBeInstanceOf(OrbitTransportError);
    }
  });

  it('MUST answer EVENT_HISTORY_EXPIRED (410) for a from_sequence below the retention boundary', async () => {
    const boot = await env.server.bootstrap({ application: `pruned-${kind}`, queues: ['pruned'] });
    const own = createClient({ baseUrl: env.server.url, token: boot.token });
    let last = '0';
    for (let i = 0; i < 3; i++)
      last = (await own.publishResult(boot.queue_ids.pruned!, key(), { type: 'task.failed', task_id: id(), task_revision: '1' })).event
        .sequence;
    await env.server.orbit.store.prune(toBigInt(last));
    const error = await failure(own.createSubscription(key(), { name: name(), queue_id: boot.queue_ids.pruned!, from_sequence: '1' }));
    expect({ code: error.code, status: error.status }).toEqual({ code: 'EVENT_HISTORY_EXPIRED', status: 410 });
  });

  it('MUST retry a request whose answer was lost with the same Idempotency-Key: the server deduplicates', async () => {
    const proxy = await CuttingProxy.start(env.server.url);
    try {
      const viaProxy = createClient({ baseUrl: proxy.url, token: env.token, retry: { initialDelayMs: 10, maxDelayMs: 50 } });
      proxy.swallowNextResponse();
      const body = { name: name(), queue_id: queueId };
      const created = await viaProxy.createSubscription(key('lost-answer'), body);
      // The first attempt was executed by the server; only its answer was lost.
      expect(created.deduplicated).toBe(true);
      expect(proxy.connections).toBeGreaterThanOrEqual(2);
      const named: string[] = [];
      for await (const sub of client.iterateSubscriptions({ queueId, limit: 100 })) if (sub.name === body.name) named.push(sub.id);
      expect(named).toEqual([created.subscription.id]);

      // With retries off, the lost answer is a transport error (UNAVAILABLE, retryable).
      const once = createClient({ baseUrl: proxy.url, token: env.token, retry: false });
      proxy.swallowNextResponse();
      const error = await failure(once.getSubscription(created.subscription.id));
      expect(error).toBeInstanceOf(OrbitTransportError);
      expect({ code: error.code, retryable: error.retryable, failure: (error as OrbitTransportError).failure }).toEqual({
        code: 'UNAVAILABLE',
        retryable: true,
        failure: 'network',
      });
    } finally {
      await proxy.close();
    }
  });

  it('MUST report a server that is not there as a retryable transport failure after the bounded retries', async () => {
    const proxy = await CuttingProxy.start(env.server.url);
    const url = proxy.url;
    await proxy.close(); // nothing listens there any more
    const down = createClient({ baseUrl: url, token: env.token, retry: { maxAttempts: 3, initialDelayMs: 5, maxDelayMs: 10 } });
    const started = Date.now();
    const error = await failure(down.health());
    expect(error).toBeInstanceOf(OrbitTransportError);
    expect(error.code).toBe('UNAVAILABLE');
    expect(Date.now() - started).toBeLessThan(5000);
  });
});

/**
 * A subscription's connected sessions (`GET /v1/subscriptions/{id}/sessions`) and the cluster-wide
 * gauges of `/metrics`: on both stores with one in-process server (the list, its paging and its
 * refusals, the counts), then with three `orbit serve` processes on one MySQL database, one of them
 * SIGKILLed (`cluster-views.ts`; the Galera suite runs the same with a node per Galera node).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Store } from '../src/store/store.ts';
import { crossNodeViews } from './cluster-views.ts';
import { api, eventually, freshDatabase, startTestServer, STORES, subscribe, type TestServer, TestSocket } from '@orbit/testing';
import { sample, scrape } from './metrics-scrape.ts';

const TASK = '99999999999999999999999999999999';

describe.each(STORES)('connected sessions on %s', (kind) => {
  let server: TestServer;
  const sockets: TestSocket[] = [];

  beforeAll(async () => {
    server = await startTestServer(kind, { ORBIT_METRICS: 'open', ORBIT_LEASE_DURATION_MS: '60000', ORBIT_POLL_INTERVAL_MS: '50' });
  });
  afterAll(async () => {
    for (const socket of sockets) socket.close();
    await server?.stop();
  });

  const list = (token: string, id: string, query = '') => api(server.url, 'GET', `/v1/subscriptions/${id}/sessions${query}`, { token });

  it('lists each bound session with its node, capacity and leases held; pages; refuses others; counts once in /metrics', async () => {
    const boot = await server.bootstrap({ namespace: 'sessions', queues: ['q'] });
    const queueId = boot.queue_ids.q!;
    const subscription = await subscribe(server.url, boot.token, queueId);
    expect((await list(boot.token, subscription.id)).json.data).toEqual({ items: [] });

    const first = await TestSocket.open(server.url, boot.token);
    const second = await TestSocket.open(server.url, boot.token);
    sockets.push(first, second);
    expect((await first.hello(subscription.id, 2)).type).toBe('events.welcome');
    expect((await second.hello(subscription.id, 3)).type).toBe('events.welcome');
    await server.orbit.store.appendResults(
      Array.from({ length: 4 }, (_, i) => ({ queueId, type: 'task.succeeded' as const, taskId: TASK, taskRevision: `${i + 1}` })),
    );
    const deliveries = (s: TestSocket) => s.frames.filter((f) => f.type === 'event.deliver').length;
    await eventually(() => deliveries(first) + deliveries(second) === 4, 10_000, 'four deliveries');

    const res = await api(server.url, 'GET', `/v1/subscriptions/${subscription.id}/sessions`, {
      token: boot.token,
      expect: 'validateSubscriptionSessionList',
    });
    const items = res.json.data.items as any[];
    // Newest first: the second connection bound last.
    expect(items.map((s) => [s.session_id, s.capacity, s.leases_held])).toEqual([
      [second.sessionId, 3, deliveries(second)],
      [first.sessionId, 2, deliveries(first)],
    ]);
    expect(items[0].node_id).toBe(items[1].node_id);
    expect(res.json.data.next_cursor).toBeUndefined();

    // Paging: one per page, and a cursor belongs to its subscription.
    const page1 = await list(boot.token, subscription.id, '?limit=1');
    expect(page1.json.data.items.map((s: any) => s.session_id)).toEqual([second.sessionId]);
    const page2 = await list(boot.token, subscription.id, `?limit=1&cursor=${page1.json.data.next_cursor}`);
    expect(page2.json.data.items.map((s: any) => s.session_id)).toEqual([first.sessionId]);
    const other = await subscribe(server.url, boot.token, queueId);
    const misused = await list(boot.token, other.id, `?limit=1&cursor=${page1.json.data.next_cursor}`);
    expect([misused.status, misused.json.error.code]).toEqual([400, 'INVALID_ARGUMENT']);
    expect((await list(boot.token, subscription.id, '?limit=0')).status).toBe(400);
    expect((await list(boot.token, subscription.id, '?color=red')).status).toBe(400);

    // Another credential sees no such subscription; a read-less credential is refused.
    const stranger = await server.bootstrap({ namespace: 'elsewhere', queues: ['q'] });
    expect((await list(stranger.token, subscription.id)).json.error.code).toBe('NOT_FOUND');
    const blind = await server.bootstrap({ namespace: 'sessions', application: 'blind', queues: ['q'], permissions: ['events:consume'] });
    expect((await list(blind.token, subscription.id)).json.error.code).toBe('PERMISSION_DENIED');
    expect((await list(boot.token, 'not-an-id')).status).toBe(404);

    const { text } = await scrape(server.url);
    expect(sample(text, 'orbit_cluster_nodes')).toBe(1);
    expect(sample(text, 'orbit_cluster_sessions')).toBe(2);
    expect(sample(text, 'orbit_cluster_backlog')).toBe(4);
    expect(sample(text, 'orbit_subscription_sessions', { subscription_id: subscription.id, queue_id: queueId })).toBe(2);
    expect(sample(text, 'orbit_subscription_sessions', { subscription_id: other.id, queue_id: queueId })).toBe(0);

    // A session that closes leaves the list.
    first.close();
    await eventually(async () => (await list(boot.token, subscription.id)).json.data.items.length === 1, 10_000, 'one session left');
    for (const socket of sockets) expect(socket.invalid).toEqual([]);
  });
});

describe('connected sessions across three orbit serve processes on one MySQL database', () => {
  it('every node lists every session and counts it once; a killed node’s sessions leave within the node timeout', async () => {
    const database = await freshDatabase('mysql');
    const store = await Store.open(database.url);
    try {
      await crossNodeViews([database.url, database.url, database.url], store);
    } finally {
      await store.close();
      await database.drop();
    }
  });
});

/**
 * Several `orbit serve` processes on one MySQL database behave as one system (docs/scaling.md, 1.
 * Stateless nodes on one database): consumers spread across three nodes, 5,000 results, every
 * result delivered and ACKED, no delivery leased to two sessions at once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Store } from '../src/store/store.ts';
import { api, eventually, freshDatabase, type ServerProcess, spawnServer, type TestDatabase, TestSocket } from '@orbit/testing';

const RESULTS = 5000;
const TASK = '66666666666666666666666666666666';

describe('three nodes on one MySQL database', () => {
  let database: TestDatabase;
  let store: Store;
  const nodes: ServerProcess[] = [];

  beforeAll(async () => {
    database = await freshDatabase('mysql');
    store = await Store.open(database.url);
    for (let i = 0; i < 3; i++) nodes.push(await spawnServer(database.url, { ORBIT_POLL_INTERVAL_MS: '50', ORBIT_MAX_CONNECTIONS: '4' }));
  });
  afterAll(async () => {
    await Promise.all(nodes.map((n) => n.stop()));
    await store.close();
    await database.drop();
  });

  it('delivers every result exactly once across nodes and ACKs all of them', async () => {
    const boot = await store.bootstrap({
      namespace: 'multi',
      application: 'app',
      queues: ['q'],
      permissions: ['events:manage', 'events:read', 'events:consume'],
    });
    const queueId = boot.queue_ids.q!;
    const created = await api(nodes[0]!.url, 'POST', '/v1/subscriptions', {
      token: boot.token,
      key: 'multi',
      body: { name: 'multi', queue_id: queueId, max_pending: 1000 },
      expect: 'validateSubscriptionResult',
    });
    const subscriptionId = created.json.data.subscription.id as string;

    // Two competing consumers per node, six in all, on one subscription.
    const sockets: TestSocket[] = [];
    for (const node of nodes) {
      for (let i = 0; i < 2; i++) {
        const socket = await TestSocket.open(node.url, boot.token);
        await socket.hello(subscriptionId, 16);
        sockets.push(socket);
      }
    }
    // Per-node limits stay per node: a fifth connection to one node is refused.
    const extra = await Promise.all([TestSocket.open(nodes[0]!.url, boot.token), TestSocket.open(nodes[0]!.url, boot.token)]);
    const refused: any = await TestSocket.open(nodes[0]!.url, boot.token).catch((e) => e);
    expect(refused.status).toBe(429);
    for (const s of extra) s.close();

    for (let i = 0; i < RESULTS; i += 250) {
      const batch = Array.from({ length: Math.min(250, RESULTS - i) }, (_, j) => ({
        queueId,
        type: 'task.succeeded' as const,
        taskId: TASK,
        taskRevision: String(i + j + 1),
      }));
      await store.appendResults(batch);
    }

    const deliveredTo = new Map<string, number>();
    const acks: Promise<unknown>[] = [];
    let duplicates = 0;
    await eventually(
      async () => {
        sockets.forEach((socket, index) => {
          for (const frame of socket.frames.splice(0)) {
            if (frame.type !== 'event.deliver') continue;
            const id = frame.body.delivery.id as string;
            if (deliveredTo.has(id)) duplicates++;
            deliveredTo.set(id, index);
            acks.push(socket.ack(frame).then((reply) => expect(reply.type).toBe('ack')));
          }
        });
        return deliveredTo.size >= RESULTS;
      },
      90_000,
      'all deliveries',
    );
    await Promise.all(acks);
    expect(duplicates).toBe(0);
    expect(new Set(deliveredTo.values()).size).toBeGreaterThanOrEqual(3);
    for (const socket of sockets) {
      expect(socket.invalid).toEqual([]);
      socket.close();
    }
    const [row] = await store.db.all(
      "SELECT COUNT(*) AS total, SUM(CASE WHEN state = 'ACKED' THEN 1 ELSE 0 END) AS acked FROM deliveries WHERE subscription_id = ?",
      [subscriptionId],
    );
    expect(Number(row!.total)).toBe(RESULTS);
    expect(Number(row!.acked)).toBe(RESULTS);
  }, 180_000);
});

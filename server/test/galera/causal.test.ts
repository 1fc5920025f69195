/**
 * Reads through one Galera node see what was committed through another just before: three servers,
 * each on its own node. A credential made through node 1 authenticates at once on node 2; a
 * subscription created through node 2 binds a session at once on node 3; an ACK sent through the
 * next node right after its `event.deliver` is accepted, never DELIVERY_LEASE_LOST. Without causal
 * reads (`wsrep_sync_wait`) each of these can see the node's state before the write arrived.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Store } from '../../src/store/store.ts';
import { api, eventually, type Frame, startTestServer, subscribe, type TestServer, TestSocket } from '@orbit/testing';
import { clusterDatabase, type ClusterDatabase } from './cluster.ts';

const ROUNDS = 40;
const RESULTS = 300;
const TASK = '77777777777777777777777777777777';

describe('causal reads across Galera nodes', () => {
  let database: ClusterDatabase;
  let store: Store;
  const servers: TestServer[] = [];
  const sockets: TestSocket[] = [];

  beforeAll(async () => {
    database = await clusterDatabase();
    store = await Store.open(database.urls[0]!);
    for (const url of database.urls) {
      servers.push(
        await startTestServer(
          'mysql',
          { ORBIT_POLL_INTERVAL_MS: '50', ORBIT_LEASE_DURATION_MS: '2000' },
          { url, name: database.name, drop: async () => {} },
        ),
      );
    }
  });
  afterAll(async () => {
    for (const socket of sockets) socket.close();
    for (const server of servers) await server.stop();
    await store?.close();
    await database?.drop();
  });

  it('a credential and a subscription made through one node are usable at once through the others', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const [first, second, third] = [0, 1, 2].map((k) => servers[(round + k) % 3]!);
      const boot = await first!.bootstrap({ namespace: `causal${round}`, queues: ['q'] });
      const queueId = boot.queue_ids.q!;
      const subscription = await subscribe(second!.url, boot.token, queueId);
      const socket = await TestSocket.open(third!.url, boot.token);
      sockets.push(socket);
      const welcome = await socket.hello(subscription.id, 1);
      expect(welcome.type, JSON.stringify(welcome)).toBe('events.welcome');
      socket.close();
    }
  });

  it('an ACK sent through another node right after the event.deliver is accepted', async () => {
    const boot = await servers[0]!.bootstrap({ namespace: 'acks', queues: ['q'] });
    const queueId = boot.queue_ids.q!;
    const subscription = await subscribe(servers[0]!.url, boot.token, queueId, { max_pending: 1000 });
    const ring: TestSocket[] = [];
    for (const server of servers) {
      const socket = await TestSocket.open(server.url, boot.token);
      sockets.push(socket);
      ring.push(socket);
      expect((await socket.hello(subscription.id, 32)).type).toBe('events.welcome');
    }
    const batch = Array.from({ length: RESULTS }, (_, i) => ({
      queueId,
      type: 'task.succeeded' as const,
      taskId: TASK,
      taskRevision: `${i + 1}`,
    }));
    await store.appendResults(batch);
    const replies: Promise<Frame>[] = [];
    const delivered = new Set<string>();
    await eventually(
      () => {
        ring.forEach((socket, index) => {
          for (const frame of socket.frames.splice(0)) {
            if (frame.type !== 'event.deliver') continue;
            delivered.add(frame.body.delivery.id);
            // The proof travels to the next node, which did not write the lease.
            replies.push(ring[(index + 1) % ring.length]!.ack(frame));
          }
        });
        return delivered.size >= RESULTS;
      },
      60_000,
      'every delivery',
    );
    const answers = await Promise.all(replies);
    const verdicts = answers.map((a) => (a.type === 'ack' ? `ack deduplicated=${a.body.deduplicated}` : `${a.type} ${a.error?.code}`));
    expect(verdicts.filter((v) => v !== 'ack deduplicated=false')).toEqual([]);
    expect(answers).toHaveLength(RESULTS);
    for (const socket of ring) expect(socket.invalid).toEqual([]);
    const [row] = await store.db.all("SELECT COUNT(*) AS acked FROM deliveries WHERE subscription_id = ? AND state = 'ACKED'", [
      subscription.id,
    ]);
    expect(Number(row!.acked)).toBe(RESULTS);
  });

  it('management reads through another node see a write at once', async () => {
    const boot = await servers[0]!.bootstrap({ namespace: 'reads', queues: ['q'] });
    const queueId = boot.queue_ids.q!;
    for (let round = 0; round < ROUNDS; round++) {
      const subscription = await subscribe(servers[round % 3]!.url, boot.token, queueId);
      const read = await api(servers[(round + 1) % 3]!.url, 'GET', `/v1/subscriptions/${subscription.id}`, { token: boot.token });
      expect(read.status, read.text).toBe(200);
    }
  });
});

/**
 * The cross-node head poll (server/src/events/gateway.ts; spec/README.md, "The event engine"): a
 * node looks at the committed head every `poll_interval_ms` only while one of its sessions could
 * take a delivery. With no session, or only full ones, it sends no head query; with one waiting, a
 * result published through another node is delivered to it. Head queries are counted by wrapping
 * the node's store.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publish, startTestServer, STORES, subscribe, type TestServer, TestSocket } from '@orbit/testing';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.each(STORES)('the head poll on %s', (kind) => {
  /** Node A holds the consumer; node B, on the same database, takes the publishes. */
  let a: TestServer;
  let b: TestServer;
  let headQueries = 0;

  beforeAll(async () => {
    a = await startTestServer(kind, { ORBIT_POLL_INTERVAL_MS: '10', ORBIT_LEASE_DURATION_MS: '60000' });
    b = await startTestServer(kind, {}, a.database);
    const store = a.orbit.store;
    const logPosition = store.logPosition.bind(store);
    store.logPosition = () => {
      headQueries++;
      return logPosition();
    };
  });
  afterAll(async () => {
    await b?.stop();
    await a?.stop();
  });

  /** Head queries node A sends during `ms`. */
  async function countDuring(ms: number): Promise<number> {
    const before = headQueries;
    await sleep(ms);
    return headQueries - before;
  }

  it('sends no head query without a session, polls while one waits, and stops while it is full', async () => {
    const boot = await a.bootstrap({ namespace: 'poll' });
    const queueId = boot.queue_ids.q!;
    const subscription = await subscribe(a.url, boot.token, queueId);
    expect(await countDuring(500)).toBe(0);

    const socket = await TestSocket.open(a.url, boot.token);
    try {
      expect((await socket.hello(subscription.id, 1)).type).toBe('events.welcome');
      expect(await countDuring(500)).toBeGreaterThan(0);

      // Published through node B: node A learns of it only from the committed head.
      await publish(b.url, boot.token, queueId);
      const delivered = await socket.deliver(5000);
      expect(delivered.body.event.type).toBe('task.succeeded');
      // Capacity 1 and one lease held: the session cannot take more, so the node stops looking.
      await sleep(50);
      expect(await countDuring(500)).toBe(0);
      await socket.ack(delivered);
      await sleep(50);
      expect(await countDuring(500)).toBeGreaterThan(0);
    } finally {
      socket.close();
    }
    await sleep(100);
    expect(await countDuring(500)).toBe(0);
  });

  it("sends no head query while the node's own appends show it the head, and still delivers what another node publishes", async () => {
    // A node of its own with a 50 ms interval, so that its appends (every few ms, even on a loaded
    // machine) come well inside it; a poll every 50 ms would send about 10 queries in 500 ms.
    const c = await startTestServer(kind, { ORBIT_POLL_INTERVAL_MS: '50', ORBIT_LEASE_DURATION_MS: '60000' }, a.database);
    let queries = 0;
    const logPosition = c.orbit.store.logPosition.bind(c.orbit.store);
    c.orbit.store.logPosition = () => {
      queries++;
      return logPosition();
    };
    const boot = await c.bootstrap({ namespace: 'own-appends', queues: ['q', 'busy'] });
    const subscription = await subscribe(c.url, boot.token, boot.queue_ids.q!);
    const socket = await TestSocket.open(c.url, boot.token);
    let appending = true;
    const appender = (async () => {
      for (let i = 0; appending && i < 5_000; i++) {
        await c.orbit.store.appendResults([
          { queueId: boot.queue_ids.busy!, type: 'task.succeeded', taskId: 'a'.repeat(32), taskRevision: String(i + 1) },
        ]);
        await sleep(2);
      }
    })();
    try {
      expect((await socket.hello(subscription.id, 8)).type).toBe('events.welcome');
      await sleep(200);
      const before = queries;
      await sleep(500);
      expect(queries - before).toBeLessThan(4);
      // Published through node B: node C learns of it from the head its next own append shows.
      await publish(b.url, boot.token, boot.queue_ids.q!);
      const delivered = await socket.deliver(5000);
      expect(delivered.body.event.type).toBe('task.succeeded');
    } finally {
      appending = false;
      await appender;
      socket.close();
      await c.stop();
    }
  });
});

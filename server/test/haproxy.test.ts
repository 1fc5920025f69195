/**
 * Orbit behind HAProxy, as deployed (docs/operations.md, "HAProxy"): three `orbit serve` nodes on
 * one MariaDB database behind Debian's haproxy running the repository's `deploy/haproxy/orbit.cfg`.
 * The example consumer (a MySQL Inbox) and the publisher talk only to the balancer. While results
 * flow, each node in turn is drained by SIGTERM and started again: a rolling restart. The
 * consumer's connections end with 1001 and it reconnects through the balancer to a node that is
 * up, re-sending the proofs it holds. At the end every result was handled once and the history
 * check (testing/src/history.ts) passes.
 */
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ackedCount,
  api,
  checkHistory,
  eventually,
  freePort,
  freshDatabase,
  handledByExample,
  HistoryLog,
  haproxyMissing,
  openStore,
  type HaproxyProcess,
  publishUntilAnswered,
  type ServerProcess,
  spawnExampleConsumer,
  type Store,
  spawnServer,
  startOrbitBalancer,
  TASK,
  type TestDatabase,
} from '@orbit/testing';

const RESULTS = 600;
const SERVER_ENV = { ORBIT_LEASE_DURATION_MS: '3000', ORBIT_POLL_INTERVAL_MS: '50' };

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('three nodes behind HAProxy, restarted one by one while results flow (MySQL)', () => {
  let orbitDb: TestDatabase;
  let inboxDb: TestDatabase;
  let store: Store;
  const ports: number[] = [];
  const nodes: (ServerProcess | null)[] = [null, null, null];
  let balancer: HaproxyProcess | null = null;
  let consumer: ChildProcess | null = null;
  const consumerLog: string[] = [];

  beforeAll(async () => {
    // npm run test:cluster installs it (server/test/cluster/setup.ts).
    const missing = haproxyMissing();
    if (missing) throw new Error(missing);
    orbitDb = await freshDatabase('mysql');
    inboxDb = await freshDatabase('mysql');
    store = await openStore(orbitDb.url);
    for (let i = 0; i < 3; i++) ports.push(await freePort());
    await Promise.all(ports.map(async (port, i) => (nodes[i] = await spawnServer(orbitDb.url, SERVER_ENV, 20_000, `127.0.0.1:${port}`))));
  });

  afterAll(async () => {
    consumer?.kill('SIGKILL');
    balancer?.stop();
    await Promise.all(nodes.map((n) => n?.stop('SIGKILL')));
    await store.close();
    await orbitDb.drop();
    await inboxDb.drop();
  });

  it('delivers and ACKs every result once through the balancer while every node is drained in turn', async () => {
    balancer = await startOrbitBalancer(ports.map((port) => `127.0.0.1:${port}`));
    const lb = balancer.url;
    const history = new HistoryLog();

    const boot = await store.bootstrap({
      namespace: 'lb',
      application: 'app',
      queues: ['q'],
      permissions: ['events:manage', 'events:read', 'events:consume', 'results:publish'],
    });
    const queueId = boot.queue_ids.q!;
    const created = await api(lb, 'POST', '/v1/subscriptions', {
      token: boot.token,
      key: 'lb',
      body: { name: 'lb', queue_id: queueId, max_pending: 1000 },
    });
    expect(created.status).toBe(201);
    const subscriptionId = created.json.data.subscription.id as string;

    consumer = spawnExampleConsumer({ url: lb, token: boot.token, subscriptionId, inbox: inboxDb.url }, consumerLog);

    // Publish through the balancer, each key until it is answered: a request a draining node
    // refused or cut goes again (its key makes the repeat safe).
    const publishing = (async () => {
      for (let n = 0; n < RESULTS; n++) {
        const body = { type: 'task.succeeded', task_id: TASK, task_revision: String(n + 1) };
        await publishUntilAnswered([lb], { token: boot.token, queueId, key: `lb-${n}`, body, history });
        if (n % 10 === 0) await sleep(20);
      }
    })();

    // A rolling restart: each node drained by SIGTERM (it exits 0), then started on its port again.
    const acked = () => ackedCount(store.db, subscriptionId);
    const ackedBefore: number[] = [];
    for (let i = 0; i < 3; i++) {
      // Each drain lands mid-stream: the consumer has ACKed more since the last one.
      const floor = (ackedBefore.at(-1) ?? 0) + 30;
      await eventually(async () => (await acked()) >= floor, 30_000, `${floor} deliveries ACKED before draining node ${i + 1}`);
      ackedBefore.push(await acked());
      history.mark(`draining node ${i + 1}`);
      expect(await nodes[i]!.stop('SIGTERM')).toBe(0);
      nodes[i] = await spawnServer(orbitDb.url, SERVER_ENV, 20_000, `127.0.0.1:${ports[i]}`);
    }
    await publishing;
    // Results were flowing and being consumed across the restarts.
    expect(ackedBefore[0]).toBeGreaterThan(0);
    expect(ackedBefore[2]).toBeLessThan(RESULTS);

    await eventually(
      async () => (await acked()) === RESULTS,
      60_000,
      `all ${RESULTS} deliveries ACKED (consumer: ${consumerLog.join('').slice(-1500)}; haproxy: ${balancer.log.join('').slice(-1500)})`,
    );
    await sleep(500); // the consumer's last `acked` lines: it prints them after the database committed
    history.exampleConsumer(consumerLog);
    expect((await checkHistory('three nodes behind HAProxy, rolling restart', history, store.db, subscriptionId)).failures).toEqual([]);
    expect(await handledByExample(inboxDb.url)).toEqual({ rows: RESULTS, events: RESULTS });
    // The consumer was moved: its connections ended with the drains and it connected again.
    const reconnects = consumerLog
      .join('')
      .split('\n')
      .filter((line) => line.includes('"reconnecting"'));
    expect(reconnects.length).toBeGreaterThan(0);
  }, 180_000);
});

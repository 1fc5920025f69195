/**
 * Galera behind one writer (docs/operations.md, "Galera behind one writer"): three `orbit serve`
 * nodes reach the cluster through Debian's haproxy running `deploy/haproxy/galera-writer.cfg`, which
 * sends every connection to Galera node 1 while `galera-check.sh` finds it Primary and Synced. While
 * results flow, node 1 is SIGKILLed: the proxy cuts its sessions and moves every connection to node
 * 2, and Orbit's transactions and the consumer carry on there. Node 1 is started again and, once
 * Synced, is the writer again. The example consumer (a MySQL Inbox on the machine's MariaDB) and
 * the publishers only talk to the Orbit nodes. At the end every result was handled once and the
 * history check (testing/src/history.ts) passes.
 */
import type { ChildProcess } from 'node:child_process';
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Store } from '../../src/store/store.ts';
import {
  ackedCount,
  checkHistory,
  eventually,
  freshDatabase,
  handledByExample,
  HistoryLog,
  haproxyMissing,
  type HaproxyProcess,
  publishUntilAnswered,
  type ServerProcess,
  spawnExampleConsumer,
  spawnServer,
  startWriterProxy,
  TASK,
  type TestDatabase,
} from '@orbit/testing';
import { clusterDatabase, galera, NODE_URLS, type ClusterDatabase } from './cluster.ts';

const RESULTS = 600;
const ENV = { ORBIT_LEASE_DURATION_MS: '3000', ORBIT_POLL_INTERVAL_MS: '50' };

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const address = (url: string) => new URL(url).host;

describe('Orbit through one Galera writer behind HAProxy, with the writer killed mid-stream', () => {
  let database: ClusterDatabase;
  let inboxDb: TestDatabase;
  let proxyUrl: string;
  let store: Store;
  let balancer: HaproxyProcess | null = null;
  let consumer: ChildProcess | null = null;
  const nodes: ServerProcess[] = [];
  const consumerLog: string[] = [];

  /** The SQL port of the Galera node the proxy sends a new connection to. */
  async function writerPort(): Promise<number> {
    const conn = await mysql.createConnection({ uri: proxyUrl });
    try {
      const [rows] = await conn.query<mysql.RowDataPacket[]>('SELECT @@port AS port');
      return Number(rows[0]!.port);
    } finally {
      await conn.end();
    }
  }

  beforeAll(async () => {
    // The suite's global setup installs it (server/test/galera/setup.ts); run alone, say how.
    const missing = haproxyMissing();
    if (missing) throw new Error(missing);
    database = await clusterDatabase();
    inboxDb = await freshDatabase('mysql');
    balancer = await startWriterProxy(NODE_URLS.map(address));
    proxyUrl = balancer.url;
    await eventually(
      async () => (await writerPort().catch(() => 0)) === Number(new URL(NODE_URLS[0]!).port),
      10_000,
      'the proxy answering with node 1',
    );
    store = await Store.open(`${proxyUrl}/${database.name}`);
    for (let i = 0; i < 3; i++) nodes.push(await spawnServer(`${proxyUrl}/${database.name}`, ENV));
  });

  afterAll(async () => {
    consumer?.kill('SIGKILL');
    await Promise.all(nodes.map((n) => n.stop('SIGKILL')));
    await store?.close();
    balancer?.stop();
    await database?.drop();
    await inboxDb?.drop();
  });

  it('moves every connection to the next node when the writer dies, and delivers and ACKs every result once', async () => {
    const ports = NODE_URLS.map((url) => Number(new URL(url).port));
    const boot = await store.bootstrap({
      namespace: 'writer',
      application: 'app',
      queues: ['q'],
      permissions: ['events:manage', 'events:read', 'events:consume', 'results:publish'],
    });
    const queueId = boot.queue_ids.q!;
    const headers = (key: string) => ({
      authorization: `Bearer ${boot.token}`,
      'idempotency-key': key,
      'content-type': 'application/json',
    });
    const created = await fetch(`${nodes[0]!.url}/v1/subscriptions`, {
      method: 'POST',
      headers: headers('writer'),
      body: JSON.stringify({ name: 'writer', queue_id: queueId, max_pending: 1000 }),
    });
    expect(created.status).toBe(201);
    const subscriptionId = ((await created.json()) as { data: { subscription: { id: string } } }).data.subscription.id;

    consumer = spawnExampleConsumer({ url: nodes[1]!.url, token: boot.token, subscriptionId, inbox: inboxDb.url }, consumerLog);
    const history = new HistoryLog();

    // Publishers on every Orbit node, each key until it is answered (on the next node after a failure).
    const urls = nodes.map((n) => n.url);
    const publishing = (async () => {
      for (let n = 0; n < RESULTS; n++) {
        const body = { type: 'task.succeeded', task_id: TASK, task_revision: String(n + 1) };
        await publishUntilAnswered([...urls.slice(n % 3), ...urls.slice(0, n % 3)], {
          token: boot.token,
          queueId,
          key: `writer-${n}`,
          body,
          history,
          pauseMs: 100,
        });
        if (n % 10 === 0) await sleep(20);
      }
    })();

    const acked = () => ackedCount(store.db, subscriptionId);
    await eventually(async () => (await acked()) >= RESULTS / 5, 60_000, 'a fifth of the results ACKED');
    history.mark('the writer killed');
    await galera('kill', '1');
    const ackedAtKill = await acked().catch(() => -1);
    // The proxy finds node 1 gone and sends new connections to node 2.
    await eventually(async () => (await writerPort().catch(() => 0)) === ports[1], 30_000, 'the proxy moving to node 2');
    await eventually(
      async () => (await acked().catch(() => 0)) >= Math.max(ackedAtKill, 0) + RESULTS / 10,
      60_000,
      'results ACKED through node 2',
    );
    history.mark('the writer restarted');
    await galera('restart', '1');
    await eventually(async () => (await writerPort().catch(() => 0)) === ports[0], 30_000, 'node 1 the writer again');
    await publishing;

    await eventually(
      async () => (await acked().catch(() => 0)) === RESULTS,
      90_000,
      `all ${RESULTS} deliveries ACKED (${consumerLog.join('').slice(-1500)}; haproxy: ${balancer!.log.join('').slice(-1000)})`,
    );
    expect(ackedAtKill).toBeLessThan(RESULTS);
    await sleep(500); // the consumer's last `acked` lines: it prints them after the database committed
    history.exampleConsumer(consumerLog);
    expect((await checkHistory('one Galera writer behind HAProxy, writer killed', history, store.db, subscriptionId)).failures).toEqual([]);
    expect(await handledByExample(inboxDb.url)).toEqual({ rows: RESULTS, events: RESULTS });
  });
});

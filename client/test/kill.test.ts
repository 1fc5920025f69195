/**
 * Crash safety with real processes (spec/rules.md#s0-1, a verification that kills real processes):
 * an `orbit serve` process and the example consumer with a MySQL Inbox. While 2,000 results are
 * published, the consumer is killed with SIGKILL at random points five times and the server twice,
 * each restarted. At the end every result is in the Inbox exactly once, every delivery is ACKED,
 * and the handler's business row exists once per event id.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, type Store } from '@orbit/testing';
import { api, eventually, freePort, freshDatabase, type ServerProcess, spawnServer, TASK, type TestDatabase } from '@orbit/testing';

const RESULTS = 2000;
const CONSUMER = fileURLToPath(new URL('../examples/consume-results.ts', import.meta.url));
const SERVER_ENV = { ORBIT_LEASE_DURATION_MS: '1500', ORBIT_POLL_INTERVAL_MS: '50' };

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const between = (min: number, max: number) => min + Math.floor(Math.random() * (max - min));

describe('SIGKILL of the consumer and the server (MySQL)', () => {
  let orbitDb: TestDatabase;
  let inboxDb: TestDatabase;
  let store: Store;
  let server: ServerProcess | null = null;
  let consumer: ChildProcess | null = null;
  const log: string[] = [];

  beforeAll(async () => {
    orbitDb = await freshDatabase('mysql');
    inboxDb = await freshDatabase('mysql');
    // freshDatabase creates both: the Inbox database must exist before the consumer connects to it.
    store = await openStore(orbitDb.url);
  });

  afterAll(async () => {
    consumer?.kill('SIGKILL');
    await server?.stop('SIGKILL');
    await store.close();
    await orbitDb.drop();
    await inboxDb.drop();
  });

  it('ends with every result in the Inbox exactly once and every delivery ACKED', async () => {
    const listen = `127.0.0.1:${await freePort()}`;
    server = await spawnServer(orbitDb.url, SERVER_ENV, 20_000, listen);
    const boot = await store.bootstrap({
      namespace: 'kill',
      application: 'app',
      queues: ['q'],
      permissions: ['events:manage', 'events:read', 'events:consume'],
    });
    const queueId = boot.queue_ids.q!;
    const created = await api(server.url, 'POST', '/v1/subscriptions', {
      token: boot.token,
      key: 'kill',
      body: { name: 'kill', queue_id: queueId, max_pending: 500 },
    });
    const subscriptionId = created.json.data.subscription.id as string;

    const startConsumer = () => {
      const child = spawn(process.execPath, ['--import', 'tsx', CONSUMER], {
        env: {
          ...process.env,
          ORBIT_URL: `http://${listen}`,
          ORBIT_TOKEN: boot.token,
          ORBIT_SUBSCRIPTION_ID: subscriptionId,
          ORBIT_INBOX: inboxDb.url,
          ORBIT_CAPACITY: '8',
          ORBIT_PING_INTERVAL_MS: '1000',
          ORBIT_HANDLER_DELAY_MS: '1',
          ORBIT_OUTPUT: 'json',
        },
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      child.stderr!.on('data', (chunk: Buffer) => log.push(chunk.toString()));
      return child;
    };
    consumer = startConsumer();

    // Publish in small batches while the killer works.
    const publishing = (async () => {
      for (let i = 0; i < RESULTS; i += 25) {
        await store.appendResults(
          Array.from({ length: 25 }, (_, j) => ({
            queueId,
            type: 'task.succeeded' as const,
            taskId: TASK,
            taskRevision: String(i + j + 1),
          })),
        );
        await sleep(between(5, 40));
      }
    })();

    const kills: string[] = [];
    const plan: Array<'consumer' | 'server'> = ['consumer', 'consumer', 'server', 'consumer', 'consumer', 'server', 'consumer'];
    for (const target of plan) {
      await sleep(between(300, 1200));
      if (target === 'consumer') {
        const exited = new Promise((resolve) => consumer!.once('exit', resolve));
        consumer!.kill('SIGKILL');
        await exited;
        kills.push('consumer');
        await sleep(between(0, 300));
        consumer = startConsumer();
      } else {
        await server!.stop('SIGKILL');
        kills.push('server');
        await sleep(between(100, 500));
        server = await spawnServer(orbitDb.url, SERVER_ENV, 20_000, listen);
      }
    }
    await publishing;
    expect(kills.filter((k) => k === 'consumer')).toHaveLength(5);
    expect(kills.filter((k) => k === 'server')).toHaveLength(2);

    await eventually(
      async () => {
        const [row] = await store.db.all(
          "SELECT COUNT(*) AS total, SUM(CASE WHEN state = 'ACKED' THEN 1 ELSE 0 END) AS acked FROM deliveries WHERE subscription_id = ?",
          [subscriptionId],
        );
        return Number(row!.total) === RESULTS && Number(row!.acked) === RESULTS;
      },
      90_000,
      `all ${RESULTS} deliveries ACKED (consumer log: ${log.join('').slice(-2000)})`,
    );

    const inbox = await mysql.createConnection({ uri: inboxDb.url });
    try {
      const [business] = (await inbox.query('SELECT COUNT(*) AS n, COUNT(DISTINCT event_id) AS events FROM example_results')) as any;
      expect(Number(business[0].n)).toBe(RESULTS);
      expect(Number(business[0].events)).toBe(RESULTS);
      const [ids] = (await inbox.query('SELECT event_id FROM example_results')) as any;
      const published = await store.db.all('SELECT id FROM results WHERE queue_id = ?', [queueId]);
      expect(new Set(ids.map((r: any) => String(r.event_id)))).toEqual(new Set(published.map((r) => String(r.id))));
    } finally {
      await inbox.end();
    }
  }, 240_000);
});

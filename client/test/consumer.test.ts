/**
 * The automatic consumer end to end, against a real server on both stores: every published
 * result is handled exactly once and every delivery ends ACKED, also when the connection is cut
 * in the middle (through a TCP proxy) and when an ACK is in flight at the cut; a proof stored by
 * an earlier run is re-reported; a retired subscription stops the consumer with NOT_FOUND.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type Database from 'better-sqlite3';
import mysql from 'mysql2/promise';
import type { PoolConnection } from 'mysql2/promise';
import { eventually, freshDatabase, MYSQL_ROOT, startTestServer, STORES } from '@orbit/testing';
import {
  connectEvents,
  createClient,
  createEventConsumer,
  OrbitError,
  RawJson,
  type ConsumerEvent,
  type EventConsumer,
  type EventConsumerOptions,
  type Inbox,
} from '../src/index.ts';
import { MysqlInbox } from '../src/inbox/mysql.ts';
import { SqliteInbox } from '../src/inbox/sqlite.ts';
import { id, key, name, CuttingProxy, setup, type Setup } from './support.ts';

const LEASE_MS = 1500;

describe.each(STORES)('event consumer on %s', (kind) => {
  let env: Setup;
  let dir: string;
  const cleanup: Array<() => Promise<unknown> | unknown> = [];

  beforeAll(async () => {
    env = await setup(kind, { ORBIT_LEASE_DURATION_MS: String(LEASE_MS) });
    dir = mkdtempSync(join(tmpdir(), 'orbit-consumer-it-'));
  });
  afterEach(async () => {
    for (const step of cleanup.splice(0).reverse()) await step();
  });
  afterAll(async () => {
    await env.server.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  async function subscription(): Promise<string> {
    return (await env.client.createSubscription(key(), { name: name(), queue_id: env.queueId })).subscription.id;
  }

  /** Publishes `n` results whose result holds a number beyond double precision; returns the event ids. */
  async function publish(n: number): Promise<Map<string, string>> {
    const texts = new Map<string, string>();
    for (let i = 0; i < n; i++) {
      const text = `{"index":${i},"big":${String(10n ** 25n + BigInt(i))}}`;
      const published = await env.client.publishResult(env.queueId, key('p'), {
        type: 'task.succeeded',
        task_id: id(),
        task_revision: '1',
        result: new RawJson(text),
      });
      texts.set(published.event.id, text);
    }
    return texts;
  }

  function sqliteInbox(): SqliteInbox {
    const inbox = new SqliteInbox({ path: join(dir, `inbox-${randomBytes(4).toString('hex')}.db`) });
    inbox.database.exec('CREATE TABLE IF NOT EXISTS handled (event_id TEXT NOT NULL, result TEXT NOT NULL)');
    cleanup.push(() => inbox.close());
    return inbox;
  }

  function consume<Tx>(
    options: Omit<EventConsumerOptions<Tx>, 'baseUrl' | 'token' | 'capacity'> &
      Partial<Pick<EventConsumerOptions<Tx>, 'baseUrl' | 'capacity'>>,
    events: ConsumerEvent[],
  ): EventConsumer<Tx> {
    const consumer = createEventConsumer<Tx>({
      baseUrl: env.server.url,
      token: env.token,
      capacity: 8,
      pingIntervalMs: 300,
      backoff: { initialDelayMs: 20, maxDelayMs: 200 },
      onEvent: (e) => events.push(e),
      ...options,
    });
    cleanup.push(() => consumer.stop({ timeoutMs: 2000 }));
    return consumer;
  }

  async function expectAllAcked(subscriptionId: string, count: number): Promise<void> {
    await eventually(
      async () => {
        const states: string[] = [];
        for await (const d of env.client.iterateEventDeliveries(subscriptionId, { limit: 100 })) states.push(d.state);
        return states.length === count && states.every((s) => s === 'ACKED');
      },
      LEASE_MS * 8,
      `all ${count} deliveries ACKED`,
    );
  }

  function handlerFor(calls: Map<string, number>) {
    return ({ event, tx }: { event: { id: string; snapshot: { result?: RawJson } }; tx: Database.Database }) => {
      calls.set(event.id, (calls.get(event.id) ?? 0) + 1);
      tx.prepare('INSERT INTO handled (event_id, result) VALUES (?, ?)').run(event.id, event.snapshot.result?.text ?? 'null');
    };
  }

  it('MUST handle 50 published results exactly once with a SqliteInbox, and leave every delivery ACKED', async () => {
    const sub = await subscription();
    const inbox = sqliteInbox();
    const calls = new Map<string, number>();
    const events: ConsumerEvent[] = [];
    const consumer = consume<Database.Database>({ subscriptionId: sub, inbox, handler: handlerFor(calls) }, events);
    const texts = await publish(50);
    await eventually(() => consumer.stats.acked >= 50, 20_000, '50 ACKs');
    await expectAllAcked(sub, 50);
    expect(await consumer.stop({ timeoutMs: 2000 })).toEqual({ drained: true, abandoned: 0 });
    expect([...calls.values()].every((n) => n === 1)).toBe(true);
    expect(new Set(calls.keys())).toEqual(new Set(texts.keys()));
    const rows = inbox.database.prepare('SELECT event_id, result FROM handled').all() as Array<{ event_id: string; result: string }>;
    expect(rows).toHaveLength(50);
    for (const row of rows) expect(row.result).toBe(texts.get(row.event_id)); // byte-exact
    expect(await inbox.pendingAcks()).toEqual([]);
    expect(events.filter((e) => e.type === 'connected')).toHaveLength(1);
  });

  it('MUST NOT run a handler twice when the connection is cut mid-stream, even with an ACK in flight; stored proofs are re-reported', async () => {
    const proxy = await CuttingProxy.start(env.server.url);
    cleanup.push(() => proxy.close());
    const sub = await subscription();
    const inbox = sqliteInbox();
    const calls = new Map<string, number>();
    const events: ConsumerEvent[] = [];
    let cuts = 0;
    const consumer = consume<Database.Database>(
      {
        baseUrl: proxy.url,
        subscriptionId: sub,
        inbox,
        handler: handlerFor(calls),
        onEvent: (e) => {
          events.push(e);
          // Cut the connection right after a commit, while its ACK is about to be sent.
          if (e.type === 'handled' && (calls.size === 10 || calls.size === 30) && cuts < 2) {
            cuts++;
            proxy.dropAll();
          }
        },
      },
      events,
    );
    const texts = await publish(50);
    await eventually(() => new Set(calls.keys()).size === 50, 30_000, '50 handled events');
    await expectAllAcked(sub, 50);
    await eventually(async () => (await inbox.pendingAcks()).length === 0, 10_000, 'no stored proof left');
    await consumer.stop({ timeoutMs: 2000 });
    expect(cuts).toBe(2);
    expect([...calls.entries()].filter(([, n]) => n !== 1)).toEqual([]);
    expect(new Set(calls.keys())).toEqual(new Set(texts.keys()));
    expect((inbox.database.prepare('SELECT COUNT(*) AS n FROM handled').get() as { n: number }).n).toBe(50);
    expect(events.filter((e) => e.type === 'connected').length).toBeGreaterThanOrEqual(3);
    expect(events.some((e) => e.type === 'reconnecting')).toBe(true);
    // The proofs whose ACK was cut off were stored and re-reported on a later connection.
    expect(events.some((e) => e.type === 'acked' && e.replayed)).toBe(true);
  });

  it('MUST re-report a proof stored by an earlier run when it connects, without running the handler', async () => {
    const sub = await subscription();
    const inbox = sqliteInbox();
    // An earlier run: received the delivery, committed it with its proof, and died before the ACK.
    const earlier = await connectEvents({ baseUrl: env.server.url, token: env.token, subscriptionId: sub, capacity: 1 });
    await publish(1);
    const iterator = earlier[Symbol.asyncIterator]();
    const d = (await iterator.next()).value!;
    await inbox.transaction(d.event.id, (tx) => handlerFor(new Map())({ event: d.event, tx }), {
      pendingAck: { ...d.proof, subscription_id: sub, event_id: d.event.id },
    });
    earlier.terminate();

    const calls = new Map<string, number>();
    const events: ConsumerEvent[] = [];
    consume<Database.Database>({ subscriptionId: sub, inbox, handler: handlerFor(calls) }, events);
    const acked = await eventually(
      () => events.find((e): e is Extract<ConsumerEvent, { type: 'acked' }> => e.type === 'acked'),
      10_000,
      'the replayed ACK',
    );
    expect(acked.replayed).toBe(true);
    expect(acked.proof).toMatchObject(d.proof);
    expect(acked.result).toMatchObject({ delivery_id: d.delivery.id, epoch: d.proof.epoch, deduplicated: false });
    expect((await env.client.getEventDelivery(sub, d.delivery.id)).delivery.state).toBe('ACKED');
    expect(await inbox.pendingAcks()).toEqual([]);
    expect(calls.size).toBe(0);
  });

  it('MUST handle each result once with a MysqlInbox, the business write committed in the same transaction', async () => {
    const database = `orbit_consumer_t_${randomBytes(6).toString('hex')}`;
    const admin = await mysql.createConnection({ uri: MYSQL_ROOT });
    cleanup.push(async () => {
      await admin.query(`DROP DATABASE IF EXISTS \`${database}\``);
      await admin.end();
    });
    await admin.query(`CREATE DATABASE \`${database}\``);
    await admin.query(
      `CREATE TABLE \`${database}\`.handled (id BIGINT AUTO_INCREMENT PRIMARY KEY, event_id CHAR(32) NOT NULL, result TEXT NOT NULL) ENGINE=InnoDB`,
    );
    const inbox: Inbox<PoolConnection> = await MysqlInbox.open({ uri: `${MYSQL_ROOT}/${database}` });
    cleanup.push(() => inbox.close());
    const sub = await subscription();
    const events: ConsumerEvent[] = [];
    const consumer = consume<PoolConnection>(
      {
        subscriptionId: sub,
        inbox,
        handler: async ({ event, tx }) => {
          await tx.execute('INSERT INTO handled (event_id, result) VALUES (?, ?)', [event.id, event.snapshot.result?.text ?? 'null']);
        },
      },
      events,
    );
    const texts = await publish(20);
    await eventually(() => consumer.stats.acked >= 20, 20_000, '20 ACKs');
    await expectAllAcked(sub, 20);
    const [rows] = await admin.query(`SELECT event_id, result FROM \`${database}\`.handled`);
    const handled = rows as Array<{ event_id: string; result: string }>;
    expect(handled).toHaveLength(20);
    for (const row of handled) expect(row.result).toBe(texts.get(row.event_id));
  });

  it('MUST stop with NOT_FOUND (and not reconnect) when the subscription is retired', async () => {
    const sub = await subscription();
    const events: ConsumerEvent[] = [];
    const consumer = consume<Database.Database>({ subscriptionId: sub, inbox: sqliteInbox(), handler: () => {} }, events);
    await eventually(() => consumer.state === 'connected', 5000, 'connected');
    const current = await env.client.getSubscription(sub);
    await env.client.retireSubscription(sub, key(), { expected_revision: current.revision, reason: 'done' });
    const error = (await consumer.done.catch((e: unknown) => e)) as OrbitError;
    expect(error).toBeInstanceOf(OrbitError);
    expect(error.code).toBe('NOT_FOUND');
    expect(consumer.state).toBe('stopped');
    expect(events.some((e) => e.type === 'reconnecting')).toBe(false);
    expect(events.at(-1)).toMatchObject({ type: 'stopped' });
  });
});

describe.each(STORES)('event consumer across a server restart on %s', (kind) => {
  it('MUST reconnect after the server restarts on the same database and handle every result exactly once', async () => {
    const database = await freshDatabase(kind);
    const env = { ORBIT_LEASE_DURATION_MS: String(LEASE_MS), ORBIT_POLL_INTERVAL_MS: '50' };
    let server = await startTestServer(kind, env, database);
    const proxy = await CuttingProxy.start(server.url);
    const dir = mkdtempSync(join(tmpdir(), 'orbit-restart-'));
    const inbox = new SqliteInbox({ path: join(dir, 'inbox.db') });
    let consumer: EventConsumer<Database.Database> | undefined;
    try {
      const boot = await server.bootstrap();
      const queueId = boot.queue_ids.q!;
      const client = createClient({
        baseUrl: proxy.url,
        token: boot.token,
        retry: { initialDelayMs: 50, maxDelayMs: 500, maxAttempts: 20 },
      });
      const sub = (await client.createSubscription(key(), { name: name(), queue_id: queueId })).subscription.id;
      const calls = new Map<string, number>();
      const events: ConsumerEvent[] = [];
      consumer = createEventConsumer<Database.Database>({
        baseUrl: proxy.url,
        token: boot.token,
        subscriptionId: sub,
        capacity: 4,
        inbox,
        handler: ({ event }) => void calls.set(event.id, (calls.get(event.id) ?? 0) + 1),
        backoff: { initialDelayMs: 20, maxDelayMs: 200 },
        onEvent: (e) => events.push(e),
      });
      const publish = async (n: number): Promise<void> => {
        for (let i = 0; i < n; i++)
          await client.publishResult(queueId, key('p'), { type: 'task.failed', task_id: id(), task_revision: '1' });
      };
      await publish(20);
      await eventually(() => calls.size >= 5, 10_000, 'some handled events');
      await server.close(); // the connection ends with 1001 while results are in flight
      server = await startTestServer(kind, env, database); // same database: same token, subscription and deliveries
      proxy.retarget(server.url);
      await publish(20);
      await eventually(() => calls.size === 40, 20_000, '40 handled events');
      await eventually(
        async () => {
          const states: string[] = [];
          for await (const d of client.iterateEventDeliveries(sub, { limit: 100 })) states.push(d.state);
          return states.length === 40 && states.every((s) => s === 'ACKED');
        },
        LEASE_MS * 10,
        'all deliveries ACKED',
      );
      expect([...calls.values()].every((n) => n === 1)).toBe(true);
      expect(events.filter((e) => e.type === 'connected').length).toBeGreaterThanOrEqual(2);
      expect(events.find((e) => e.type === 'reconnecting')).toMatchObject({ error: { code: 'UNAVAILABLE' } });
    } finally {
      await consumer?.stop({ timeoutMs: 2000 });
      await inbox.close();
      await proxy.close();
      await server.close();
      await database.drop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

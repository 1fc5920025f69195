/**
 * The claim that follows an ACK group in its transaction (server/src/store/acks.ts), over real
 * sockets on both stores: at capacity 1 the ACK's transaction leases the next delivery, so each
 * delivered event costs one durable commit; the lease still commits before `event.deliver` is
 * written (spec/rules.md#s6-1); and on MySQL an ACK never waits for another transaction's lock on
 * the subscription row: it commits, and the pool's own claim serves the session once the lock is
 * gone.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { publish, startTestServer, STORES, subscribe, type TestServer, TestSocket } from '@orbit/testing';
import type { Sql } from '../src/store/sql.ts';
import { Store } from '../src/store/store.ts';

/** Records the statements (with their parameters) of every transaction the server's store runs while `on`. */
function recordTransactions(server: TestServer): { on: boolean; transactions: string[][] } {
  const record = { on: false, transactions: [] as string[][] };
  const db = server.orbit.store.db;
  const transaction = db.transaction.bind(db);
  db.transaction = <T>(fn: (tx: Sql) => Promise<T>, options?: Parameters<typeof db.transaction>[1]) =>
    transaction((tx) => {
      if (!record.on) return fn(tx);
      const statements: string[] = [];
      record.transactions.push(statements);
      const traced: Sql = {
        dialect: tx.dialect,
        phrases: tx.phrases,
        galera: tx.galera,
        all: (sql, params) => {
          statements.push(`${sql} ${JSON.stringify(params ?? [])}`);
          return tx.all(sql, params);
        },
        run: (sql, params) => {
          statements.push(`${sql} ${JSON.stringify(params ?? [])}`);
          return tx.run(sql, params);
        },
      };
      return fn(traced);
    }, options);
  return record;
}

/** The transactions that name the subscription: its claims and the ACK groups that claim for it. */
const touching = (transactions: readonly string[][], subscriptionId: string) =>
  transactions.filter((t) => t.some((s) => s.includes(subscriptionId)));
const leases = (statements: readonly string[]) => statements.some((s) => s.startsWith("UPDATE deliveries SET state = 'LEASED'"));
const acks = (statements: readonly string[]) => statements.some((s) => s.startsWith("UPDATE deliveries SET state = 'ACKED'"));

describe.each(STORES)('ACK + claim on %s', (kind) => {
  let server: TestServer;
  let token: string;
  let queueId: string;
  let record: { on: boolean; transactions: string[][] };
  const sockets: TestSocket[] = [];

  beforeAll(async () => {
    server = await startTestServer(kind, { ORBIT_POLL_INTERVAL_MS: '50' });
    const boot = await server.bootstrap();
    token = boot.token;
    queueId = boot.queue_ids.q!;
    record = recordTransactions(server);
  });
  afterEach(() => {
    record.on = false;
    for (const s of sockets.splice(0)) {
      expect(s.invalid).toEqual([]);
      s.close();
    }
  });
  afterAll(async () => server?.stop());

  it('at capacity 1, the transaction of each ACK leases the next delivery: one commit per delivered event', async () => {
    const sub = await subscribe(server.url, token, queueId);
    const s = await TestSocket.open(server.url, token);
    sockets.push(s);
    await s.hello(sub.id, 1);
    await publish(server.url, token, queueId, 6);
    let deliver = await s.deliver();
    record.on = true;
    const seen = [deliver.body.event.sequence];
    for (let i = 0; i < 5; i++) {
      const reply = await s.ack(deliver);
      expect(reply.type).toBe('ack');
      deliver = await s.deliver();
      seen.push(deliver.body.event.sequence);
    }
    record.on = false;
    expect((await s.ack(deliver)).type).toBe('ack');
    // Six events in order, each once.
    expect(seen.map(BigInt)).toEqual([...seen.map(BigInt)].sort((a, b) => (a < b ? -1 : 1)));
    expect(new Set(seen).size).toBe(6);
    const engine = touching(record.transactions, sub.id).filter((t) => leases(t) || acks(t));
    // Five ACKs and five leases in five transactions: no lease in a transaction of its own.
    expect(engine.filter((t) => acks(t) && leases(t))).toHaveLength(5);
    expect(engine).toHaveLength(5);
  });

  it('an ACK that frees nothing (a lost lease) claims nothing in its transaction', async () => {
    const sub = await subscribe(server.url, token, queueId);
    const s = await TestSocket.open(server.url, token);
    sockets.push(s);
    await s.hello(sub.id, 1);
    await publish(server.url, token, queueId, 2);
    const deliver = await s.deliver();
    record.on = true;
    const lost = await s.ack(deliver, { lease_secret: `${'B'.repeat(42)}A` });
    expect(lost.error?.code).toBe('DELIVERY_LEASE_LOST');
    record.on = false;
    expect(touching(record.transactions, sub.id).filter(leases)).toHaveLength(0);
    // The connection still holds its delivery: nothing more arrives until it is acknowledged.
    await expect(s.deliver(300)).rejects.toThrow(/timed out/);
    expect((await s.ack(deliver)).type).toBe('ack');
    await s.ack(await s.deliver());
  });

  // Row locks are MySQL's: SQLite's single writer has no lock for an ACK to wait on, so the case
  // exists on MySQL only (rather than as a skipped case on SQLite).
  if (kind === 'mysql')
    it('an ACK does not wait for a lock on the subscription row; the pool claims once the lock is released', async () => {
      const sub = await subscribe(server.url, token, queueId);
      const s = await TestSocket.open(server.url, token);
      sockets.push(s);
      await s.hello(sub.id, 1);
      await publish(server.url, token, queueId, 2);
      const deliver = await s.deliver();
      const other = await Store.open(server.database.url);
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      let locked!: () => void;
      const lockTaken = new Promise<void>((resolve) => (locked = resolve));
      const holder = other.db.transaction(async (tx) => {
        await tx.all('SELECT id FROM subscriptions WHERE id = ? FOR UPDATE', [sub.id]);
        locked();
        await held;
      });
      try {
        await lockTaken;
        const started = Date.now();
        // A claim that waited for the lock would hold the ACK for as long as the lock is held.
        expect((await s.ack(deliver, {})).type).toBe('ack');
        expect(Date.now() - started).toBeLessThan(3000);
        await expect(s.deliver(300)).rejects.toThrow(/timed out/);
      } finally {
        release();
        await holder;
        await other.close();
      }
      await s.ack(await s.deliver());
    });
});

/**
 * The consumer's ordering and failure rules against an in-memory connection and a real
 * SqliteInbox on a temp file (no sockets): commit before ACK, proofs stored before sending and
 * deleted after the answer, duplicates skip the handler, DELIVERY_LEASE_LOST forgets the proof,
 * stored proofs are re-reported on reconnect, fatal codes stop, stop() drains; a token provider is
 * asked for every connection, and its new token after UNAUTHENTICATED gets one more; a refused
 * upgrade's Retry-After bounds the wait before the next attempt.
 *
 * Longer than 400 lines: every rule of the consumer's loop is checked through the one in-memory
 * harness below (`start`, the scripted connects, the recorded events); split, each file would
 * repeat it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { OrbitError } from '@orbit/spec/errors';
import { closedError, ConnectionClosedError, OrbitTransportError } from './errors.ts';
import { createEventConsumer, type ConsumerEvent, type EventConsumer, type EventConsumerOptions, type EventStream } from './consumer.ts';
import { SqliteInbox } from './inbox/sqlite.ts';
import { fakeDelivery, FakeStream, id } from '../test/fakes.ts';
import type Database from 'better-sqlite3';

const SUB = id();

function until(check: () => boolean, timeoutMs = 3000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  return new Promise((resolve, reject) => {
    const tick = (): void => {
      if (check()) return resolve();
      if (Date.now() > deadline) return reject(new Error('condition not reached'));
      setTimeout(tick, 5);
    };
    tick();
  });
}

describe('EventConsumer (in-memory connection, SqliteInbox)', () => {
  let dir: string;
  let inbox: SqliteInbox;
  let streams: FakeStream[];
  let connectQueue: Array<() => Promise<EventStream>>;
  let events: ConsumerEvent[];
  let consumers: EventConsumer<Database.Database>[];

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'orbit-consumer-'));
    inbox = new SqliteInbox({ path: join(dir, 'inbox.db') });
    inbox.database.exec('CREATE TABLE effects (event_id TEXT NOT NULL)');
    streams = [];
    connectQueue = [];
    events = [];
    consumers = [];
  });
  afterEach(async () => {
    for (const c of consumers) await c.stop({ timeoutMs: 100 });
    await inbox.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Each connect takes the next scripted outcome, or a fresh FakeStream. */
  function start(options: Partial<EventConsumerOptions<Database.Database>> = {}): EventConsumer<Database.Database> {
    const consumer = createEventConsumer<Database.Database>({
      baseUrl: 'http://127.0.0.1:1',
      token: 't',
      subscriptionId: SUB,
      capacity: 4,
      inbox,
      handler: ({ event, tx }) => {
        tx.prepare('INSERT INTO effects (event_id) VALUES (?)').run(event.id);
      },
      backoff: { initialDelayMs: 1, maxDelayMs: 5, random: () => 0 },
      onEvent: (event) => events.push(event),
      connect: async () => {
        const next = connectQueue.shift();
        if (next) return next();
        const stream = new FakeStream(SUB);
        streams.push(stream);
        return stream;
      },
      ...options,
    });
    consumers.push(consumer);
    return consumer;
  }

  const effects = (eventId: string): number =>
    (inbox.database.prepare('SELECT COUNT(*) AS n FROM effects WHERE event_id = ?').get(eventId) as { n: number }).n;
  const types = (): string[] => events.map((e) => e.type);

  it('MUST commit the handler and the inbox record before sending the ACK, then delete the stored proof', async () => {
    start();
    await until(() => streams.length === 1);
    const stream = streams[0]!;
    const d = fakeDelivery(SUB);
    const seenAtAck: Array<{ recorded: boolean; effects: number; stored: number }> = [];
    const ackDefault = stream.onAck;
    stream.onAck = async (proof) => {
      seenAtAck.push({
        recorded: await inbox.has(d.event.id),
        effects: effects(d.event.id),
        stored: (await inbox.pendingAcks(SUB)).length,
      });
      return ackDefault(proof);
    };
    stream.push(d);
    await until(() => types().includes('acked'));
    expect(seenAtAck).toEqual([{ recorded: true, effects: 1, stored: 1 }]);
    expect(stream.acks).toEqual([d.proof]);
    expect(await inbox.pendingAcks()).toEqual([]);
    expect(types()).toEqual(['connected', 'delivered', 'handled', 'acked']);
  });

  it('MUST skip the handler for an event already in the inbox and still ACK the new proof', async () => {
    const d = fakeDelivery(SUB);
    await inbox.transaction(d.event.id, () => {});
    start();
    await until(() => streams.length === 1);
    streams[0]!.push(d);
    await until(() => types().includes('acked'));
    expect(effects(d.event.id)).toBe(0);
    expect(types()).toEqual(['connected', 'delivered', 'duplicate', 'acked']);
    expect(streams[0]!.acks).toEqual([d.proof]);
  });

  it('MUST NOT ACK when the handler throws: the transaction rolls back and nothing is recorded', async () => {
    let calls = 0;
    start({
      handler: ({ event, tx }) => {
        calls++;
        tx.prepare('INSERT INTO effects (event_id) VALUES (?)').run(event.id);
        throw new Error('business failure');
      },
    });
    await until(() => streams.length === 1);
    const d = fakeDelivery(SUB);
    streams[0]!.push(d);
    await until(() => types().includes('error'));
    const error = events.find((e) => e.type === 'error');
    expect(error).toMatchObject({ phase: 'handler' });
    expect(calls).toBe(1);
    expect(effects(d.event.id)).toBe(0);
    expect(await inbox.has(d.event.id)).toBe(false);
    expect(await inbox.pendingAcks()).toEqual([]);
    expect(streams[0]!.acks).toEqual([]);
  });

  it('MUST delete the proof on DELIVERY_LEASE_LOST and ACK the redelivery (found in the inbox) with the new proof', async () => {
    start();
    await until(() => streams.length === 1);
    const stream = streams[0]!;
    const first = fakeDelivery(SUB, { epoch: '1' });
    const ackDefault = stream.onAck;
    stream.onAck = async (proof) => {
      if (proof.epoch === '1') throw new OrbitError('DELIVERY_LEASE_LOST', 'replaced', { status: null });
      return ackDefault(proof);
    };
    stream.push(first);
    await until(() => types().includes('lease_lost'));
    expect(await inbox.pendingAcks()).toEqual([]);
    const second = fakeDelivery(SUB, { eventId: first.event.id, deliveryId: first.delivery.id, epoch: '2' });
    stream.push(second);
    await until(() => types().includes('acked'));
    expect(effects(first.event.id)).toBe(1);
    expect(stream.acks.map((a) => a.epoch)).toEqual(['1', '2']);
    expect(types()).toEqual(['connected', 'delivered', 'handled', 'lease_lost', 'delivered', 'duplicate', 'acked']);
    expect(await inbox.pendingAcks()).toEqual([]);
  });

  it('MUST keep an unanswered proof and re-report it, unchanged, on the next connection', async () => {
    start();
    await until(() => streams.length === 1);
    const first = streams[0]!;
    first.onAck = () => new Promise(() => {}); // the answer never comes
    const d = fakeDelivery(SUB);
    first.push(d);
    await until(() => first.acks.length === 1);
    expect(await inbox.pendingAcks(SUB)).toEqual([{ ...d.proof, subscription_id: SUB, event_id: d.event.id }]);
    first.end(); // the connection drops before the answer
    await until(() => streams.length === 2 && streams[1]!.acks.length === 1);
    expect(streams[1]!.acks).toEqual([d.proof]);
    await until(() => events.some((e) => e.type === 'acked' && e.replayed));
    expect(await inbox.pendingAcks()).toEqual([]);
    expect(effects(d.event.id)).toBe(1);
    expect(types()).toContain('reconnecting');
  });

  it('MUST re-report proofs stored by an earlier process when it connects', async () => {
    const d = fakeDelivery(SUB);
    await inbox.transaction(d.event.id, () => {}, { pendingAck: { ...d.proof, subscription_id: SUB, event_id: d.event.id } });
    const other = fakeDelivery(id()); // another subscription's proof is not ours to send
    await inbox.savePendingAck({ ...other.proof, subscription_id: other.delivery.subscription_id, event_id: other.event.id });
    start();
    await until(() => types().includes('acked'));
    expect(streams[0]!.acks).toEqual([d.proof]);
    expect((await inbox.pendingAcks()).map((p) => p.delivery_id)).toEqual([other.delivery.id]);
  });

  it('MUST stop with the error on EVENT_HISTORY_EXPIRED, PERMISSION_DENIED, NOT_FOUND and UNAUTHENTICATED', async () => {
    for (const code of ['EVENT_HISTORY_EXPIRED', 'PERMISSION_DENIED', 'NOT_FOUND', 'UNAUTHENTICATED'] as const) {
      events = [];
      streams = [];
      const consumer = start();
      await until(() => streams.length === 1);
      streams[0]!.end(new ConnectionClosedError(code, 'gone', 1008, code));
      const error = await consumer.done.catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OrbitError);
      expect((error as OrbitError).code).toBe(code);
      expect(consumer.state).toBe('stopped');
      expect(types()).toEqual(['connected', 'error', 'stopped']);
    }
  });

  it('MUST reconnect after the retryable close codes and stop after a policy violation or an unasked normal close', async () => {
    /** A fresh consumer whose first connection the server closes with `closeCode` and `reason`. */
    const closedOnce = async (closeCode: number, reason: string) => {
      events = [];
      streams = [];
      const consumer = start();
      await until(() => streams.length === 1);
      streams[0]!.end(closedError(closeCode, reason, null));
      return consumer;
    };
    for (const [closeCode, reason] of [
      [1001, 'server shutting down'],
      [1006, ''],
      [1011, ''],
      [1012, ''],
      [1013, 'UNAVAILABLE'],
    ] as const) {
      const consumer = await closedOnce(closeCode, reason);
      await until(() => streams.length === 2);
      expect(types(), `${closeCode}`).toEqual(['connected', 'reconnecting', 'connected']);
      await consumer.stop();
    }
    for (const [closeCode, reason, code] of [
      [1008, 'no events.hello in time', 'INVALID_ARGUMENT'],
      [1009, '', 'INVALID_ARGUMENT'],
      [1000, '', 'UNAVAILABLE'],
    ] as const) {
      const consumer = await closedOnce(closeCode, reason);
      const error = (await consumer.done.catch((e: unknown) => e)) as ConnectionClosedError;
      expect([error.code, error.closeCode], `${closeCode}`).toEqual([code, closeCode]);
      expect(types(), `${closeCode}`).toEqual(['connected', 'error', 'stopped']);
      expect(streams).toHaveLength(1);
    }
  });

  it('MUST stop when the connection attempt is refused for good, and retry refusals that may pass (UNAVAILABLE, CAPACITY_EXCEEDED)', async () => {
    connectQueue.push(() => Promise.reject(new OrbitTransportError('network', 'refused')));
    connectQueue.push(() => Promise.reject(new OrbitError('UNAVAILABLE', 'db down', { status: 503 })));
    const consumer = start();
    await until(() => streams.length === 1);
    expect(types()).toEqual(['reconnecting', 'reconnecting', 'connected']);
    await consumer.stop();

    events = [];
    connectQueue.push(() => Promise.reject(new OrbitError('UNAUTHENTICATED', 'bad token', { status: 401 })));
    const refused = start();
    expect(((await refused.done.catch((e: unknown) => e)) as OrbitError).code).toBe('UNAUTHENTICATED');
    expect(types()).toEqual(['error', 'stopped']);
  });

  it("MUST wait the server's Retry-After before connecting again after a refused upgrade, not a fixed second", async () => {
    // connectEvents puts the refusal's Retry-After on the error (retryAfterMs); a 429 without the
    // header still waits the contract's 1 s. The wait is read from the reconnecting event.
    const refusals = [
      new OrbitError('CAPACITY_EXCEEDED', 'full', { status: 429, retryAfterMs: 3000 }),
      new OrbitError('CAPACITY_EXCEEDED', 'full (a proxy, no header)', { status: 429 }),
      new OrbitError('UNAVAILABLE', 'db down', { status: 503, retryAfterMs: 2000 }),
    ];
    const delays: number[] = [];
    for (const refusal of refusals) {
      events = [];
      connectQueue.push(() => Promise.reject(refusal));
      const consumer = start();
      await until(() => types().includes('reconnecting'));
      await consumer.stop();
      for (const e of events) if (e.type === 'reconnecting') delays.push(e.delayMs);
    }
    expect(delays).toEqual([3000, 1000, 2000]);
  });

  it('MUST give up after backoff.maxAttempts consecutive failed attempts', async () => {
    for (let i = 0; i < 5; i++) connectQueue.push(() => Promise.reject(new OrbitTransportError('network', 'refused')));
    const consumer = start({ backoff: { initialDelayMs: 1, maxDelayMs: 2, maxAttempts: 3 } });
    const error = (await consumer.done.catch((e: unknown) => e)) as OrbitError;
    expect(error.code).toBe('UNAVAILABLE');
    expect(types().filter((t) => t === 'reconnecting')).toHaveLength(2);
  });

  it('MUST drain on stop: no new handler starts, a running handler finishes and is ACKed, then the connection closes', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const consumer = start({
      handler: async ({ event, tx }) => {
        await gate;
        tx.prepare('INSERT INTO effects (event_id) VALUES (?)').run(event.id);
      },
    });
    await until(() => streams.length === 1);
    const stream = streams[0]!;
    const running = fakeDelivery(SUB);
    stream.push(running);
    await until(() => types().includes('delivered'));
    const stopping = consumer.stop({ timeoutMs: 5000 });
    const late = fakeDelivery(SUB);
    stream.push(late);
    await new Promise((r) => setTimeout(r, 20));
    expect(stream.closedWith).toBeNull(); // still draining
    release();
    expect(await stopping).toEqual({ drained: true, abandoned: 0 });
    expect(stream.acks).toEqual([running.proof]);
    expect(effects(running.event.id)).toBe(1);
    expect(await inbox.has(late.event.id)).toBe(false);
    expect(stream.closedWith).toMatchObject({ code: 1000 });
    expect(consumer.state).toBe('stopped');
    await consumer.done;
    expect(types().at(-1)).toBe('stopped');
  });

  it('MUST return from stop after timeoutMs when a handler hangs, reporting it as abandoned', async () => {
    // Hangs far longer than the stop timeout (but ends, so the Inbox can close after the test).
    const consumer = start({ handler: () => new Promise((resolve) => setTimeout(resolve, 600)) });
    await until(() => streams.length === 1);
    streams[0]!.push(fakeDelivery(SUB));
    await until(() => types().includes('delivered'));
    const started = Date.now();
    expect(await consumer.stop({ timeoutMs: 100 })).toEqual({ drained: false, abandoned: 1 });
    expect(Date.now() - started).toBeLessThan(2000);
    expect(streams[0]!.closedWith).toMatchObject({ code: 1000 });
  });

  it('MUST ping every pingIntervalMs and cut a connection whose ping is not answered', async () => {
    start({ pingIntervalMs: 20 });
    await until(() => streams.length === 1 && streams[0]!.pings.length >= 2);
    streams[0]!.ping = () => Promise.reject(new OrbitTransportError('timeout', 'no answer'));
    await until(() => streams[0]!.terminated && streams.length === 2);
    expect(events.some((e) => e.type === 'error' && e.phase === 'ping')).toBe(true);
  });

  it('MUST ignore exceptions thrown by hooks and support on()/unsubscribe', async () => {
    const consumer = start({
      onEvent: () => {
        throw new Error('hook bug');
      },
    });
    const acked: string[] = [];
    const off = consumer.on('acked', (e) => acked.push(e.proof.delivery_id));
    consumer.on('handled', () => {
      throw new Error('listener bug');
    });
    await until(() => streams.length === 1);
    const d = fakeDelivery(SUB);
    streams[0]!.push(d);
    await until(() => acked.length === 1);
    off();
    streams[0]!.push(fakeDelivery(SUB));
    await until(() => consumer.stats.acked === 2);
    expect(acked).toEqual([d.delivery.id]);
    expect(consumer.stats).toMatchObject({ delivered: 2, handled: 2, acked: 2 });
  });

  it('MUST refuse a bad configuration before connecting', () => {
    expect(() => start({ capacity: 0 })).toThrow(/capacity/);
    expect(() => start({ capacity: 33 })).toThrow(/capacity/);
    expect(() => start({ subscriptionId: 'ABC' })).toThrow(/subscriptionId/);
  });

  it('MUST ask a token provider for every connection, give a hanging one connectTimeoutMs, and retry one that fails', async () => {
    const tokens: string[] = [];
    let calls = 0;
    const consumer = start({
      connectTimeoutMs: 50,
      token: () => {
        calls++;
        if (calls === 1) return new Promise<string>(() => {}); // never answers
        if (calls === 2) throw new Error('the secret store is restarting');
        return `token-${calls}`;
      },
      connect: async (options) => {
        tokens.push(options.token as string);
        const stream = new FakeStream(SUB);
        streams.push(stream);
        return stream;
      },
    });
    await until(() => streams.length === 1);
    const waits = events.filter((e) => e.type === 'reconnecting').map((e) => (e as { error: OrbitError }).error);
    expect(waits.map((e) => [e.code, e.retryable, e.message])).toEqual([
      ['UNAVAILABLE', true, 'ConnectEvents: GET ws://127.0.0.1:1/v1/events/connect failed: no token from the token provider within 50 ms'],
      ['UNAVAILABLE', true, 'ConnectEvents: the token provider failed: the secret store is restarting'],
    ]);
    streams[0]!.end();
    await until(() => streams.length === 2);
    expect(tokens).toEqual(['token-3', 'token-4']);
    expect(consumer.state).toBe('connected');
  });

  it('MUST connect again after UNAUTHENTICATED only when the provider has another token, once per connection', async () => {
    let current = 'old';
    const tokens: string[] = [];
    const consumer = start({
      token: () => current,
      connect: async (options) => {
        tokens.push(options.token as string);
        if (options.token === 'refused') throw new OrbitError('UNAUTHENTICATED', 'no such token', { status: 401 });
        const stream = new FakeStream(SUB);
        streams.push(stream);
        return stream;
      },
    });
    await until(() => streams.length === 1);
    // The grace period ends: the server closes the old token's connection; the provider has the new one.
    current = 'new';
    streams[0]!.end(closedError(1008, 'UNAUTHENTICATED', new OrbitError('UNAUTHENTICATED', 'rotated', { status: null })));
    await until(() => streams.length === 2);
    // Closed again, and now the provider offers a token the server refuses: one attempt, then a stop.
    current = 'refused';
    streams[1]!.end(closedError(1008, 'UNAUTHENTICATED', new OrbitError('UNAUTHENTICATED', 'revoked', { status: null })));
    await expect(consumer.done).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
    expect(tokens).toEqual(['old', 'new', 'refused']);
  });
});

/**
 * `signal` (an AbortSignal) against a real server (docs/sdk.md, Stopping with a signal): aborting
 * a consumer's signal stops it like `stop()` — a normal close (1000), no reconnect, `done`
 * resolves — whether it is connected or waiting to reconnect; an already aborted signal never
 * connects. `connectEvents`' signal ends an open connection the same way: the iteration ends
 * without an error.
 *
 * SQLite only: the stop is the SDK's, the same whichever store the server uses.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { api, eventually } from '@orbit/testing';
import { connectEvents, createEventConsumer, type ConsumerEvent, type EventConsumer, type Log } from '../src/index.ts';
import type Database from 'better-sqlite3';
import { SqliteInbox } from '../src/inbox/sqlite.ts';
import { CuttingProxy, id, key, name, setup, type Setup } from './support.ts';

describe('aborting a signal', () => {
  let env: Setup;
  let dir: string;
  const cleanup: Array<() => Promise<unknown> | unknown> = [];

  beforeAll(async () => {
    env = await setup('sqlite');
    dir = mkdtempSync(join(tmpdir(), 'orbit-signal-'));
  });
  afterEach(async () => {
    for (const step of cleanup.splice(0).reverse()) await step();
  });
  afterAll(async () => {
    await env?.server.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  async function subscription(): Promise<string> {
    return (await env.client.createSubscription(key(), { name: name(), queue_id: env.queueId })).subscription.id;
  }

  /** The sessions the server holds for the subscription, on every node. */
  async function sessions(subscriptionId: string): Promise<unknown[]> {
    return (await api(env.server.url, 'GET', `/v1/subscriptions/${subscriptionId}/sessions`, { token: env.token })).json.data.items;
  }

  function consumer(
    subscriptionId: string,
    signal: AbortSignal,
    baseUrl = env.server.url,
  ): { consumer: EventConsumer<Database.Database>; events: ConsumerEvent[]; closes: unknown[] } {
    const inbox = new SqliteInbox({ path: join(dir, `${id()}.db`) });
    cleanup.push(() => inbox.close());
    const events: ConsumerEvent[] = [];
    const closes: unknown[] = [];
    const log: Log = (_level, message, fields) => {
      if (message.startsWith('consumer: connection closed')) closes.push(fields?.close_code);
    };
    const c = createEventConsumer({
      baseUrl,
      token: env.token,
      subscriptionId,
      capacity: 1,
      inbox,
      handler: () => {},
      signal,
      log,
      backoff: { initialDelayMs: 60_000, maxDelayMs: 60_000, jitter: 0 },
      onEvent: (e) => events.push(e),
    });
    cleanup.push(() => c.stop({ timeoutMs: 1000 }));
    return { consumer: c, events, closes };
  }

  it('MUST stop a connected consumer: a normal close (1000), no reconnect, and `done` resolves', async () => {
    const sub = await subscription();
    const controller = new AbortController();
    const { consumer: c, events, closes } = consumer(sub, controller.signal);
    await eventually(() => c.state === 'connected', 10_000, 'connected');
    expect(await sessions(sub)).toHaveLength(1);

    controller.abort();
    await expect(c.done).resolves.toBeUndefined();
    expect(c.state).toBe('stopped');
    expect(closes).toEqual([1000]);
    expect(events.map((e) => e.type)).toEqual(['connected', 'stopped']);
    expect(events.at(-1)).toMatchObject({ type: 'stopped', error: null });
    // The server let the session go; nothing comes back.
    await eventually(async () => (await sessions(sub)).length === 0, 5000, 'the session to end on the server');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await sessions(sub)).toHaveLength(0);
    expect(c.stats.reconnects).toBe(0);
  });

  it('MUST stop a consumer that is waiting to reconnect, at once', async () => {
    const proxy = await CuttingProxy.start(env.server.url);
    cleanup.push(() => proxy.close());
    const controller = new AbortController();
    const { consumer: c, events } = consumer(await subscription(), controller.signal, proxy.url);
    await eventually(() => c.state === 'connected', 10_000, 'connected');
    proxy.dropAll();
    await eventually(() => c.state === 'reconnecting', 10_000, 'waiting 60 s to reconnect');
    const connections = proxy.connections;

    const started = Date.now();
    controller.abort();
    await expect(c.done).resolves.toBeUndefined();
    expect(Date.now() - started).toBeLessThan(2000);
    expect(c.state).toBe('stopped');
    expect(events.filter((e) => e.type === 'connected')).toHaveLength(1);
    expect(proxy.connections).toBe(connections);
  });

  it('MUST NOT connect at all with a signal that is already aborted', async () => {
    const proxy = await CuttingProxy.start(env.server.url);
    cleanup.push(() => proxy.close());
    const { consumer: c, events } = consumer(await subscription(), AbortSignal.abort(), proxy.url);
    await expect(c.done).resolves.toBeUndefined();
    expect(c.state).toBe('stopped');
    expect(events.map((e) => e.type)).toEqual(['stopped']);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(proxy.connections).toBe(0);
  });

  it('MUST end an open `connectEvents` connection with a normal close: the iteration ends without an error', async () => {
    const sub = await subscription();
    await env.client.publishResult(env.queueId, key(), { type: 'task.succeeded', task_id: id(), task_revision: '1' });
    const controller = new AbortController();
    const conn = await connectEvents({
      baseUrl: env.server.url,
      token: env.token,
      subscriptionId: sub,
      capacity: 1,
      signal: controller.signal,
    });
    const received: string[] = [];
    for await (const { event } of conn) {
      received.push(event.id);
      controller.abort(); // while the loop waits for the next delivery
    }
    expect(received).toHaveLength(1);
    expect(await conn.closed).toEqual({ code: 1000, reason: 'client aborted', error: null });
    await eventually(async () => (await sessions(sub)).length === 0, 5000, 'the session to end on the server');

    // Before the welcome, the attempt itself rejects with the signal's reason.
    await expect(
      connectEvents({
        baseUrl: env.server.url,
        token: env.token,
        subscriptionId: sub,
        capacity: 1,
        signal: AbortSignal.abort(new Error('not now')),
      }),
    ).rejects.toThrow('not now');
  });
});

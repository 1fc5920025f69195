/**
 * The logger hook (docs/sdk.md, Logging) against a real server: silent without one; with one, the
 * management client reports its requests, retries with their delays and the give-up, and the
 * consumer reports its connections, the closes with their codes (1006 for a cut, 1000 for its own
 * stop), its reconnects with their delays, and the errors it survives (a failing handler, a
 * throwing hook). No entry holds a token or a lease secret.
 *
 * SQLite only: what is logged is the SDK's, the same whichever store the server uses.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { eventually } from '@orbit/testing';
import { createClient, createEventConsumer, type Log, type LogLevel } from '../src/index.ts';
import { SqliteInbox } from '../src/inbox/sqlite.ts';
import { CuttingProxy, id, key, name, setup, type Setup } from './support.ts';

interface Entry {
  readonly level: LogLevel;
  readonly message: string;
  readonly fields: Record<string, unknown>;
}

function recorder(): { log: Log; entries: Entry[] } {
  const entries: Entry[] = [];
  return { entries, log: (level, message, fields = {}) => entries.push({ level, message, fields }) };
}

/** A port nothing listens on (a proxy opened and closed at once). */
async function deadUrl(target: string): Promise<string> {
  const proxy = await CuttingProxy.start(target);
  await proxy.close();
  return proxy.url;
}

describe('the logger hook', () => {
  let env: Setup;
  let dir: string;
  const cleanup: Array<() => Promise<unknown> | unknown> = [];

  beforeAll(async () => {
    env = await setup('sqlite', { ORBIT_LEASE_DURATION_MS: '1000' });
    dir = mkdtempSync(join(tmpdir(), 'orbit-log-'));
  });
  afterEach(async () => {
    vi.restoreAllMocks();
    for (const step of cleanup.splice(0).reverse()) await step();
  });
  afterAll(async () => {
    await env?.server.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** No entry may carry a secret: the token, or any lease secret the consumer saw. */
  function expectNoSecrets(entries: Entry[], secrets: string[]): void {
    const text = JSON.stringify(entries);
    for (const secret of secrets) expect(text).not.toContain(secret);
    expect(text).not.toMatch(/lease_secret/);
  }

  it('MUST stay silent without a logger, even while it retries and fails', async () => {
    const writes = [
      vi.spyOn(process.stdout, 'write'),
      vi.spyOn(process.stderr, 'write'),
      ...(['log', 'info', 'warn', 'error', 'debug'] as const).map((m) => vi.spyOn(console, m)),
    ];
    const client = createClient({ baseUrl: await deadUrl(env.server.url), token: env.token, retry: { maxAttempts: 2, initialDelayMs: 5 } });
    await expect(client.getSubscription(id())).rejects.toThrow(/ECONNREFUSED/);
    for (const spy of writes) expect(spy).not.toHaveBeenCalled();
  });

  it('MUST tell the management client’s logger about each request, each retry with its delay, and the give-up', async () => {
    const { log, entries } = recorder();
    const ok = createClient({ baseUrl: env.server.url, token: env.token, log });
    const { subscription } = await ok.createSubscription(key(), { name: name(), queue_id: env.queueId });
    expect(entries.map((e) => [e.level, e.message])).toEqual([
      ['debug', `CreateSubscription: POST ${env.server.url}/v1/subscriptions`],
      ['debug', 'CreateSubscription: HTTP 201'],
    ]);
    expect(entries[1]!.fields).toMatchObject({
      operation: 'CreateSubscription',
      status: 201,
      request_id: expect.stringMatching(/^[0-9a-f]{32}$/),
    });

    entries.length = 0;
    const url = await deadUrl(env.server.url);
    const down = createClient({ baseUrl: url, token: env.token, log, retry: { maxAttempts: 3, initialDelayMs: 10, jitter: 0 } });
    await expect(down.getSubscription(subscription.id)).rejects.toThrow(/ECONNREFUSED/);
    const warnings = entries.filter((e) => e.level === 'warn');
    expect(warnings.map((e) => e.message)).toEqual([
      expect.stringMatching(/^GetSubscription: retrying in 10 ms \(attempt 2 of 3\): GetSubscription: GET .* failed: connect ECONNREFUSED/),
      expect.stringMatching(/^GetSubscription: retrying in 20 ms \(attempt 3 of 3\)/),
      expect.stringMatching(/^GetSubscription: giving up after 3 attempts/),
    ]);
    expect(warnings[0]!.fields).toMatchObject({
      operation: 'GetSubscription',
      method: 'GET',
      url: `${url}/v1/subscriptions/${subscription.id}`,
      attempt: 2,
      max_attempts: 3,
      delay_ms: 10,
      code: 'UNAVAILABLE',
      failure: 'network',
      retryable: true,
    });
    expect(entries.filter((e) => e.level === 'debug')).toHaveLength(3); // one line per attempt
    expectNoSecrets(entries, [env.token]);
  });

  it('MUST tell the consumer’s logger about connections, closes with their codes, reconnects with their delays, and the errors it survives', async () => {
    const proxy = await CuttingProxy.start(env.server.url);
    cleanup.push(() => proxy.close());
    const { subscription } = await env.client.createSubscription(key(), { name: name(), queue_id: env.queueId });
    const inbox = new SqliteInbox({ path: join(dir, 'consumer.db') });
    cleanup.push(() => inbox.close());
    const { log, entries } = recorder();
    const secrets = [env.token];
    let failOnce = true;
    const consumer = createEventConsumer({
      baseUrl: proxy.url,
      token: env.token,
      subscriptionId: subscription.id,
      capacity: 2,
      inbox,
      backoff: { initialDelayMs: 50, maxDelayMs: 50, jitter: 0 },
      log,
      handler: () => {
        if (failOnce) {
          failOnce = false;
          throw new Error('business rule said no');
        }
      },
      onEvent: (e) => {
        if (e.type === 'delivered') throw new Error('a broken hook');
      },
    });
    consumer.on('delivered', () => {}); // a listener that works, next to the broken hook
    cleanup.push(() => consumer.stop({ timeoutMs: 1000 }));
    // Lease secrets pass through the consumer: none may reach the log.
    consumer.on('acked', (e) => secrets.push(e.proof.lease_secret));

    const at = (level: LogLevel, pattern: RegExp) => entries.filter((e) => e.level === level && pattern.test(e.message));
    await eventually(() => at('info', /^consumer: connected$/).length === 1, 10_000, 'the first connection');
    expect(at('info', /^consumer: connected$/)[0]!.fields).toMatchObject({
      subscription_id: subscription.id,
      session_id: expect.stringMatching(/^[0-9a-f]{32}$/),
      capacity: 2,
    });

    // The handler fails once (rolled back; the delivery comes again after its lease), then succeeds.
    await env.client.publishResult(env.queueId, key(), { type: 'task.succeeded', task_id: id(), task_revision: '1' });
    await eventually(() => consumer.stats.acked >= 1, 10_000, 'the ACK after the redelivery');
    expect(at('error', /^consumer: the handler failed/)[0]!.fields).toMatchObject({
      phase: 'handler',
      subscription_id: subscription.id,
      delivery_id: expect.stringMatching(/^[0-9a-f]{32}$/),
      error: 'business rule said no',
    });
    expect(at('warn', /^consumer: the onEvent hook threw on delivered; ignored$/)[0]!.fields).toMatchObject({ error: 'a broken hook' });

    // A cut: the close (1006) and the reconnect with its delay, then a new connection.
    proxy.dropAll();
    await eventually(() => at('info', /^consumer: connected$/).length === 2, 10_000, 'the reconnection');
    expect(at('warn', /^consumer: connection ended \(1006\): UNAVAILABLE: /)[0]!.fields).toMatchObject({
      close_code: 1006,
      code: 'UNAVAILABLE',
      retryable: true,
    });
    expect(at('warn', /^consumer: reconnecting in 50 ms \(attempt 1\)/)[0]!.fields).toMatchObject({
      attempt: 1,
      delay_ms: 50,
      close_code: 1006,
    });

    // Its own stop: a normal close (1000), then stopped.
    await consumer.stop({ timeoutMs: 1000 });
    expect(at('info', /^consumer: connection closed \(1000\)$/)[0]!.fields).toMatchObject({ close_code: 1000 });
    expect(entries.at(-1)).toMatchObject({ level: 'info', message: 'consumer: stopped' });
    expect(secrets.length).toBeGreaterThan(1);
    expectNoSecrets(entries, secrets);
  });

  it('MUST keep going when the logger itself throws', async () => {
    const client = createClient({
      baseUrl: env.server.url,
      token: env.token,
      log: () => {
        throw new Error('the logger is broken');
      },
    });
    expect(await client.health()).toEqual({ status: 'ok' });
  });
});

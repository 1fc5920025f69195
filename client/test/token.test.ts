/**
 * The token provider (docs/sdk.md, Token provider) through real rotations made with
 * `orbit credentials rotate` (docs/operations.md, Credentials; spec/README.md, "Authentication is
 * at most 1 s stale" and "Authorization while connected"):
 *
 * - the management client asks the provider for every request, so one client follows a rotation;
 *   a refused request is sent once more when the provider then has another token;
 * - a consumer whose connection the server closes at the end of the grace period connects again
 *   with the provider's new token and goes on, while one with a fixed token stops with
 *   UNAUTHENTICATED;
 * - a provider that fails is retried (UNAVAILABLE); one that returns no token is a configuration
 *   error (INVALID_ARGUMENT) and nothing is sent.
 *
 * SQLite only: rotation and its grace are the server's (server/test/credentials-cli.test.ts runs
 * them on both stores); what is tested here is that the SDK follows them.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { api, eventually, runOrbit } from '@orbit/testing';
import { createClient, createEventConsumer, OrbitError, type ConsumerEvent, type Log } from '../src/index.ts';
import { SqliteInbox } from '../src/inbox/sqlite.ts';
import { id, key, name, setup, type Setup } from './support.ts';

interface Credential {
  readonly credential_id: string;
  readonly token: string;
  readonly queue_ids: Record<string, string>;
}

describe('the token provider', () => {
  let env: Setup;
  let dir: string;
  const cleanup: Array<() => Promise<unknown> | unknown> = [];

  beforeAll(async () => {
    env = await setup('sqlite', { ORBIT_LEASE_DURATION_MS: '1000' });
    dir = mkdtempSync(join(tmpdir(), 'orbit-token-'));
  });
  afterEach(async () => {
    for (const step of cleanup.splice(0).reverse()) await step();
  });
  afterAll(async () => {
    await env?.server.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  async function credential(): Promise<Credential> {
    return (await env.server.bootstrap({ application: `app-${id().slice(0, 8)}` })) as Credential;
  }

  /** `orbit credentials rotate` as an operator runs it, on the server's database: the new token. */
  async function rotate(credentialId: string, graceSeconds: number): Promise<string> {
    const run = await runOrbit([
      'credentials',
      'rotate',
      credentialId,
      '--grace-seconds',
      String(graceSeconds),
      '--json',
      '--database',
      env.server.database.url,
    ]);
    expect(run.code, run.stderr).toBe(0);
    return JSON.parse(run.stdout).token as string;
  }

  /** Another process changed the credential: the server notices within its 1 s cache. */
  async function refused(token: string, queueId: string): Promise<void> {
    await eventually(
      async () => (await api(env.server.url, 'GET', `/v1/subscriptions?queue_id=${queueId}`, { token })).status === 401,
      5000,
      'the old token to be refused',
    );
  }

  it('MUST ask for the token on every request, so one client follows a rotation', async () => {
    const cred = await credential();
    const queueId = cred.queue_ids.q!;
    let current = cred.token;
    let asked = 0;
    const client = createClient({
      baseUrl: env.server.url,
      token: () => {
        asked++;
        return current;
      },
    });
    await client.listSubscriptions({ queueId });
    await client.listSubscriptions({ queueId });
    expect(asked).toBe(2);

    const rotated = await rotate(cred.credential_id, 0);
    await refused(cred.token, queueId);
    // The provider still has the old token: refused, and asking again gives the same one.
    const error = await client.listSubscriptions({ queueId }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OrbitError);
    expect({ code: (error as OrbitError).code, status: (error as OrbitError).status }).toEqual({ code: 'UNAUTHENTICATED', status: 401 });

    // The application's secret is updated: the same client goes on.
    current = rotated;
    expect((await client.listSubscriptions({ queueId })).items).toEqual([]);
  });

  it('MUST send a refused request once more when the provider then has another token', async () => {
    const cred = await credential();
    const queueId = cred.queue_ids.q!;
    const rotated = await rotate(cred.credential_id, 0);
    await refused(cred.token, queueId);
    // A provider with a stale cache: the first answer is the old token, the next the new one.
    const answers = [cred.token];
    const entries: Array<[string, string]> = [];
    const client = createClient({
      baseUrl: env.server.url,
      token: async () => answers.shift() ?? rotated,
      log: (level, message) => entries.push([level, message]),
    });
    const { subscription, deduplicated } = await client.createSubscription(key(), { name: name(), queue_id: queueId });
    expect(deduplicated).toBe(false);
    expect(subscription.queue_id).toBe(queueId);
    expect(entries).toContainEqual(['info', "CreateSubscription: the token was refused; sending again with the provider's new token"]);
  });

  it('MUST keep a consumer going across a rotation with grace: its provider’s new token replaces the one the server closes', async () => {
    const cred = await credential();
    const queueId = cred.queue_ids.q!;
    const client = createClient({ baseUrl: env.server.url, token: cred.token });
    const subscriptionOf = async () => (await client.createSubscription(key(), { name: name(), queue_id: queueId })).subscription.id;
    let current = cred.token;
    const logged: string[] = [];
    const log: Log = (level, message, fields) => logged.push(`${level} ${message} ${JSON.stringify(fields)}`);
    const start = (token: string | (() => string), subscriptionId: string, events: ConsumerEvent[]) => {
      const inbox = new SqliteInbox({ path: join(dir, `${id()}.db`) });
      cleanup.push(() => inbox.close());
      const consumer = createEventConsumer({
        baseUrl: env.server.url,
        token,
        subscriptionId,
        capacity: 2,
        inbox,
        handler: () => {},
        backoff: { initialDelayMs: 50, maxDelayMs: 200 },
        onEvent: (e) => events.push(e),
        log,
      });
      cleanup.push(() => consumer.stop({ timeoutMs: 1000 }));
      return consumer;
    };
    const rotatingEvents: ConsumerEvent[] = [];
    const fixedEvents: ConsumerEvent[] = [];
    const rotating = start(() => current, await subscriptionOf(), rotatingEvents);
    const fixed = start(cred.token, await subscriptionOf(), fixedEvents);
    await eventually(() => rotating.state === 'connected' && fixed.state === 'connected', 10_000, 'both connected');

    current = await rotate(cred.credential_id, 2); // the application picks up the new secret within the grace
    const fixedEnd = await fixed.done.then(
      () => null,
      (e: unknown) => e,
    );
    expect(fixedEnd).toBeInstanceOf(OrbitError);
    expect((fixedEnd as OrbitError).code).toBe('UNAUTHENTICATED');

    await eventually(
      () => rotatingEvents.filter((e) => e.type === 'connected').length === 2,
      10_000,
      'the reconnection with the new token',
    );
    expect(rotating.state).toBe('connected');
    expect(logged.some((l) => l.startsWith("info consumer: the token was refused; connecting again with the provider's new token"))).toBe(
      true,
    );
    // It still consumes: a new result is handled and acknowledged on the new connection.
    const subscriptionId = (rotatingEvents.find((e) => e.type === 'connected') as { welcome: { subscription_id: string } }).welcome
      .subscription_id;
    const after = createClient({ baseUrl: env.server.url, token: current });
    await after.publishResult(queueId, key(), { type: 'task.succeeded', task_id: id(), task_revision: '1' });
    await eventually(() => rotating.stats.acked >= 1, 10_000, 'an ACK after the rotation');
    const { items } = await after.listEventDeliveries(subscriptionId, {});
    expect(items.map((d) => d.state)).toEqual(['ACKED']);
    expect(logged.join('\n')).not.toContain(cred.token);
    expect(logged.join('\n')).not.toContain(current);
  });

  it('MUST retry a provider that fails, and refuse locally a provider that returns no token', async () => {
    let failures = 1;
    const flaky = createClient({
      baseUrl: env.server.url,
      token: async () => {
        if (failures-- > 0) throw new Error('the secret store is restarting');
        return env.token;
      },
      retry: { initialDelayMs: 5 },
    });
    expect((await flaky.listSubscriptions({ queueId: env.queueId })).items).toBeInstanceOf(Array);
    expect(failures).toBe(-1);

    const once = createClient({
      baseUrl: env.server.url,
      token: () => {
        throw new Error('the secret store is down');
      },
      retry: false,
    });
    const unavailable = (await once.listSubscriptions({ queueId: env.queueId }).catch((e: unknown) => e)) as OrbitError;
    expect({ code: unavailable.code, retryable: unavailable.retryable, message: unavailable.message }).toEqual({
      code: 'UNAVAILABLE',
      retryable: true,
      message: 'ListSubscriptions: the token provider failed: the secret store is down',
    });

    let sent = 0;
    const empty = createClient({
      baseUrl: env.server.url,
      token: () => '',
      fetch: (input, init) => {
        sent++;
        return fetch(input, init);
      },
    });
    const invalid = (await empty.listSubscriptions({ queueId: env.queueId }).catch((e: unknown) => e)) as OrbitError;
    expect({ code: invalid.code, retryable: invalid.retryable }).toEqual({ code: 'INVALID_ARGUMENT', retryable: false });
    expect(sent).toBe(0);
  });
});

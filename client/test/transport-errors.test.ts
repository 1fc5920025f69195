/**
 * What a transport failure says (docs/sdk.md, Errors): the operation, the method and URL, and the
 * reason that Node's `fetch` keeps in `cause` (`connect ECONNREFUSED 127.0.0.1:PORT`), with `cause`
 * still set, and never the token. For a server that is not there, one that accepts and never
 * answers, and an event connection to nowhere; then the same client against the real server works.
 *
 * SQLite only: the failures are the network's, not the store's.
 */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectEvents, createClient, OrbitTransportError } from '../src/index.ts';
import { CuttingProxy, id, setup, type Setup } from './support.ts';

describe('transport error messages', () => {
  let env: Setup;

  beforeAll(async () => {
    env = await setup('sqlite');
  });
  afterAll(async () => env?.server.stop());

  /** A loopback port nothing listens on (a proxy opened and closed at once). */
  async function deadPort(): Promise<number> {
    const proxy = await CuttingProxy.start(env.server.url);
    await proxy.close();
    return Number(new URL(proxy.url).port);
  }

  async function failure(promise: Promise<unknown>): Promise<OrbitTransportError> {
    const error = await promise.then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(OrbitTransportError);
    return error as OrbitTransportError;
  }

  it('MUST name the operation, the method and URL, and the refused connection; `cause` stays set', async () => {
    const port = await deadPort();
    const base = `http://127.0.0.1:${port}`;
    const client = createClient({ baseUrl: base, token: env.token, retry: false });
    const subscriptionId = id();
    const error = await failure(client.getSubscription(subscriptionId));
    expect(error.message).toBe(
      `GetSubscription: GET ${base}/v1/subscriptions/${subscriptionId} failed: connect ECONNREFUSED 127.0.0.1:${port}`,
    );
    expect({ code: error.code, failure: error.failure, retryable: error.retryable, status: error.status }).toEqual({
      code: 'UNAVAILABLE',
      failure: 'network',
      retryable: true,
      status: null,
    });
    expect(error.cause).toBeInstanceOf(TypeError); // fetch's own error, with its cause chain
    expect(((error.cause as Error).cause as NodeJS.ErrnoException).code).toBe('ECONNREFUSED');
    expect(error.message).not.toContain(env.token);

    const post = await failure(client.createSubscription('key-1', { name: 'n', queue_id: env.queueId }));
    expect(post.message).toBe(`CreateSubscription: POST ${base}/v1/subscriptions failed: connect ECONNREFUSED 127.0.0.1:${port}`);
  });

  it('MUST name the operation, the method and URL of an attempt that gets no answer', async () => {
    const silent = net.createServer(() => {}); // accepts, never answers
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const base = `http://127.0.0.1:${(silent.address() as net.AddressInfo).port}`;
      const client = createClient({ baseUrl: base, token: env.token, retry: false, timeoutMs: 100 });
      const error = await failure(client.listSubscriptions({ queueId: env.queueId }));
      expect(error.message).toBe(`ListSubscriptions: GET ${base}/v1/subscriptions?queue_id=${env.queueId} failed: no answer within 100 ms`);
      expect(error.failure).toBe('timeout');
      expect(error.cause).toBeDefined();
    } finally {
      silent.close();
    }
  });

  it('MUST name the upgrade and its URL when an event connection cannot be made', async () => {
    const port = await deadPort();
    const error = await failure(
      connectEvents({ baseUrl: `http://127.0.0.1:${port}/prefix`, token: env.token, subscriptionId: id(), capacity: 1 }),
    );
    expect(error.message).toBe(
      `ConnectEvents: GET ws://127.0.0.1:${port}/prefix/v1/events/connect failed: connect ECONNREFUSED 127.0.0.1:${port}`,
    );
    expect((error.cause as NodeJS.ErrnoException).code).toBe('ECONNREFUSED');
    expect(error.message).not.toContain(env.token);
  });

  it('MUST still answer normally against the real server', async () => {
    const client = createClient({ baseUrl: env.server.url, token: env.token, retry: false });
    expect((await client.listSubscriptions({ queueId: env.queueId })).items).toBeInstanceOf(Array);
  });
});

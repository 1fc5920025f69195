/**
 * The background lease sweep (spec/rules.md#s4-28 names it as missing; docs/operations.md,
 * Background work): an expired lease goes back to PENDING (or EXPIRED when its attempts are used
 * up) within one sweep interval even when nobody consumes the subscription and it is paused;
 * several nodes sweep one database without recovering a lease twice; claim-time recovery still
 * works. Real servers, both stores.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  configure,
  deliveries,
  eventually,
  publish,
  startTestServer,
  STORES,
  subscribe,
  type TestServer,
  TestSocket,
} from '@orbit/testing';

const SWEEP_MS = 200;

describe.each(STORES)('background lease sweep on %s', (kind) => {
  const servers: TestServer[] = [];
  const sockets: TestSocket[] = [];

  afterEach(async () => {
    for (const s of sockets.splice(0)) s.close();
    // The node that owns the database stops last (it drops it).
    for (const s of servers.splice(0).reverse()) await s.stop();
  });

  async function start(env: Record<string, string> = {}, shareWith?: TestServer): Promise<TestServer> {
    const server = await startTestServer(
      kind,
      { ORBIT_LEASE_DURATION_MS: '700', ORBIT_SWEEP_INTERVAL_MS: String(SWEEP_MS), ORBIT_POLL_INTERVAL_MS: '50', ...env },
      shareWith?.database,
    );
    servers.push(server);
    return server;
  }

  async function leaseOne(server: TestServer, token: string, subscriptionId: string): Promise<any> {
    const socket = await TestSocket.open(server.url, token);
    sockets.push(socket);
    expect((await socket.hello(subscriptionId)).type).toBe('events.welcome');
    const deliver = await socket.deliver();
    socket.close();
    await socket.waitClosed();
    return deliver.body.delivery;
  }

  it('MUST show a lease whose consumer left on a paused subscription as PENDING (or EXPIRED when attempts are used up) within one sweep interval', async () => {
    const server = await start();
    const boot = await server.bootstrap();
    const queue = boot.queue_ids.q!;
    const retrying = await subscribe(server.url, boot.token, queue);
    const exhausted = await subscribe(server.url, boot.token, queue, { max_attempts: 1 });
    await publish(server.url, boot.token, queue, 1);

    const a = await leaseOne(server, boot.token, retrying.id);
    const b = await leaseOne(server, boot.token, exhausted.id);
    await configure(server.url, boot.token, retrying.id, false);
    await configure(server.url, boot.token, exhausted.id, false);
    // Nobody consumes and both subscriptions are paused: only the background sweep can recover.
    const leaseEnd = Math.max(Date.parse(a.lease_until), Date.parse(b.lease_until));
    expect(Date.now()).toBeLessThan(leaseEnd);
    expect((await deliveries(server.url, boot.token, retrying.id))[0].state).toBe('LEASED');

    await new Promise((resolve) => setTimeout(resolve, leaseEnd - Date.now()));
    const [pending] = await eventually(
      async () => {
        const items = await deliveries(server.url, boot.token, retrying.id);
        return items[0].state === 'PENDING' ? items : null;
      },
      SWEEP_MS + 600,
      'PENDING',
    );
    const [expired] = await eventually(
      async () => {
        const items = await deliveries(server.url, boot.token, exhausted.id);
        return items[0].state === 'EXPIRED' ? items : null;
      },
      SWEEP_MS + 600,
      'EXPIRED',
    );
    expect(Date.now() - leaseEnd).toBeLessThan(SWEEP_MS + 600);

    // The decision is recoverExpiredLease's: attempts and epoch stay, the revision moves once.
    expect(pending).toMatchObject({ id: a.id, state: 'PENDING', attempts: 1, lease_epoch: '1', revision: String(BigInt(a.revision) + 1n) });
    expect(pending.lease_until).toBeUndefined();
    expect(expired).toMatchObject({ id: b.id, state: 'EXPIRED', attempts: 1, attempt_budget: 1, lease_epoch: '1' });

    // Claim-time recovery and redelivery still work once the subscription is resumed.
    await configure(server.url, boot.token, retrying.id, true);
    const again = await leaseOne(server, boot.token, retrying.id);
    expect(again).toMatchObject({ id: a.id, lease_epoch: '2', attempts: 2 });
  });

  it('MUST recover each expired lease exactly once while two nodes sweep one database in small batches', async () => {
    const env = { ORBIT_SWEEP_BATCH_SIZE: '3', ORBIT_SWEEP_INTERVAL_MS: '50', ORBIT_LEASE_DURATION_MS: '2500' };
    const first = await start(env);
    const boot = await first.bootstrap();
    const queue = boot.queue_ids.q!;
    const subscription = await subscribe(first.url, boot.token, queue);
    await publish(first.url, boot.token, queue, 20);
    const socket = await TestSocket.open(first.url, boot.token);
    sockets.push(socket);
    await socket.hello(subscription.id, 32);
    const leased = await eventually(
      async () => (socket.frames.filter((f) => f.type === 'event.deliver').length === 20 ? true : null),
      10_000,
      'twenty deliveries',
    );
    expect(leased).toBe(true);
    socket.close();
    await configure(first.url, boot.token, subscription.id, false);
    const second = await start(env, first);

    const items = await eventually(
      async () => {
        const list = await deliveries(first.url, boot.token, subscription.id);
        return list.length === 20 && list.every((d) => d.state === 'PENDING') ? list : null;
      },
      10_000,
      'all recovered',
    );
    // new (1) → leased (2) → recovered (3): a second recovery would have moved it again.
    expect(new Set(items.map((d) => d.revision))).toEqual(new Set(['3']));
    const recovered = async (server: TestServer) => {
      const text = (await server.orbit.metrics.exposition()).body;
      return Number(/^orbit_leases_recovered_total\{state="PENDING"\} (\d+)$/m.exec(text)![1]);
    };
    expect((await recovered(first)) + (await recovered(second))).toBe(20);
  });
});

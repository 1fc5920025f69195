/**
 * Nodes whose clocks disagree still agree on leases (spec/README.md "The database's clock"): a
 * lease's start, end and expiry are the database's time. Three `orbit serve` processes on one
 * database, one with its clock a minute fast and one a minute slow, share a subscription. With
 * node clocks, the fast node recovered the normal node's lease at once and the slow node's leases
 * were expired for everyone else the moment they were made: one delivery held twice either way.
 */
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Store } from '../src/store/store.ts';
import { api, freshDatabase, ORBIT_BIN, type OrbitProcess, serveOrbit, STORES, type TestDatabase, TestSocket } from '@orbit/testing';

const SKEWED_CLOCK = fileURLToPath(new URL('./fixtures/skewed-clock.mjs', import.meta.url));
const LEASE_MS = 4000;
const TASK = '66666666666666666666666666666666';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.each(STORES)('nodes with skewed clocks on %s', (kind) => {
  let database: TestDatabase;
  let store: Store;
  const nodes: Record<'normal' | 'fast' | 'slow', OrbitProcess> = {} as never;
  const sockets: TestSocket[] = [];

  const settings = { ORBIT_LEASE_DURATION_MS: String(LEASE_MS), ORBIT_SWEEP_INTERVAL_MS: '100', ORBIT_POLL_INTERVAL_MS: '50' };
  const start = (skewMs: number) =>
    serveOrbit(['--listen', '127.0.0.1:0', '--database', database.url], { ...settings, ORBIT_TEST_CLOCK_SKEW_MS: String(skewMs) }, 20_000, [
      '--import',
      SKEWED_CLOCK,
      ORBIT_BIN,
    ]);

  beforeAll(async () => {
    database = await freshDatabase(kind);
    store = await Store.open(database.url);
    nodes.normal = await start(0);
    nodes.fast = await start(60_000);
    nodes.slow = await start(-60_000);
  });
  afterAll(async () => {
    for (const s of sockets) s.close();
    await Promise.all(Object.values(nodes).map((n) => n.stop()));
    await store.close();
    await database.drop();
  });

  async function leaseOf(deliveryId: string): Promise<{ state: string; epoch: string; leftMs: number }> {
    const [row] = await store.db.all(
      `SELECT state, lease_epoch, lease_until - ${kind === 'mysql' ? 'CAST(UNIX_TIMESTAMP(NOW(3)) * 1000 AS SIGNED)' : "CAST(unixepoch('subsec') * 1000 AS INTEGER)"} AS left_ms FROM deliveries WHERE id = ?`,
      [deliveryId],
    );
    return { state: String(row!.state), epoch: String(row!.lease_epoch), leftMs: Number(row!.left_ms) };
  }

  it('lets no node hold a delivery that another node leased, and expires none early', async () => {
    const boot = await store.bootstrap({
      namespace: 'skew',
      application: 'app',
      queues: ['q'],
      permissions: ['events:manage', 'events:consume', 'results:publish'],
    });
    const queueId = boot.queue_ids.q!;
    const sub = (
      await api(nodes.normal.url, 'POST', '/v1/subscriptions', {
        token: boot.token,
        key: 'skew',
        body: { name: 'skew', queue_id: queueId },
        expect: 'validateSubscriptionResult',
      })
    ).json.data.subscription;
    const publish = async (n: number) => {
      for (let i = 0; i < n; i++) {
        const r = await api(nodes.normal.url, 'POST', `/v1/queues/${queueId}/results`, {
          token: boot.token,
          key: `skew-${Math.random()}`,
          body: { type: 'task.succeeded', task_id: TASK, task_revision: String(i + 1) },
        });
        expect(r.status).toBe(201);
      }
    };
    const consumer = async (node: OrbitProcess) => {
      const s = await TestSocket.open(node.url, boot.token);
      sockets.push(s);
      await s.hello(sub.id, 1);
      return s;
    };

    // The normal node leases the first delivery; the fast node, a minute ahead, waits with room.
    const normal = await consumer(nodes.normal);
    await publish(1);
    const first = await normal.deliver();
    const fast = await consumer(nodes.fast);
    await sleep(LEASE_MS / 2);
    expect(fast.frames.filter((f) => f.type === 'event.deliver')).toEqual([]);
    expect(await leaseOf(first.body.delivery.id)).toMatchObject({ state: 'LEASED', epoch: '1' });

    // The slow node, a minute behind, is the only consumer when the second result comes: its lease
    // lasts the full lease time by the database's clock, and the normal node, connected again
    // with room, does not take it meanwhile.
    expect((await normal.ack(first)).type).toBe('ack');
    for (const s of [normal, fast]) {
      s.close();
      await s.waitClosed();
    }
    const slow = await consumer(nodes.slow);
    await publish(1);
    const second = await slow.deliver();
    expect(second.body.delivery.lease_epoch).toBe('1');
    const lease = await leaseOf(second.body.delivery.id);
    expect(lease.state).toBe('LEASED');
    expect(lease.leftMs).toBeGreaterThan(LEASE_MS / 2);
    expect(lease.leftMs).toBeLessThanOrEqual(LEASE_MS);
    const again = await consumer(nodes.normal);
    await sleep(LEASE_MS / 4);
    expect(again.frames.filter((f) => f.type === 'event.deliver')).toEqual([]);
    expect(await leaseOf(second.body.delivery.id)).toMatchObject({ state: 'LEASED', epoch: '1' });
    for (const s of [normal, fast, slow, again]) expect(s.invalid).toEqual([]);
  });
});

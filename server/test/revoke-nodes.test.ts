/**
 * `orbit credentials revoke` ends a credential everywhere (docs/operations.md "Credentials"): two
 * `orbit serve` processes on one database, a connection of the credential on each; after the
 * command, HTTP answers 401 on both nodes (within the 1 s bound of the principal cache) and both
 * connections get `UNAUTHENTICATED` and close within about a second (spec/README.md "Authorization
 * while connected").
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Store } from '../src/store/store.ts';
import {
  api,
  eventually,
  freshDatabase,
  runOrbit,
  type ServerProcess,
  spawnServer,
  STORES,
  type TestDatabase,
  TestSocket,
} from '@orbit/testing';

describe.each(STORES)('revoking a credential served by two nodes on %s', (kind) => {
  let database: TestDatabase;
  let store: Store;
  const nodes: ServerProcess[] = [];

  beforeAll(async () => {
    database = await freshDatabase(kind);
    store = await Store.open(database.url);
    for (let i = 0; i < 2; i++) nodes.push(await spawnServer(database.url, { ORBIT_POLL_INTERVAL_MS: '50' }));
  });
  afterAll(async () => {
    await Promise.all(nodes.map((n) => n.stop()));
    await store.close();
    await database.drop();
  });

  it('answers 401 on every node and closes every connection of the credential within about a second', async () => {
    const boot = await store.bootstrap({
      namespace: 'revoke',
      application: 'app',
      queues: ['q'],
      permissions: ['events:manage', 'events:read', 'events:consume'],
    });
    const queueId = boot.queue_ids.q!;
    const created = await api(nodes[0]!.url, 'POST', '/v1/subscriptions', {
      token: boot.token,
      key: 'revoke',
      body: { name: 'revoke', queue_id: queueId },
      expect: 'validateSubscriptionResult',
    });
    const subscriptionId = created.json.data.subscription.id as string;
    const sockets = await Promise.all(nodes.map((n) => TestSocket.open(n.url, boot.token)));
    for (const s of sockets) await s.hello(subscriptionId, 1);

    const revoked = await runOrbit(['credentials', 'revoke', boot.credential_id, '--database', database.url]);
    expect(revoked.code, revoked.stderr).toBe(0);
    const after = performance.now();
    for (const s of sockets) {
      const error = await s.next((f) => f.type === 'error', 5000);
      expect(error.error!.code).toBe('UNAUTHENTICATED');
      expect((await s.waitClosed()).code).toBe(1008);
      expect(s.invalid).toEqual([]);
    }
    // About a second: the staleness bound plus one check interval, with room for a loaded machine.
    expect(performance.now() - after).toBeLessThan(3000);
    // HTTP authentication answers from a cache at most 1 s old (server/src/store/principal-cache.ts).
    for (const node of nodes) {
      const list = async () => (await api(node.url, 'GET', `/v1/subscriptions?queue_id=${queueId}`, { token: boot.token })).status;
      await eventually(async () => (await list()) === 401, 3000, 'a 401 after the revoke');
      expect(performance.now() - after).toBeLessThan(4000);
    }
  });
});

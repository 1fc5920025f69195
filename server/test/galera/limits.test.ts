/**
 * A decision that rests on a locked row holds across Galera nodes. Galera certifies a transaction
 * against the rows it changes, not the rows it locked, so two nodes can both pass a check made
 * under `SELECT … FOR UPDATE`. The namespace's 64-subscription limit is such a check: with 63
 * subscriptions, creations sent through the three nodes at once must let exactly one through.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SUBSCRIPTION_LIMIT } from '../../src/domain/subscription.ts';
import { api, startTestServer, subscribe, type TestServer } from '@orbit/testing';
import { clusterDatabase, type ClusterDatabase } from './cluster.ts';

const ROUNDS = 4;

describe('locked decisions across Galera nodes', () => {
  let database: ClusterDatabase;
  const servers: TestServer[] = [];

  beforeAll(async () => {
    database = await clusterDatabase();
    for (const url of database.urls) servers.push(await startTestServer('mysql', {}, { url, name: database.name, drop: async () => {} }));
  });
  afterAll(async () => {
    for (const server of servers) await server.stop();
    await database?.drop();
  });

  it.each(Array.from({ length: ROUNDS }, (_, i) => i + 1))(
    'creations through three nodes at once never pass the subscription limit (round %i)',
    async (round) => {
      const boot = await servers[0]!.bootstrap({ namespace: `limit${round}`, queues: ['q'] });
      const queueId = boot.queue_ids.q!;
      for (let i = 0; i < SUBSCRIPTION_LIMIT - 1; i++) await subscribe(servers[i % 3]!.url, boot.token, queueId);
      const racing = await Promise.all(
        servers.map((server, i) =>
          api(server.url, 'POST', '/v1/subscriptions', {
            token: boot.token,
            key: `race-${round}-${i}`,
            body: { name: `race${i}`, queue_id: queueId },
          }),
        ),
      );
      expect(racing.map((r) => r.status).sort()).toEqual([201, 409, 409]);
      expect(racing.filter((r) => r.status === 409).map((r) => r.json.error.code)).toEqual(['SUBSCRIPTION_LIMIT', 'SUBSCRIPTION_LIMIT']);
      const [row] = await servers[1]!.orbit.store.db.all(
        'SELECT COUNT(*) AS n FROM subscriptions WHERE namespace_id = ? AND retired_at IS NULL',
        [boot.namespace_id],
      );
      expect(Number(row!.n)).toBe(SUBSCRIPTION_LIMIT);
    },
  );
});

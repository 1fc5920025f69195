/**
 * Migrations on Galera: three `orbit migrate` processes, each on a different node, started together
 * on a new database, apply the chain exactly once between them and all succeed. A node-local
 * `GET_LOCK` cannot keep them apart (each node grants it); the runner takes a lock row instead.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { migrationsFor } from '../../src/store/migrations.ts';
import { migrateTogether } from '../migrate-together.ts';
import { clusterDatabase, onNode, type ClusterDatabase } from './cluster.ts';

const tags = migrationsFor('mysql').map((m) => m.tag);

describe('migrations on a three-node Galera cluster', () => {
  const databases: ClusterDatabase[] = [];
  afterAll(async () => {
    for (const database of databases) await database.drop();
  });

  // Several rounds: one round that happens not to overlap would prove nothing.
  it.each([1, 2, 3])('three nodes starting together apply the chain once (round %i)', async () => {
    const database = await clusterDatabase();
    databases.push(database);
    await migrateTogether(database.urls, 'mysql');
    for (const node of [0, 1, 2]) {
      await onNode(
        node,
        async (conn) => {
          const [rows] = await conn.query('SELECT name FROM orbit_migrations ORDER BY version');
          expect((rows as { name: string }[]).map((r) => r.name)).toEqual(tags);
          const [head] = await conn.query('SELECT id FROM result_head');
          expect(head).toHaveLength(1);
        },
        database.name,
      );
    }
  });
});

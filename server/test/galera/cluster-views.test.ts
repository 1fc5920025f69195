/**
 * Cross-node views on Galera: three `orbit serve`, each on its own Galera node; every node lists a
 * subscription's sessions on all three and reports the same cluster-wide counts, and a SIGKILLed
 * node's sessions leave within the node timeout (the scenario of `../cluster-views.ts`).
 */
import { describe, it } from 'vitest';
import { Store } from '../../src/store/store.ts';
import { crossNodeViews } from '../cluster-views.ts';
import { clusterDatabase } from './cluster.ts';

describe('connected sessions across three Galera nodes', () => {
  it('every node lists every session and counts it once; a killed node’s sessions leave within the node timeout', async () => {
    const database = await clusterDatabase();
    const store = await Store.open(database.urls[0]!);
    try {
      await crossNodeViews(database.urls, store);
    } finally {
      await store.close();
      await database.drop();
    }
  });
});

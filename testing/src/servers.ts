/**
 * @module
 * In-process servers for tests: `startServer` of the server package's public entry, on a free
 * loopback port and a fresh database, with a shortcut to bootstrap a credential.
 */
import { loadSettings } from '@orbit/server';
import { type BootstrapResult, type RunningNode, startNode } from '../../server/src/internal.ts';
import { freshDatabase, type StoreKind, type TestDatabase } from './databases.ts';

export interface TestServer extends RunningNode {
  readonly database: TestDatabase;
  bootstrap(
    options?: Partial<{ namespace: string; application: string; queues: string[]; permissions: string[] }>,
  ): Promise<BootstrapResult>;
  stop(): Promise<void>;
}

export const ALL_PERMISSIONS = ['events:manage', 'events:read', 'events:consume', 'results:publish'];

/**
 * Starts a server on 127.0.0.1 with a free port and a fresh database (or `database`, which `stop`
 * then leaves in place); `env` shortens timings.
 */
export async function startTestServer(kind: StoreKind, env: Record<string, string> = {}, database?: TestDatabase): Promise<TestServer> {
  const db = database ?? (await freshDatabase(kind));
  const settings = loadSettings({ ...env }, { listen: '127.0.0.1:0', databaseUrl: db.url });
  const running = await startNode(settings);
  return {
    ...running,
    database: db,
    bootstrap(options = {}) {
      return running.orbit.store.bootstrap({
        namespace: options.namespace ?? 'ns',
        application: options.application ?? 'app',
        queues: options.queues ?? ['q'],
        permissions: options.permissions ?? ALL_PERMISSIONS,
      });
    },
    async stop() {
      await running.close();
      if (!database) await db.drop();
    },
  };
}

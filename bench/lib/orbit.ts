/**
 * @module
 * Orbit setups for the benchmark: fresh databases on both stores, the server in this process
 * (`startServer`, what `orbit serve` runs) or as real `orbit serve` processes, and fixtures
 * (credentials, subscriptions) made through the store's own API.
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { loadSettings } from '@orbit/server';
import { type BootstrapResult, type RunningNode, startNode, type Store } from '../../server/src/internal.ts';
import { ALL_PERMISSIONS, freshDatabase as testDatabase, serveOrbit, type TestDatabase } from '@orbit/testing';
import { withTimeout } from './util.ts';

export type StoreKind = 'mysql' | 'sqlite';

export const MYSQL_ROOT = process.env.ORBIT_BENCH_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306';

export interface BenchDatabase extends TestDatabase {
  readonly kind: StoreKind;
}

/** A fresh database named `orbit_bench_*` (the tests' helper with the benchmark's prefix and server). */
export async function freshDatabase(kind: StoreKind): Promise<BenchDatabase> {
  return { kind, ...(await testDatabase(kind, { prefix: 'orbit_bench', mysqlRoot: MYSQL_ROOT })) };
}

export interface ServerErrors {
  count: number;
  samples: string[];
}

/** `startServer` in this process on a free loopback port; logged errors are collected. */
export async function startInProcess(
  db: BenchDatabase,
  env: Record<string, string> = {},
): Promise<{ server: RunningNode; errors: ServerErrors }> {
  const settings = loadSettings(env, { listen: '127.0.0.1:0', databaseUrl: db.url });
  const errors: ServerErrors = { count: 0, samples: [] };
  const server = await startNode(settings, (level, message, fields) => {
    if (level !== 'warn' && level !== 'error') return;
    errors.count++;
    if (errors.samples.length < 5) errors.samples.push(`${level} ${message} ${JSON.stringify(fields ?? {})}`.slice(0, 400));
  });
  return { server, errors };
}

export function bootstrap(store: Store, namespace: string, queues: string[] = ['q'], application = 'bench-app'): Promise<BootstrapResult> {
  return store.bootstrap({ namespace, application, queues, permissions: ALL_PERMISSIONS });
}

/** Creates a subscription through the store (the same code path as `POST /v1/subscriptions`). */
export async function createSubscription(
  store: Store,
  token: string,
  input: { name: string; queue_id: string; max_pending?: number; from_sequence?: string },
): Promise<string> {
  const principal = await store.authenticate(token);
  if (!principal) throw new Error('bench credential did not authenticate');
  const written = await store.createSubscription(principal, input, {
    key: `bench-${input.name}-${randomBytes(6).toString('hex')}`,
    digest: randomBytes(32).toString('hex'),
    render: () => ({ status: 201, body: '{}' }),
  });
  if (written.replayed) throw new Error('a fresh bench subscription key was replayed');
  return written.value.id;
}

export interface OrbitProcess {
  readonly url: string;
  readonly pid: number;
  readonly child: ChildProcess;
  readonly output: string[];
  stop(): Promise<void>;
}

/**
 * `orbit serve` with `--expose-gc` and a SIGUSR2 handler that collects garbage (memory section).
 * `--max-semi-space-size=1` keeps V8's young generation at its initial size: after a burst of
 * allocation (128 upgrades) it would otherwise grow by up to 3 × 16 MiB and shrink again only when
 * V8's memory reducer runs, seconds later and not predictably, which would make RSS measure the
 * burst rather than the sessions. The old generation, native memory and buffers are unaffected.
 */
const GC_LAUNCHER = fileURLToPath(new URL('../serve-gc.mjs', import.meta.url));

/** A real `orbit serve` process on a free loopback port (read from its first log line). */
export async function spawnOrbit(
  databaseUrl: string,
  env: Record<string, string> = {},
  options: { gcLauncher?: boolean } = {},
): Promise<OrbitProcess> {
  const launcher = options.gcLauncher ? ['--expose-gc', '--max-semi-space-size=1', GC_LAUNCHER] : undefined;
  const server = await serveOrbit(['--listen', '127.0.0.1:0', '--database', databaseUrl], env, 30_000, launcher);
  return {
    url: server.url,
    pid: server.child.pid!,
    child: server.child,
    output: server.output,
    async stop() {
      try {
        await withTimeout(server.stop('SIGTERM'), 10_000, 'orbit serve shutdown');
      } catch {
        await server.stop('SIGKILL');
      }
    },
  };
}

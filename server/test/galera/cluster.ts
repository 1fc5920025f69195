/**
 * The three-node Galera cluster of `scripts/galera.sh` as tests see it: the nodes' MySQL URLs, a
 * fresh database on the cluster (created through node 1, replicated to all), crashing and
 * restarting a node, and the wsrep counters of each node.
 */
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import mysql from 'mysql2/promise';

export const GALERA_SCRIPT = fileURLToPath(new URL('../../../scripts/galera.sh', import.meta.url));

/**
 * Runs `scripts/galera.sh ARGS` (kill, restart, status) without blocking the event loop, so the
 * test's publishers and consumers keep running meanwhile; resolves with its output, rejects with it
 * when the script fails.
 */
export function galera(...args: string[]): Promise<string> {
  return galeraWith({}, ...args);
}

/** `galera(...)` with settings of its own added to the environment (another cluster: its ports, its namespaces). */
export function galeraWith(env: Record<string, string>, ...args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', [GALERA_SCRIPT, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 180_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      if (code === 0) resolve(output);
      else reject(new Error(`scripts/galera.sh ${args.join(' ')} failed (${code}): ${output}`));
    });
  });
}

/** The server URLs of nodes 1–3, without a database. */
export const NODE_URLS: readonly string[] = spawnSync('bash', [GALERA_SCRIPT, 'urls'], { encoding: 'utf8' }).stdout.trim().split('\n');

export interface ClusterDatabase {
  readonly name: string;
  /** The database on each node, in node order. */
  readonly urls: readonly string[];
  drop(): Promise<void>;
}

/** A uniquely named database, created through node 1 (replicated to all); every node's URL for it. */
export async function clusterDatabase(prefix = 'orbit_g'): Promise<ClusterDatabase> {
  const name = `${prefix}_${randomBytes(6).toString('hex')}`;
  await onNode(0, (conn) => conn.query(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin`));
  return {
    name,
    urls: NODE_URLS.map((url) => `${url}/${name}`),
    async drop() {
      await onNode(0, (conn) => conn.query(`DROP DATABASE IF EXISTS \`${name}\``));
    },
  };
}

/** Runs `fn` on a fresh connection to node `index` (0-based) and closes it. */
export async function onNode<T>(index: number, fn: (conn: mysql.Connection) => Promise<T>, database?: string): Promise<T> {
  const conn = await mysql.createConnection({
    uri: NODE_URLS[index]!,
    ...(database ? { database } : {}),
    supportBigNumbers: true,
    bigNumberStrings: true,
  });
  try {
    // A read here must see every write the cluster committed before it (see docs/operations.md).
    await conn.query('SET SESSION wsrep_sync_wait = 1');
    return await fn(conn);
  } finally {
    await conn.end();
  }
}

/** Certification failures and brute-force aborts so far on each node (Galera's conflict counters). */
export async function conflictCounters(): Promise<{ certFailures: number; bfAborts: number }> {
  let certFailures = 0;
  let bfAborts = 0;
  for (let i = 0; i < NODE_URLS.length; i++) {
    await onNode(i, async (conn) => {
      const [rows] = await conn.query("SHOW GLOBAL STATUS WHERE Variable_name IN ('wsrep_local_cert_failures', 'wsrep_local_bf_aborts')");
      for (const row of rows as { Variable_name: string; Value: string }[]) {
        if (row.Variable_name === 'wsrep_local_cert_failures') certFailures += Number(row.Value);
        else bfAborts += Number(row.Value);
      }
    });
  }
  return { certFailures, bfAborts };
}

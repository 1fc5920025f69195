/**
 * @module
 * Galera against one MariaDB, the same end-to-end case on both: three `orbit serve` processes, one
 * subscription with one consumer per node (capacity 32), results published over HTTP through the
 * three nodes in turn (16 in flight), each counted when its ACK is confirmed. Three layouts:
 *
 * - `one MariaDB`: the three Orbit nodes on the one database at 127.0.0.1:3306;
 * - `galera 3 writers`: each Orbit node on its own Galera node (`scripts/galera.sh`), so every node
 *   writes and the head row, subscription row and deliveries conflict across nodes;
 * - `galera 1 writer`: the three Orbit nodes on Galera node 1, the other two nodes replicas that a
 *   load balancer would fail over to;
 * - `galera 1 writer via HAProxy`: the same through Debian's haproxy running
 *   `deploy/haproxy/galera-writer.cfg` (docs/operations.md, "Galera behind one writer"), as it is
 *   deployed: what the proxy's extra hop costs. Left out, with a note, when haproxy is missing.
 *
 * Galera's conflicts are read from its own counters at the window's edges, summed over the nodes:
 * `wsrep_local_cert_failures` (a transaction failed certification at commit) and
 * `wsrep_local_bf_aborts` (a local transaction was aborted by a replicated one). Orbit runs each
 * such transaction again; the row gives both per event. The section boots the cluster when none is
 * running (about a minute) and stops what it started.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import mysql from 'mysql2/promise';
import { haproxyMissing, startWriterProxy } from '@orbit/testing';
import { Store } from '../../server/src/internal.ts';
import { mysqlCounters } from '../lib/machine.ts';
import { measureRate, type Producer, type RateSample, type Timing } from '../lib/measure.ts';
import { bootstrap, createSubscription, spawnOrbit, type OrbitProcess } from '../lib/orbit.ts';
import { median, sleep } from '../lib/util.ts';
import type { WorkerClient } from '../lib/worker-client.ts';
import { leadFor } from './e2e.ts';

const run = promisify(execFile);
const SCRIPT = fileURLToPath(new URL('../../scripts/galera.sh', import.meta.url));

export const GALERA_LAYOUTS = ['one MariaDB', 'galera 3 writers', 'galera 1 writer', 'galera 1 writer via HAProxy'] as const;
export type GaleraLayout = (typeof GALERA_LAYOUTS)[number];

/** The case every layout runs. */
export const GALERA_CASE = { subscriptions: 1, connections: 3, capacity: 32 } as const;
export const GALERA_CASE_LABEL = '3 nodes, 1 sub × 3 conn (1 per node) × cap 32, HTTP publish via 3 nodes';

export interface GaleraResult {
  readonly layout: GaleraLayout;
  readonly runs: RateSample[];
  readonly eventsPerS: number;
  readonly median: RateSample;
  /** Certification failures plus brute-force aborts per event (median run); Galera layouts only. */
  readonly conflictsPerEvent: number | null;
  readonly serverErrors: string[];
}

async function galera(command: string): Promise<string> {
  const { stdout } = await run('bash', [SCRIPT, command], { timeout: 240_000, encoding: 'utf8' });
  return stdout;
}

/** Sums Galera's conflict counters (and the commits) over every node. */
async function clusterCounters(monitors: readonly mysql.Connection[]): Promise<Record<string, number>> {
  const out: Record<string, number> = { cert_failures: 0, bf_aborts: 0, commits: 0 };
  const names: Record<string, string> = {
    wsrep_local_cert_failures: 'cert_failures',
    wsrep_local_bf_aborts: 'bf_aborts',
    Com_commit: 'commits',
  };
  for (const monitor of monitors) {
    const [rows] = await monitor.query(
      "SHOW GLOBAL STATUS WHERE Variable_name IN ('wsrep_local_cert_failures', 'wsrep_local_bf_aborts', 'Com_commit')",
    );
    for (const row of rows as { Variable_name: string; Value: string }[]) out[names[row.Variable_name]!]! += Number(row.Value);
  }
  return out;
}

/** CPU by role: the three Orbit processes as `server`, the database processes as `db`. */
function byRole(cpu: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [name, value] of Object.entries(cpu)) {
    const role = name.startsWith('orbit') ? 'server' : name.startsWith('db') ? 'db' : name;
    out[role] = (out[role] ?? 0) + value;
  }
  return out;
}

function errorLines(nodes: readonly OrbitProcess[]): string[] {
  return nodes.flatMap((n) =>
    n.output
      .join('')
      .split('\n')
      .filter((line) => line.includes('"level":"error"') || line.includes('"level":"warn"'))
      .slice(0, 3),
  );
}

async function runLayout(args: {
  layout: GaleraLayout;
  urls: readonly string[];
  monitorUrls: readonly string[];
  dbPids: readonly number[];
  /** Processes of the layout that are neither Orbit nor a database (the proxy). */
  otherPids?: Readonly<Record<string, number>>;
  consumer: WorkerClient;
  publisher: WorkerClient;
  timing: Timing;
}): Promise<GaleraResult> {
  const { layout, consumer, publisher, timing } = args;
  const name = `orbit_bench_${randomBytes(6).toString('hex')}`;
  const databaseUrls = args.urls.map((url) => `${url}/${name}`);
  // A new database for the layout, created through the first node (Galera replicates it to the others).
  const store = await Store.open(databaseUrls[0]!, { createDatabase: true });
  const nodes: OrbitProcess[] = [];
  const monitors = await Promise.all(args.monitorUrls.map((uri) => mysql.createConnection({ uri })));
  try {
    for (const url of databaseUrls) nodes.push(await spawnOrbit(url));
    const runs: RateSample[] = [];
    for (let r = 0; r < timing.runs; r++) {
      const cred = await bootstrap(store, `galera-${r}`, ['q']);
      const queueId = cred.queue_ids.q!;
      const subscriptionId = await createSubscription(store, cred.token, { name: `g${r}`, queue_id: queueId, max_pending: 1000 });
      await consumer.request({ op: 'reset' });
      for (const node of nodes)
        await consumer.request(
          {
            op: 'orbit-consumers',
            url: node.url,
            token: cred.token,
            groups: [{ subscriptionId, connections: 1, capacity: GALERA_CASE.capacity }],
          },
          30_000,
        );
      let relay: NodeJS.Timeout | undefined;
      const producer: Producer = {
        start: async () => {
          relay = setInterval(() => publisher.tell({ type: 'acked', count: consumer.progress }), 10);
          await publisher.request({ op: 'reset' });
          await publisher.request({
            op: 'http-publish',
            urls: nodes.map((n) => n.url),
            token: cred.token,
            queueId,
            concurrency: 16,
            lead: leadFor(GALERA_CASE),
            fanout: 1,
            maxMs: timing.warmupMs + timing.measureMs + 10_000,
          });
        },
        stop: async () => {
          await publisher.request({ op: 'stop-publish' }, 20_000);
          clearInterval(relay);
        },
      };
      const pids: Record<string, number | null> = { publisher: publisher.pid };
      for (const [i, n] of nodes.entries()) pids[`orbit${i}`] = n.pid;
      for (const [i, pid] of args.dbPids.entries()) pids[`db${i}`] = pid;
      Object.assign(pids, args.otherPids);
      try {
        const sample = await measureRate({
          consumer,
          producer,
          timing,
          pids,
          selfName: 'bench',
          counters: () => (layout === 'one MariaDB' ? mysqlCounters(monitors[0]!) : clusterCounters(monitors)),
        });
        runs.push({ ...sample, cpuUsPerEvent: byRole(sample.cpuUsPerEvent) });
      } finally {
        await consumer.request({ op: 'close-consumers' }, 20_000);
        await sleep(50);
      }
    }
    const sorted = [...runs].sort((a, b) => a.eventsPerS - b.eventsPerS);
    const middle = sorted[sorted.length >> 1]!;
    const counters = middle.countersPerEvent;
    return {
      layout,
      runs,
      eventsPerS: median(runs.map((s) => s.eventsPerS)),
      median: middle,
      conflictsPerEvent: layout === 'one MariaDB' || !counters ? null : (counters.cert_failures ?? 0) + (counters.bf_aborts ?? 0),
      serverErrors: errorLines(nodes),
    };
  } finally {
    await Promise.all(nodes.map((n) => n.stop()));
    await Promise.all(monitors.map((m) => m.end()));
    await store.db.run(`DROP DATABASE IF EXISTS \`${name}\``).catch(() => undefined);
    await store.close();
  }
}

/** Runs the three layouts; boots the Galera cluster first if none is running. */
export async function galeraBench(args: {
  mariadbRoot: string;
  mariadbPid: number | null;
  consumer: WorkerClient;
  publisher: WorkerClient;
  timing: Timing;
  selected: (layout: GaleraLayout) => boolean;
  log: (text: string) => void;
}): Promise<{ results: GaleraResult[]; problems: string[] }> {
  const problems: string[] = [];
  const results: GaleraResult[] = [];
  const wanted = GALERA_LAYOUTS.filter(args.selected);
  const common = { consumer: args.consumer, publisher: args.publisher, timing: args.timing };
  if (wanted.includes('one MariaDB')) {
    args.log(`galera section: one MariaDB, ${GALERA_CASE_LABEL}`);
    results.push(
      await runLayout({
        ...common,
        layout: 'one MariaDB',
        urls: [args.mariadbRoot, args.mariadbRoot, args.mariadbRoot],
        monitorUrls: [args.mariadbRoot],
        dbPids: args.mariadbPid === null ? [] : [args.mariadbPid],
      }),
    );
  }
  if (!wanted.some((l) => l.startsWith('galera'))) return { results, problems };
  let started = false;
  try {
    await galera('status');
  } catch {
    args.log('galera section: starting a three-node cluster (scripts/galera.sh start)');
    try {
      await galera('stop');
      await galera('start');
      started = true;
    } catch (error) {
      problems.push(`galera: the cluster did not start, Galera rows skipped: ${String(error).slice(0, 400)}`);
      return { results, problems };
    }
  }
  try {
    const nodes = (await galera('urls')).trim().split('\n');
    const pids = (await galera('pids')).trim().split('\n').map(Number);
    for (const layout of wanted.filter((l) => l.startsWith('galera'))) {
      args.log(`galera section: ${layout}, ${GALERA_CASE_LABEL}`);
      if (layout === 'galera 1 writer via HAProxy') {
        const missing = haproxyMissing();
        if (missing) {
          problems.push(`galera: "${layout}" skipped: ${missing}`);
          continue;
        }
        const proxy = await startWriterProxy(nodes.map((url) => new URL(url).host));
        try {
          results.push(
            await runLayout({
              ...common,
              layout,
              urls: [proxy.url, proxy.url, proxy.url],
              monitorUrls: nodes,
              dbPids: pids,
              otherPids: proxy.process.pid === undefined ? {} : { haproxy: proxy.process.pid },
            }),
          );
        } finally {
          proxy.stop();
        }
        continue;
      }
      results.push(
        await runLayout({
          ...common,
          layout,
          urls: layout === 'galera 3 writers' ? nodes : [nodes[0]!, nodes[0]!, nodes[0]!],
          monitorUrls: nodes,
          dbPids: pids,
        }),
      );
    }
  } finally {
    if (started) await galera('stop').catch((error: unknown) => problems.push(`galera: stop failed: ${String(error)}`));
  }
  return { results, problems };
}

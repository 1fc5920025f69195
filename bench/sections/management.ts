/**
 * @module
 * Management API throughput at 32 concurrent keep-alive clients (a closed loop in a child
 * process): `GET /v1/subscriptions/{id}` and `POST /v1/subscriptions`, each as a ratio to a bare
 * Hono route in the same process that does the same bearer lookup (`authenticate` through the
 * store's principal cache, as Orbit's routes do: token digest → principal, the credential and
 * queue rows read at most once a second) and answers a small JSON body.
 *
 * Creates are spread round-robin over fresh namespaces (a namespace holds at most 64
 * subscriptions); a run that exhausts them stops early and is measured up to its last answer.
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { createAdaptorServer } from '@hono/node-server';
import { Hono } from 'hono';
import { authenticate } from '../../server/src/internal.ts';
import { selfCpuMs, processCpuMs } from '../lib/machine.ts';
import { bootstrap, createSubscription, startInProcess, type BenchDatabase } from '../lib/orbit.ts';
import { median } from '../lib/util.ts';
import type { WorkerClient } from '../lib/worker-client.ts';

export const CONCURRENCY = 32;
const CREATE_NAMESPACES = 96;

export type ManagementRoute = 'bare' | 'get' | 'create';

export interface ManagementResult {
  readonly route: ManagementRoute;
  readonly rps: number;
  readonly runs: number[];
  readonly failures: number;
  readonly capped: boolean;
  readonly cpuUsPerRequest: Record<string, number>;
}

export async function managementBench(
  db: BenchDatabase,
  load: WorkerClient,
  dbPid: number | null,
  timing: { warmupMs: number; measureMs: number; runs: number },
): Promise<ManagementResult[]> {
  const { server } = await startInProcess(db);
  const store = server.orbit.store;
  const bare = new Hono();
  bare.get('/bench/bare', async (c) => {
    const principal = await authenticate(store.authenticator, c.req.header('authorization'));
    return c.json({ request_id: '00000000000000000000000000000000', data: { credential_id: principal.credentialId } });
  });
  const bareServer = createAdaptorServer({ fetch: bare.fetch }) as Server;
  await new Promise<void>((resolve) => bareServer.listen(0, '127.0.0.1', () => resolve()));
  const bareUrl = `http://127.0.0.1:${(bareServer.address() as AddressInfo).port}`;
  let runCounter = 0;
  try {
    const main = await bootstrap(store, 'mgmt', ['q']);
    const subscriptionId = await createSubscription(store, main.token, { name: 'read-me', queue_id: main.queue_ids.q! });
    const routes = ['bare', 'get', 'create'] as const;
    const acc = new Map<ManagementRoute, { runs: number[]; failures: number; capped: boolean; cpus: Record<string, number>[] }>(
      routes.map((r) => [r, { runs: [], failures: 0, capped: false, cpus: [] }]),
    );
    // Warm-up (not recorded): both HTTP stacks and the store's statements get compiled first.
    for (const [url, path] of [
      [bareUrl, '/bench/bare'],
      [server.url, `/v1/subscriptions/${subscriptionId}`],
    ] as const) {
      await load.request(
        {
          op: 'http-load',
          kind: 'get',
          url,
          path,
          tokens: [main.token],
          queueIds: [],
          concurrency: CONCURRENCY,
          warmupMs: 500,
          measureMs: 1,
        },
        30_000,
      );
    }
    // Rounds interleave the routes, so drift in the machine's load affects all of them alike.
    for (let r = 0; r < timing.runs; r++) {
      for (const route of routes) {
        const a = acc.get(route)!;
        let tokens = [main.token];
        let queueIds = [main.queue_ids.q!];
        if (route === 'create') {
          tokens = [];
          queueIds = [];
          for (let n = 0; n < CREATE_NAMESPACES; n++) {
            const cred = await bootstrap(store, `mgmt-create-${++runCounter}`, ['q']);
            tokens.push(cred.token);
            queueIds.push(cred.queue_ids.q!);
          }
        }
        const cpu0 = { server: selfCpuMs(), db: dbPid === null ? NaN : processCpuMs(dbPid) };
        const reply = await load.request(
          {
            op: 'http-load',
            kind: route === 'create' ? 'create' : 'get',
            url: route === 'bare' ? bareUrl : server.url,
            path: route === 'bare' ? '/bench/bare' : `/v1/subscriptions/${subscriptionId}`,
            tokens,
            queueIds,
            perToken: 64,
            concurrency: CONCURRENCY,
            warmupMs: timing.warmupMs,
            measureMs: timing.measureMs,
          },
          timing.warmupMs + timing.measureMs + 30_000,
        );
        const ok = Math.max(1, Number(reply.ok));
        a.cpus.push({
          server: ((selfCpuMs() - cpu0.server) * 1000) / ok,
          db: ((processCpuMs(dbPid ?? -1) - cpu0.db) * 1000) / ok,
          publisher: (Number(reply.cpuMs) * 1000) / ok,
        });
        a.runs.push((Number(reply.inWindow) * 1000) / Number(reply.windowMs));
        a.failures += Number(reply.failures);
        a.capped ||= Boolean(reply.capped);
        if (Number(reply.failures) > 0) console.error(`management ${route}: ${reply.failures} failures ${JSON.stringify(reply.statuses)}`);
      }
    }
    const results: ManagementResult[] = routes.map((route) => {
      const a = acc.get(route)!;
      const cpuUsPerRequest: Record<string, number> = {};
      for (const key of Object.keys(a.cpus[0]!)) cpuUsPerRequest[key] = median(a.cpus.map((c) => c[key]!));
      return { route, rps: median(a.runs), runs: a.runs, failures: a.failures, capped: a.capped, cpuUsPerRequest };
    });
    return results;
  } finally {
    await new Promise<void>((resolve) => bareServer.close(() => resolve()));
    await server.close();
  }
}

/**
 * @module
 * The embeddable server: `createOrbit` returns the Hono app and what a Node HTTP server needs for
 * the WebSocket upgrade, so a team can mount Orbit in its own deployment, at the root or under a
 * base path (docs/embedding.md); `startServer` is what `orbit serve` runs (HTTP or HTTPS/WSS, an
 * optional separate metrics listener, graceful close).
 */
import type { IncomingMessage } from 'node:http';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { createAdaptorServer } from '@hono/node-server';
import type { Hono } from 'hono';
import { type ListenAddress, type Settings, settingValues } from './config.ts';
import { createHttpApp, createMetricsApp, normalizeBasePath, type AppEnv, type MetricsEndpoint } from './http/app.ts';
import { CONNECT_PATH } from '@orbit/spec/protocol';
import { DeliveryEngine } from './engine/engine.ts';
import { EventGateway } from './events/gateway.ts';
import { receiptRetentionJob, retentionJob, sweepJob, type PeriodicJob } from './ops/jobs.ts';
import type { Log } from './ops/log.ts';
import { OrbitMetrics } from './ops/metrics.ts';
import type { ResultEvent } from '@orbit/generated';
import { Store, type ResultInput } from './store/store.ts';
import { tracedPublish, tracingOn } from './tracing.ts';
import { eventJson } from './wire/json.ts';

/** A transaction of the in-process result seam: your own statements, and appends that commit or roll back with them. */
export interface OrbitTransaction {
  run(sql: string, params?: readonly unknown[]): Promise<{ changes: number }>;
  all(sql: string, params?: readonly unknown[]): Promise<Record<string, unknown>[]>;
  /** Appends results to the log in this transaction (spec/README.md, The result log). */
  appendResults(inputs: readonly ResultInput[]): Promise<ResultEvent[]>;
}

/** Orbit embedded in your process: mount `app`, `attach` the WebSocket entry, publish in-process. */
export interface Orbit {
  /** Serves the API, `/healthz`, `/readyz`, `/v1/openapi.json` and the console, all under `basePath`. */
  readonly app: Hono<AppEnv>;
  /** `''` or the prefix every route is under (`/orbit`). */
  readonly basePath: string;
  /** The WebSocket entry: `<basePath>/v1/events/connect`. */
  readonly connectPath: string;
  /** The app of a separate metrics listener (`/metrics` only), when `metrics_listen` is set. */
  readonly metricsApp: Hono<AppEnv> | null;
  /** Appends results in one transaction of their own; returns the events as subscribers will get them. */
  appendResults(inputs: readonly ResultInput[]): Promise<ResultEvent[]>;
  /** Runs `fn` in one database transaction; results it appends are announced once it commits. */
  transaction<T>(fn: (tx: OrbitTransaction) => Promise<T>): Promise<T>;
  /**
   * Attaches the `orbit.events.v1` upgrade handler to a Node HTTP server. It takes only upgrades
   * for `connectPath` and leaves every other upgrade to the server's other listeners (a host's
   * own WebSocket endpoints), unless `refuseOthers` (a server that is Orbit's alone: they get the
   * NOT_FOUND envelope).
   */
  attach(server: Server, options?: { refuseOthers?: boolean }): void;
  /** Whether an upgrade request is for `connectPath`: for a host that routes upgrades itself. */
  ownsUpgrade(request: IncomingMessage): boolean;
  /** Shutdown, first step: `/readyz` answers 503, upgrades are refused, jobs stop scheduling. */
  beginShutdown(): void;
  /** Stops background work (waiting for the running batch), drains claims and closes sessions with 1001; does not close the store. */
  close(): Promise<void>;
}

/** One node's Orbit with what the repository's own tools reach into: the store, the engine, metrics and jobs. */
export interface OrbitNode extends Orbit {
  readonly store: Store;
  readonly engine: DeliveryEngine;
  readonly metrics: OrbitMetrics;
  /** Background jobs of this node: the lease sweep, receipt expiry and, when configured, retention. */
  readonly jobs: readonly PeriodicJob[];
}

export interface OrbitOptions {
  readonly log?: Log;
  /** Serve everything under this path prefix (`/orbit`); default `''`, the root. */
  readonly basePath?: string;
}

/** Assembles a node on a store you opened (the CLI, tests and the benchmark); `close()` leaves the store open. */
export function assembleOrbit(options: OrbitOptions & { readonly store: Store; readonly settings: Settings }): OrbitNode {
  const { store, settings } = options;
  const log: Log = options.log ?? (() => {});
  const basePath = normalizeBasePath(options.basePath);
  const connectPath = `${basePath}${CONNECT_PATH}`;
  const metrics = new OrbitMetrics(store, {
    leaseDurationMs: settings.leaseDurationMs,
    backlogLimit: settings.metricsBacklogLimit,
    nodeTtlMs: settings.nodeTtlMs,
  });
  const engine = new DeliveryEngine(store.db, store.clock);
  const gateway = new EventGateway(store, engine, settings, log, metrics, connectPath);
  metrics.bindEngine({
    connections: () => gateway.connectionCount,
    sessions: () => gateway.sessionCount,
    claimPoolDepth: () => gateway.claimPoolDepth,
  });
  let draining = false;

  const endpoint: MetricsEndpoint | null =
    settings.metrics === 'off'
      ? null
      : { token: settings.metrics === 'token' ? settings.metricsToken : null, exposition: () => metrics.exposition() };
  const http = {
    log,
    onError: (error: unknown, requestId: string) =>
      log('error', 'request failed', { request_id: requestId, error: String((error as Error)?.stack ?? error) }),
    observe: (method: string, route: string, code: number, seconds: number) => metrics.httpRequest(method, route, code, seconds),
  };
  const app = createHttpApp(
    store,
    { requestTimeoutMs: settings.requestTimeoutMs, nodeTtlMs: settings.nodeTtlMs, effective: settingValues(settings) },
    {
      ...http,
      basePath,
      readiness: async () => (draining ? { ready: false, reason: 'the server is shutting down' } : store.readiness()),
      metrics: settings.metricsListen ? null : endpoint,
    },
  );
  const metricsApp =
    settings.metricsListen && endpoint ? createMetricsApp({ requestTimeoutMs: settings.requestTimeoutMs }, endpoint, http) : null;

  const deps = { store, engine, settings, log, metrics, onRecovered: () => gateway.wake() };
  const jobs = [sweepJob(deps), retentionJob(deps), receiptRetentionJob(deps)].filter((job): job is PeriodicJob => job !== null);
  for (const job of jobs) job.start();

  const beginShutdown = () => {
    draining = true;
    gateway.stopAccepting();
  };
  return {
    app,
    basePath,
    connectPath,
    metricsApp,
    store,
    engine,
    metrics,
    jobs,
    async appendResults(inputs) {
      const appended = tracingOn()
        ? await tracedPublish(
            inputs,
            (traced) => store.appendResults(traced),
            (records) => records,
          )
        : await store.appendResults(inputs);
      return appended.map(eventJson);
    },
    async transaction(fn) {
      let head: bigint | undefined;
      const value = await store.db.transaction((tx) =>
        fn({
          run: (sql, params = []) => tx.run(sql, params),
          all: (sql, params = []) => tx.all(sql, params),
          async appendResults(inputs) {
            const results = tracingOn()
              ? await tracedPublish(
                  inputs,
                  (traced) => store.appendResultsIn(tx, traced),
                  (records) => records,
                )
              : await store.appendResultsIn(tx, inputs);
            const last = results[results.length - 1];
            if (last) head = last.sequence;
            return results.map(eventJson);
          },
        }),
      );
      if (head !== undefined) store.notifyAppended(head);
      return value;
    },
    attach(server, attachOptions) {
      gateway.attach(server, attachOptions);
    },
    ownsUpgrade: (request) => gateway.owns(request),
    beginShutdown,
    async close() {
      beginShutdown();
      await Promise.all([gateway.close(), ...jobs.map((job) => job.stop())]);
    },
  };
}

/**
 * Opens the database that `settings.databaseUrl` names (applying migrations) and creates Orbit on
 * it: what a host app calls to embed Orbit (docs/embedding.md). Its `close()` also drains and
 * closes that database, after Orbit's own shutdown.
 */
export function createOrbit(settings: Settings, options: OrbitOptions = {}): Promise<Orbit> {
  return openNode(settings, options);
}

async function openNode(settings: Settings, options: OrbitOptions): Promise<OrbitNode> {
  const store = await Store.open(settings.databaseUrl, {
    connectionLimit: settings.databasePoolSize,
    createDatabase: settings.createDatabase,
  });
  const orbit = assembleOrbit({ ...options, store, settings });
  return {
    ...orbit,
    async close() {
      await orbit.close();
      await store.drain();
      await store.close();
    },
  };
}

export interface RunningServer {
  readonly orbit: Orbit;
  readonly server: Server;
  /** `http://HOST:PORT` or `https://HOST:PORT`. */
  readonly url: string;
  /** The separate metrics listener's URL, when there is one. */
  readonly metricsUrl: string | null;
  /**
   * Graceful close: stops accepting, lets in-flight requests and transactions finish, closes event
   * connections with 1001, then closes the store. Unbounded here; `orbit serve` bounds it with
   * `shutdown_timeout_ms`.
   */
  close(): Promise<void>;
}

function serve(fetch: Hono<AppEnv>['fetch'], settings: Settings): Server {
  const tls = settings.tls;
  const server = tls
    ? createAdaptorServer({ fetch, createServer: createHttpsServer, serverOptions: { cert: tls.cert, key: tls.key } })
    : createAdaptorServer({ fetch, createServer: createHttpServer });
  return server as Server;
}

async function listen(server: Server, address: ListenAddress): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(address.port, address.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const bound = server.address() as AddressInfo;
  return bound.family === 'IPv6' ? `[${bound.address}]:${bound.port}` : `${bound.address}:${bound.port}`;
}

/** Stops listening and resolves once every connection is gone, closing idle keep-alive ones as they become idle. */
function closeServer(server: Server): Promise<void> {
  if (!server.listening) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const sweep = setInterval(() => server.closeIdleConnections(), 50);
    server.close(() => {
      clearInterval(sweep);
      resolve();
    });
    server.closeIdleConnections();
  });
}

/** `startServer`'s answer with the node inside (the CLI, tests and the benchmark). */
export interface RunningNode extends RunningServer {
  readonly orbit: OrbitNode;
}

/** Opens the database (applying migrations), serves HTTP(S) and WebSocket, resolves once listening: `orbit serve`. */
export function startServer(settings: Settings, log?: Log): Promise<RunningServer> {
  return startNode(settings, log);
}

export async function startNode(settings: Settings, log?: Log): Promise<RunningNode> {
  const store = await Store.open(settings.databaseUrl, {
    connectionLimit: settings.databasePoolSize,
    createDatabase: settings.createDatabase,
  });
  const orbit = assembleOrbit({ store, settings, ...(log ? { log } : {}) });
  const scheme = settings.tls ? 'https' : 'http';
  const server = serve(orbit.app.fetch, settings);
  orbit.attach(server, { refuseOthers: true });
  let metricsServer: Server | null = null;
  try {
    const host = await listen(server, settings.listen);
    let metricsUrl: string | null = null;
    if (orbit.metricsApp && settings.metricsListen) {
      metricsServer = serve(orbit.metricsApp.fetch, settings);
      metricsUrl = `${scheme}://${await listen(metricsServer, settings.metricsListen)}`;
    }
    const stopped = { promise: null as Promise<void> | null };
    return {
      orbit,
      server,
      url: `${scheme}://${host}`,
      metricsUrl,
      close() {
        stopped.promise ??= (async () => {
          orbit.beginShutdown();
          const listeners = Promise.all([closeServer(server), metricsServer ? closeServer(metricsServer) : undefined]);
          await orbit.close();
          await listeners;
          await store.drain();
          await store.close();
        })();
        return stopped.promise;
      },
    };
  } catch (error) {
    await orbit.close();
    server.close();
    metricsServer?.close();
    await store.close();
    throw error;
  }
}

/**
 * @module
 * The embeddable server: `createOrbit` returns the Hono app and what a Node HTTP server needs for
 * the WebSocket upgrade, so a team can mount Orbit in its own deployment; `startServer` is what
 * `orbit serve` runs.
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { createAdaptorServer } from '@hono/node-server';
import type { Hono } from 'hono';
import type { Settings } from './config.ts';
import { createHttpApp, type AppEnv } from './http/app.ts';
import { EventGateway } from './events/gateway.ts';
import { Store } from './store/store.ts';

export interface Orbit {
  readonly app: Hono<AppEnv>;
  readonly store: Store;
  /** Attaches the `orbit.events.v1` upgrade handler to a Node HTTP server. */
  attach(server: Server): void;
  /** Stops background work and closes sessions; does not close the store. */
  close(): Promise<void>;
}

export interface OrbitOptions {
  readonly store: Store;
  readonly settings: Settings;
  readonly log?: (level: 'info' | 'warn' | 'error', message: string, fields?: Record<string, unknown>) => void;
}

export function createOrbit(options: OrbitOptions): Orbit {
  const log = options.log ?? (() => {});
  const app = createHttpApp(options.store, { requestTimeoutMs: options.settings.requestTimeoutMs }, (error, requestId) =>
    log('error', 'request failed', { request_id: requestId, error: String((error as Error)?.stack ?? error) }),
  );
  const gateway = new EventGateway(options.store, options.settings, log);
  return {
    app,
    store: options.store,
    attach(server) {
      gateway.attach(server);
    },
    close() {
      return gateway.close();
    },
  };
}

export interface RunningServer {
  readonly orbit: Orbit;
  readonly server: Server;
  readonly url: string;
  close(): Promise<void>;
}

/** Opens the store (applying migrations), serves HTTP and WebSocket, resolves once listening. */
export async function startServer(settings: Settings, log?: OrbitOptions['log']): Promise<RunningServer> {
  const store = await Store.open(settings.databaseUrl);
  const orbit = createOrbit({ store, settings, ...(log ? { log } : {}) });
  const server = createAdaptorServer({ fetch: orbit.app.fetch }) as Server;
  orbit.attach(server);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(settings.listen.port, settings.listen.host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    orbit,
    server,
    url: `http://${host}:${address.port}`,
    async close() {
      await orbit.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await store.close();
    },
  };
}

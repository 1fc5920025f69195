/**
 * Integration-test helpers for the SDK: a real server on either store (through @orbit/testing),
 * and a TCP proxy that can cut connections, used to prove retries and reconnects.
 */
import net from 'node:net';
import { randomBytes } from 'node:crypto';
import { startTestServer, type StoreKind, type TestServer } from '@orbit/testing';
import { createClient, type OrbitClient } from '../src/index.ts';

export interface Setup {
  readonly server: TestServer;
  readonly token: string;
  readonly queueId: string;
  readonly client: OrbitClient;
}

export async function setup(kind: StoreKind, env: Record<string, string> = {}): Promise<Setup> {
  const server = await startTestServer(kind, { ORBIT_POLL_INTERVAL_MS: '50', ...env });
  const boot = await server.bootstrap();
  return {
    server,
    token: boot.token,
    queueId: boot.queue_ids.q!,
    client: createClient({ baseUrl: server.url, token: boot.token, retry: { initialDelayMs: 20, maxDelayMs: 200 } }),
  };
}

export function id(): string {
  return randomBytes(16).toString('hex');
}

export function key(prefix = 'k'): string {
  return `${prefix}-${randomBytes(8).toString('hex')}`;
}

export function name(): string {
  return `s-${randomBytes(6).toString('hex')}`;
}

/**
 * A TCP proxy in front of `target` (`http://host:port`). `dropAll()` cuts every open connection;
 * `swallowNextResponse()` lets requests reach the server, then cuts the connection on which the
 * server next starts answering, so the client never sees that answer.
 */
export class CuttingProxy {
  readonly url: string;
  connections = 0;
  readonly #server: net.Server;
  readonly #pairs = new Set<[net.Socket, net.Socket]>();
  #swallow = 0;

  private constructor(server: net.Server, url: string) {
    this.#server = server;
    this.url = url;
  }

  #target!: { hostname: string; port: number };

  /** Sends new connections to another server (open ones are left alone). */
  retarget(target: string): void {
    const { hostname, port } = new URL(target);
    this.#target = { hostname, port: Number(port) };
  }

  static async start(target: string): Promise<CuttingProxy> {
    let proxy!: CuttingProxy;
    const server = net.createServer((client) => {
      proxy.connections++;
      const upstream = net.connect(proxy.#target.port, proxy.#target.hostname);
      const pair: [net.Socket, net.Socket] = [client, upstream];
      proxy.#pairs.add(pair);
      const drop = (): void => {
        client.destroy();
        upstream.destroy();
        proxy.#pairs.delete(pair);
      };
      client.on('error', drop).on('close', drop);
      upstream.on('error', drop).on('close', drop);
      client.on('data', (chunk) => upstream.write(chunk));
      upstream.on('data', (chunk) => {
        if (proxy.#swallow > 0) {
          proxy.#swallow--;
          return drop();
        }
        client.write(chunk);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address() as net.AddressInfo;
    proxy = new CuttingProxy(server, `http://127.0.0.1:${address.port}`);
    proxy.retarget(target);
    return proxy;
  }

  get open(): number {
    return this.#pairs.size;
  }

  swallowNextResponse(times = 1): void {
    this.#swallow += times;
  }

  dropAll(): void {
    for (const [a, b] of [...this.#pairs]) {
      a.destroy();
      b.destroy();
    }
    this.#pairs.clear();
  }

  async close(): Promise<void> {
    this.dropAll();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}

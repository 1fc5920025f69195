/**
 * @module
 * The database load of an idle node: statements per second that one `orbit serve` with no event
 * connection and no requests sends to MariaDB. The node connects through a counting TCP proxy in
 * this process, which reads the MySQL client/server protocol's framing (3-byte length, sequence id)
 * and counts the commands a client starts (sequence id 0): text queries (`COM_QUERY`, which
 * includes BEGIN and COMMIT) and prepared executions (`COM_STMT_EXECUTE`). The server's global
 * `Com_*` counters would also count every other client of a shared MariaDB. What an idle node
 * still sends is its heartbeat and its background jobs; the cross-node head poll runs only while a
 * session waits (docs/operations.md, Settings: `poll_interval_ms`).
 */
import net from 'node:net';
import { freshDatabase, spawnOrbit } from '../lib/orbit.ts';
import { sleep } from '../lib/util.ts';

const COM_QUERY = 0x03;
const COM_STMT_EXECUTE = 0x17;

export interface IdleResult {
  readonly windowMs: number;
  /** Statements (queries + prepared executions) per second in the window. */
  readonly statementsPerS: number;
  /** The window's statements by their first word (SELECT, UPDATE, ...; EXECUTE for prepared ones). */
  readonly byKind: Record<string, number>;
}

/** Counts the commands clients send through it to `target`. */
class CountingProxy {
  readonly byKind = new Map<string, number>();
  private readonly server: net.Server;
  private readonly sockets = new Set<net.Socket>();

  constructor(private readonly target: { host: string; port: number }) {
    this.server = net.createServer((client) => this.relay(client));
  }

  listen(): Promise<number> {
    return new Promise((resolve) => this.server.listen(0, '127.0.0.1', () => resolve((this.server.address() as net.AddressInfo).port)));
  }

  get total(): number {
    let sum = 0;
    for (const n of this.byKind.values()) sum += n;
    return sum;
  }

  private relay(client: net.Socket): void {
    const upstream = net.connect(this.target);
    for (const s of [client, upstream]) {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
      s.on('error', () => s.destroy());
    }
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    upstream.pipe(client);
    let pending: Buffer = Buffer.alloc(0);
    client.on('data', (chunk: Buffer) => {
      upstream.write(chunk);
      pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
      while (pending.length >= 4) {
        const length = pending.readUIntLE(0, 3);
        if (pending.length < 4 + length) break;
        if (pending[3] === 0 && length > 0) this.count(pending.subarray(4, 4 + length));
        pending = pending.subarray(4 + length);
      }
    });
  }

  private count(payload: Buffer): void {
    let kind: string | null = null;
    if (payload[0] === COM_STMT_EXECUTE) kind = 'EXECUTE';
    else if (payload[0] === COM_QUERY) kind = (/^\s*(\w+)/.exec(payload.subarray(1, 40).toString('latin1'))?.[1] ?? '?').toUpperCase();
    if (kind !== null) this.byKind.set(kind, (this.byKind.get(kind) ?? 0) + 1);
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

export async function idleStatements(windowMs: number): Promise<IdleResult> {
  const db = await freshDatabase('mysql');
  const url = new URL(db.url);
  const proxy = new CountingProxy({ host: url.hostname, port: Number(url.port || 3306) });
  url.port = String(await proxy.listen());
  try {
    const node = await spawnOrbit(url.toString());
    try {
      // Start-up (migrations, node registration) is not idle load.
      await sleep(1000);
      const before = new Map(proxy.byKind);
      const total = proxy.total;
      await sleep(windowMs);
      const byKind: Record<string, number> = {};
      for (const [kind, n] of proxy.byKind) if (n > (before.get(kind) ?? 0)) byKind[kind] = n - (before.get(kind) ?? 0);
      return { windowMs, statementsPerS: (proxy.total - total) / (windowMs / 1000), byKind };
    } finally {
      await node.stop();
    }
  } finally {
    await proxy.close();
    await db.drop();
  }
}

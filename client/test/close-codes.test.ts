/**
 * The SDK reads a server's close over real sockets (spec/README.md, Close codes): a scripted
 * `orbit.events.v1` peer accepts the upgrade, answers the hello with a welcome, then ends each
 * connection the way the test says (an error frame and a close, a bare close code, or a cut).
 * The Orbit server cannot be made to send every code on demand; this peer can.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocketServer, type WebSocket } from 'ws';
import { connectEvents, ConnectionClosedError, createEventConsumer, type ConsumerEvent } from '../src/index.ts';
import { SqliteInbox } from '../src/inbox/sqlite.ts';

const SUBSCRIPTION = randomBytes(16).toString('hex');
const hex = (): string => randomBytes(16).toString('hex');

/** How the peer ends one connection after its welcome; `null` keeps it open. */
type Ending = { error?: string; code?: number; reason?: string; cut?: true } | null;

class ScriptedPeer {
  readonly url: string;
  connections = 0;
  readonly #wss: WebSocketServer;
  readonly #open = new Set<WebSocket>();

  private constructor(wss: WebSocketServer, endings: Ending[]) {
    this.#wss = wss;
    this.url = `http://127.0.0.1:${(wss.address() as AddressInfo).port}`;
    wss.on('connection', (ws) => {
      const ending = endings[this.connections++] ?? null;
      this.#open.add(ws);
      ws.on('close', () => this.#open.delete(ws));
      ws.once('message', (data) => {
        const hello = JSON.parse(data.toString()) as { message_id: string; body: { capacity: number } };
        const session = hex();
        ws.send(
          JSON.stringify({
            protocol_version: '1',
            type: 'events.welcome',
            message_id: hex(),
            reply_to: hello.message_id,
            session_id: session,
            body: {
              session_id: session,
              subscription_id: SUBSCRIPTION,
              capacity: hello.body.capacity,
              lease_duration_ms: 30000,
              heartbeat_interval_ms: 15000,
              server_time: new Date().toISOString(),
              enabled: true,
            },
          }),
        );
        if (!ending) return;
        // Let the client take the welcome first, as a real server's later close would.
        setTimeout(() => {
          if (ending.cut) return ws.terminate();
          if (ending.error)
            ws.send(
              JSON.stringify({
                protocol_version: '1',
                type: 'error',
                message_id: hex(),
                session_id: session,
                error: { code: ending.error, message: `scripted ${ending.error}` },
              }),
            );
          ws.close(ending.code, ending.reason);
        }, 20);
      });
    });
  }

  static async start(endings: Ending[]): Promise<ScriptedPeer> {
    const wss = new WebSocketServer({
      host: '127.0.0.1',
      port: 0,
      handleProtocols: (p) => (p.has('orbit.events.v1') ? 'orbit.events.v1' : false),
    });
    await new Promise<void>((resolve) => wss.once('listening', () => resolve()));
    return new ScriptedPeer(wss, endings);
  }

  async stop(): Promise<void> {
    for (const ws of this.#open) ws.terminate();
    await new Promise<void>((resolve) => this.#wss.close(() => resolve()));
  }
}

describe('close codes read by the SDK over real sockets', () => {
  let peer: ScriptedPeer | undefined;
  const cleanups: Array<() => Promise<void>> = [];

  afterEach(async () => {
    for (const cleanup of cleanups.splice(0)) await cleanup();
    await peer?.stop();
    peer = undefined;
  });

  async function endedWith(ending: Ending): Promise<ConnectionClosedError> {
    peer = await ScriptedPeer.start([ending]);
    const conn = await connectEvents({ baseUrl: peer.url, token: 't', subscriptionId: SUBSCRIPTION, capacity: 1 });
    const error = await (async () => {
      for await (const _ of conn) throw new Error('no delivery expected');
    })().catch((e: unknown) => e);
    await peer.stop();
    peer = undefined;
    expect(error).toBeInstanceOf(ConnectionClosedError);
    return error as ConnectionClosedError;
  }

  it('MUST end the stream with a retryable UNAVAILABLE for 1001, 1006, 1011, 1012 and 1013', async () => {
    for (const ending of [
      { code: 1001, reason: 'server shutting down' },
      { cut: true as const },
      { code: 1011 },
      { code: 1012 },
      { code: 1013 },
    ]) {
      const error = await endedWith(ending);
      expect([error.code, error.retryable, error.closeCode], JSON.stringify(ending)).toEqual([
        'UNAVAILABLE',
        true,
        ending.cut ? 1006 : ending.code,
      ]);
    }
  });

  it('MUST take the code of the error frame (or of the close reason) over the close code', async () => {
    const denied = await endedWith({ error: 'PERMISSION_DENIED', code: 1008, reason: 'PERMISSION_DENIED' });
    expect([denied.code, denied.retryable, denied.message]).toEqual(['PERMISSION_DENIED', false, 'scripted PERMISSION_DENIED']);
    const unavailable = await endedWith({ error: 'UNAVAILABLE', code: 1013, reason: 'UNAVAILABLE' });
    expect([unavailable.code, unavailable.retryable]).toEqual(['UNAVAILABLE', true]);
    const byReason = await endedWith({ code: 1008, reason: 'EVENT_HISTORY_EXPIRED' });
    expect([byReason.code, byReason.retryable]).toEqual(['EVENT_HISTORY_EXPIRED', false]);
  });

  it('MUST NOT call a policy violation, a too-big message or an unasked normal close retryable', async () => {
    for (const [ending, code] of [
      [{ code: 1008, reason: 'no valid frame within the idle timeout' }, 'INVALID_ARGUMENT'],
      [{ code: 1009 }, 'INVALID_ARGUMENT'],
      [{ code: 1000 }, 'UNAVAILABLE'],
    ] as const) {
      const error = await endedWith(ending);
      expect([error.code, error.retryable, error.closeCode], JSON.stringify(ending)).toEqual([code, false, ending.code]);
    }
  });

  it('MUST make the consumer reconnect after 1013 and stop for good after a policy violation', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'orbit-close-'));
    const inbox = new SqliteInbox({ path: join(dir, 'inbox.db') });
    cleanups.push(async () => {
      await inbox.close();
      rmSync(dir, { recursive: true, force: true });
    });
    peer = await ScriptedPeer.start([{ code: 1013 }, { code: 1008, reason: 'no valid frame within the idle timeout' }]);
    const events: ConsumerEvent[] = [];
    const consumer = createEventConsumer({
      baseUrl: peer.url,
      token: 't',
      subscriptionId: SUBSCRIPTION,
      capacity: 1,
      inbox,
      handler: () => {},
      backoff: { initialDelayMs: 1, maxDelayMs: 5 },
      onEvent: (e) => events.push(e),
    });
    cleanups.push(async () => void (await consumer.stop({ timeoutMs: 100 })));
    const error = (await consumer.done.catch((e: unknown) => e)) as ConnectionClosedError;
    expect([error.code, error.closeCode]).toEqual(['INVALID_ARGUMENT', 1008]);
    expect(peer.connections).toBe(2);
    expect(events.map((e) => e.type)).toEqual(['connected', 'reconnecting', 'connected', 'error', 'stopped']);
  });
});

/**
 * @module
 * A raw `orbit.events.v1` consumer for use inside the benchmark process (latency and memory
 * sections): opens a socket, says hello, reports each `event.deliver` with its arrival time and
 * (optionally) ACKs it at once.
 */
import WebSocket from 'ws';
import { hexId, now, withTimeout } from './util.ts';
import { CONNECT_PATH, SUBPROTOCOL } from '@orbit/spec/protocol';

let counter = 0;
const prefix = (process.pid * 104729) >>> 0;
const nextId = () => hexId(prefix, ++counter);

export class WsConsumer {
  sessionId = '';
  errors: string[] = [];
  acked = 0;
  /** Requests waiting for their reply, by message id. */
  private readonly replies = new Map<string, () => void>();

  private constructor(
    private readonly ws: WebSocket,
    private readonly onDeliver: ((frame: any, receivedAt: number) => void) | null,
    private readonly autoAck: boolean,
  ) {}

  static async open(
    baseUrl: string,
    token: string,
    subscriptionId: string,
    capacity: number,
    options: { onDeliver?: (frame: any, receivedAt: number) => void; autoAck?: boolean } = {},
  ): Promise<WsConsumer> {
    const ws = new WebSocket(`${baseUrl.replace(/^http/, 'ws')}${CONNECT_PATH}`, SUBPROTOCOL, {
      headers: { authorization: `Bearer ${token}` },
      perMessageDeflate: false,
    });
    const consumer = new WsConsumer(ws, options.onDeliver ?? null, options.autoAck ?? true);
    const welcome = new Promise<void>((resolve, reject) => {
      const helloId = nextId();
      ws.once('error', reject);
      ws.once('open', () =>
        ws.send(
          JSON.stringify({
            protocol_version: '1',
            type: 'events.hello',
            message_id: helloId,
            body: { subscription_id: subscriptionId, capacity },
          }),
        ),
      );
      ws.on('message', (data) => {
        const receivedAt = now();
        const frame = JSON.parse(data.toString());
        if (frame.type === 'events.welcome') {
          consumer.sessionId = frame.session_id;
          resolve();
        } else consumer.frame(frame, receivedAt);
      });
      ws.on('close', (code) => {
        if (code !== 1000 && code !== 1005) consumer.errors.push(`closed ${code}`);
        reject(new Error(`closed ${code} before welcome`));
      });
    });
    await withTimeout(welcome, 10_000, 'events.welcome');
    return consumer;
  }

  private frame(frame: any, receivedAt: number): void {
    if (frame.reply_to !== undefined) {
      this.replies.get(frame.reply_to)?.();
      this.replies.delete(frame.reply_to);
    }
    if (frame.type === 'event.deliver') {
      this.onDeliver?.(frame, receivedAt);
      if (this.autoAck) {
        const d = frame.body.delivery;
        this.ws.send(
          JSON.stringify({
            protocol_version: '1',
            type: 'event.ack',
            message_id: nextId(),
            session_id: this.sessionId,
            body: { delivery_id: d.id, epoch: d.lease_epoch, lease_secret: frame.body.lease_secret },
          }),
        );
      }
    } else if (frame.type === 'ack') this.acked++;
    else if (frame.type === 'error') this.errors.push(`${frame.error.code}: ${frame.error.message}`);
  }

  /** Resolves once every one of `ids` has been answered. */
  repliesTo(ids: readonly string[]): Promise<void> {
    return Promise.all(ids.map((id) => new Promise<void>((resolve) => this.replies.set(id, resolve)))).then(() => undefined);
  }

  /** One `events.ping`; resolves with its round trip in ms. */
  async ping(): Promise<number> {
    const id = nextId();
    const started = now();
    const answered = this.repliesTo([id]);
    this.ws.send(JSON.stringify({ protocol_version: '1', type: 'events.ping', message_id: id, session_id: this.sessionId, body: {} }));
    await withTimeout(answered, 30_000, 'a ping reply');
    return now() - started;
  }

  /** Writes bytes straight to the socket (pre-framed client frames, many in one write). */
  writeRaw(bytes: Buffer): void {
    (this.ws as unknown as { _socket: { write(b: Buffer): void } })._socket.write(bytes);
  }

  async close(): Promise<void> {
    if (this.ws.readyState === WebSocket.CLOSED) return;
    const closed = new Promise<void>((resolve) => this.ws.once('close', () => resolve()));
    this.ws.close(1000);
    try {
      await withTimeout(closed, 3000, 'socket close');
    } catch {
      this.ws.terminate();
    }
  }
}

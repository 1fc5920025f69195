/**
 * @module
 * The one raw orbit.events.v1 test client over a real socket. Every server frame is parsed with the
 * strict codec and checked against the generated `serverFrame` validator; a frame that does not
 * match fails the test that reads it.
 */
import { randomBytes } from 'node:crypto';
import WebSocket from 'ws';
import { parseStrict } from '@orbit/spec/codec';
import { validateServerFrame } from '@orbit/generated';
import { SUBPROTOCOL as PROTOCOL } from '@orbit/spec/protocol';

export { PROTOCOL };

export function messageId(): string {
  return randomBytes(16).toString('hex');
}

export interface Frame {
  readonly type: string;
  readonly message_id: string;
  readonly reply_to?: string;
  readonly session_id?: string;
  readonly body?: any;
  readonly error?: { code: string; message: string };
}

export class TestSocket {
  readonly frames: Frame[] = [];
  /** Every frame received, read or not, with when it arrived (ms since the epoch): for the history checker. */
  readonly received: { readonly frame: Frame; readonly at: number }[] = [];
  private waiters: Array<() => void> = [];
  closed: { code: number; reason: string } | null = null;
  sessionId: string | null = null;
  invalid: string[] = [];
  /** Headers of the 101 Switching Protocols response. */
  upgradeHeaders: Record<string, string | string[] | undefined> = {};

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data, isBinary) => {
      const text = data.toString();
      let frame: Frame;
      try {
        frame = parseStrict(text, {
          raw: [
            ['body', 'event', 'snapshot', 'result'],
            ['body', 'event', 'details'],
          ],
        }) as Frame;
      } catch {
        this.invalid.push(`not strict JSON: ${text}`);
        return;
      }
      if (isBinary || !validateServerFrame(frame))
        this.invalid.push(`invalid server frame: ${text} ${JSON.stringify(validateServerFrame.errors)}`);
      this.frames.push(frame);
      this.received.push({ frame, at: Date.now() });
      this.wake();
    });
    ws.on('close', (code, reason) => {
      this.closed = { code, reason: reason.toString() };
      this.wake();
    });
    ws.on('error', () => {});
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }

  static open(
    baseUrl: string,
    token: string | null,
    options: { protocol?: string | null; headers?: Record<string, string>; path?: string } = {},
  ): Promise<TestSocket> {
    const url = baseUrl.replace(/^http/, 'ws') + (options.path ?? '/v1/events/connect');
    const protocol = options.protocol === undefined ? PROTOCOL : options.protocol;
    const headers = { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(options.headers ?? {}) };
    const ws =
      protocol === null
        ? new WebSocket(url, { headers, perMessageDeflate: false })
        : new WebSocket(url, protocol, { headers, perMessageDeflate: false });
    let upgradeHeaders: TestSocket['upgradeHeaders'] = {};
    ws.once('upgrade', (response) => (upgradeHeaders = response.headers));
    return new Promise((resolve, reject) => {
      ws.once('open', () => {
        const socket = new TestSocket(ws);
        socket.upgradeHeaders = upgradeHeaders;
        resolve(socket);
      });
      ws.once('unexpected-response', (_req, res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () =>
          reject(Object.assign(new Error(`upgrade refused: ${res.statusCode}`), { status: res.statusCode, headers: res.headers, body })),
        );
      });
      ws.once('error', reject);
    });
  }

  sendRaw(data: string | Buffer, binary = false): void {
    this.ws.send(data, { binary });
  }

  send(type: string, body: unknown, extra: Record<string, unknown> = {}): string {
    const id = messageId();
    const frame = {
      protocol_version: '1',
      type,
      message_id: id,
      ...(this.sessionId && type !== 'events.hello' ? { session_id: this.sessionId } : {}),
      body,
      ...extra,
    };
    this.ws.send(JSON.stringify(frame));
    return id;
  }

  /** Waits for the first unread frame matching `predicate` (frames are kept for later reads). */
  async next(predicate: (f: Frame) => boolean, timeoutMs = 10_000): Promise<Frame> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const index = this.frames.findIndex(predicate);
      if (index >= 0) return this.frames.splice(index, 1)[0]!;
      if (this.closed)
        throw new Error(`socket closed (${this.closed.code} ${this.closed.reason}) while waiting; frames: ${JSON.stringify(this.frames)}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out waiting for a frame; have ${JSON.stringify(this.frames)}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  reply(to: string, timeoutMs?: number): Promise<Frame> {
    return this.next((f) => f.reply_to === to, timeoutMs);
  }

  async hello(subscriptionId: string, capacity = 1): Promise<Frame> {
    const id = this.send('events.hello', { subscription_id: subscriptionId, capacity });
    const welcome = await this.reply(id);
    if (welcome.type === 'events.welcome') this.sessionId = welcome.session_id!;
    return welcome;
  }

  deliver(timeoutMs?: number): Promise<Frame> {
    return this.next((f) => f.type === 'event.deliver', timeoutMs);
  }

  async ack(deliver: Frame, override: Partial<{ epoch: string; lease_secret: string; delivery_id: string }> = {}): Promise<Frame> {
    const id = this.send('event.ack', {
      delivery_id: deliver.body.delivery.id,
      epoch: deliver.body.delivery.lease_epoch,
      lease_secret: deliver.body.lease_secret,
      ...override,
    });
    return this.reply(id);
  }

  async waitClosed(timeoutMs = 10_000): Promise<{ code: number; reason: string }> {
    const deadline = Date.now() + timeoutMs;
    while (!this.closed) {
      if (Date.now() > deadline) throw new Error('socket did not close');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    return this.closed;
  }

  close(): void {
    this.ws.close();
  }
}

/**
 * @module
 * A raw orbit.events.v1 client. It offers exactly the subprotocols, headers and extensions a case
 * asks for, sends any text or binary frame (valid or not), and keeps every server frame as text,
 * read as `frames.ts` says. A frame that is not strict JSON, is binary, or does not match the
 * schema is a protocol violation: it fails the case, and a case waiting for a frame stops waiting
 * at once (the outcome is known).
 */
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { ClientFrame, HelloFrame, ServerFrame } from '@orbit/generated';
import { parseStrict } from '@orbit/spec/codec';
import { CONNECT_PATH, PROTOCOL_VERSION, SUBPROTOCOL } from '@orbit/spec/protocol';
import WebSocket from 'ws';
import { CheckFailure, NetworkError } from './errors.ts';
import type { EvidenceLog } from './evidence.ts';
import {
  type AckReply,
  type FrameGuard,
  type HelloReply,
  type PingReply,
  type Received,
  readServerFrame,
  replyOf,
  repliesTo,
} from './frames.ts';
import { randomId } from './ids.ts';

export interface OpenOptions {
  readonly token?: string | null;
  /** Offered subprotocols; default `[SUBPROTOCOL]` (spec/rules.md#s5-1); `[]` offers none. */
  readonly protocols?: readonly string[];
  readonly headers?: Readonly<Record<string, string>>;
  /** Path and query of the upgrade request; default `CONNECT_PATH` (spec/rules.md#s5-1). */
  readonly target?: string;
  /** Offer permessage-deflate (the server must decline it). */
  readonly offerCompression?: boolean;
  readonly timeoutMs?: number;
}

export type UpgradeOutcome =
  | { readonly kind: 'open'; readonly conn: EventConnection; readonly status: 101; readonly headers: IncomingMessage['headers'] }
  | {
      readonly kind: 'refused';
      readonly status: number;
      readonly headers: IncomingMessage['headers'];
      readonly body: string;
      /** The body parsed as strict JSON, or undefined. */
      readonly json: unknown;
    };

let connectionCounter = 0;

export class EventConnection {
  /** Every valid frame received, in order. */
  readonly received: Received[] = [];
  /** Problems with server frames (not strict JSON, binary, schema mismatch). */
  readonly violations: string[] = [];
  closed: { code: number; reason: string } | null = null;
  sessionId: string | null = null;
  private unread: Received[] = [];
  private waiters: Array<() => void> = [];

  private constructor(
    readonly ws: WebSocket,
    readonly id: number,
    private readonly log: EvidenceLog | undefined,
  ) {
    ws.on('message', (data, isBinary) => this.onMessage(data as Buffer, isBinary));
    ws.on('close', (code, reason) => {
      this.closed = { code, reason: reason.toString() };
      this.stopHeartbeat();
      this.log?.add({ kind: 'ws-close', conn: this.id, code, reason: reason.toString() });
      this.wake();
    });
    ws.on('error', () => {});
  }

  /** Opens a connection; a refused upgrade is an outcome, not an error. */
  static open(baseUrl: string, options: OpenOptions = {}, log?: EvidenceLog): Promise<UpgradeOutcome> {
    const target = options.target ?? CONNECT_PATH;
    const url = baseUrl.replace(/^http/, 'ws') + target;
    const headers: Record<string, string> = {
      ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
      ...(options.headers ?? {}),
    };
    const protocols = options.protocols ?? [SUBPROTOCOL];
    const ws = new WebSocket(url, [...protocols], {
      headers,
      perMessageDeflate: options.offerCompression === true,
      handshakeTimeout: options.timeoutMs ?? 10_000,
    });
    const id = ++connectionCounter;
    const requestHeaders = { ...headers, ...(protocols.length ? { 'sec-websocket-protocol': protocols.join(', ') } : {}) };
    return new Promise((resolve, reject) => {
      let upgradeHeaders: IncomingMessage['headers'] = {};
      ws.once('upgrade', (res: IncomingMessage) => {
        upgradeHeaders = res.headers;
      });
      ws.once('open', () => {
        log?.add({
          kind: 'ws-open',
          conn: id,
          target,
          requestHeaders: log.cleanHeaders(requestHeaders),
          status: 101,
          responseHeaders: log.cleanHeaders(upgradeHeaders),
        });
        resolve({ kind: 'open', conn: new EventConnection(ws, id, log), status: 101, headers: upgradeHeaders });
      });
      ws.once('unexpected-response', (_req, res: IncomingMessage) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const body = Buffer.concat(chunks).toString('utf8');
          let json: unknown;
          try {
            json = parseStrict(body);
          } catch {
            json = undefined;
          }
          log?.add({
            kind: 'ws-open',
            conn: id,
            target,
            requestHeaders: log.cleanHeaders(requestHeaders),
            status: res.statusCode ?? 0,
            responseHeaders: log.cleanHeaders(res.headers),
            body: log.clean(body),
          });
          ws.terminate();
          resolve({ kind: 'refused', status: res.statusCode ?? 0, headers: res.headers, body, json });
        });
        res.on('error', (error) => reject(new NetworkError(`reading the refusal of the upgrade to ${target}`, error)));
      });
      ws.once('error', (error) => {
        log?.add({ kind: 'ws-open', conn: id, target, requestHeaders: log.cleanHeaders(requestHeaders), status: 0, responseHeaders: {} });
        reject(new NetworkError(`WebSocket upgrade to ${target}`, error));
      });
    });
  }

  private onMessage(data: Buffer, isBinary: boolean): void {
    const text = data.toString('utf8');
    this.log?.add({ kind: 'ws-frame', conn: this.id, direction: 'received', text: this.log.clean(text), binary: isBinary });
    if (isBinary) return this.violation(`binary frame from the server: ${text.slice(0, 200)}`);
    const read = readServerFrame(text, Date.now());
    if ('violation' in read) return this.violation(read.violation);
    const { frame } = read;
    this.received.push(frame);
    this.unread.push(frame);
    this.wake();
  }

  private violation(message: string): void {
    this.violations.push(message);
    this.wake();
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }

  private wait(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.waiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  /** Sends text exactly as given. */
  sendText(text: string): void {
    this.log?.add({ kind: 'ws-frame', conn: this.id, direction: 'sent', text: this.log.clean(text), binary: false });
    this.ws.send(text, { binary: false });
  }

  sendBinary(bytes: Uint8Array): void {
    this.log?.add({ kind: 'ws-frame', conn: this.id, direction: 'sent', text: Buffer.from(bytes).toString('utf8'), binary: true });
    this.ws.send(bytes, { binary: true });
  }

  /** Sends a frame of `type` with a fresh message_id and the bound session_id (not on hello); returns the message_id. */
  send(type: ClientFrame['type'], body: unknown, extra: Record<string, unknown> = {}): string {
    const messageId = randomId();
    const frame = {
      protocol_version: PROTOCOL_VERSION,
      type,
      message_id: messageId,
      ...(this.sessionId !== null && type !== 'events.hello' ? { session_id: this.sessionId } : {}),
      body,
      ...extra,
    };
    this.sendText(JSON.stringify(frame));
    return messageId;
  }

  /**
   * The first unread frame matching `predicate` within `timeoutMs`, or null (closed or timed
   * out). A server frame that violates the protocol ends the wait with a failure: nothing that
   * arrives afterwards could make the case pass.
   */
  poll<F extends ServerFrame>(predicate: FrameGuard<F>, timeoutMs: number): Promise<Received<F> | null>;
  poll(predicate: (f: Received) => boolean, timeoutMs: number): Promise<Received | null>;
  async poll(predicate: (f: Received) => boolean, timeoutMs: number): Promise<Received | null> {
    const deadline = Date.now() + timeoutMs;
    const seen = this.violations.length;
    for (;;) {
      const index = this.unread.findIndex(predicate);
      if (index >= 0) return this.unread.splice(index, 1)[0]!;
      if (this.violations.length > seen) throw new CheckFailure(`the server sent an invalid frame: ${this.violations[seen]}`, 'frames');
      const left = deadline - Date.now();
      if (this.closed || left <= 0) return null;
      await this.wait(left);
    }
  }

  /** Like `poll`, but a missing frame fails the case with what did arrive. */
  next<F extends ServerFrame>(predicate: FrameGuard<F>, timeoutMs: number, what: string): Promise<Received<F>>;
  next(predicate: (f: Received) => boolean, timeoutMs: number, what: string): Promise<Received>;
  async next(predicate: (f: Received) => boolean, timeoutMs: number, what: string): Promise<Received> {
    const frame = await this.poll(predicate, timeoutMs);
    if (frame) return frame;
    const state = this.closed
      ? `the connection closed (${this.closed.code} ${this.closed.reason})`
      : `nothing matched within ${timeoutMs} ms`;
    throw new CheckFailure(`expected ${what}, but ${state}; unread frames: ${this.unread.map((f) => f.$text).join(' ') || 'none'}`);
  }

  /** The reply to `messageId` (the frame whose reply_to names it). */
  async reply(messageId: string, timeoutMs: number, what = `a reply to ${messageId}`): Promise<Received> {
    try {
      return await this.next(repliesTo(messageId), timeoutMs, what);
    } catch (error) {
      // Say what most likely went wrong: the answer came, but without naming the request.
      if (
        error instanceof CheckFailure &&
        error.kind === 'assert' &&
        this.unread.some((f) => replyOf(f) === undefined && f.type !== 'event.deliver')
      )
        throw new CheckFailure(
          `${error.message} (no frame named the request ${messageId} in reply_to, but a frame without reply_to arrived)`,
        );
      throw error;
    }
  }

  /** The reply to an event.ack: an ack reply with a delivery body, or an error. */
  async ackReply(messageId: string, timeoutMs: number, what = 'a reply to event.ack'): Promise<AckReply> {
    const reply = await this.reply(messageId, timeoutMs, what);
    if (reply.type === 'error' || (reply.type === 'ack' && 'delivery_id' in reply.body)) return reply as AckReply;
    throw new CheckFailure(`expected an ack reply or an error to event.ack ${messageId}, got ${reply.$text}`);
  }

  /** The reply to an events.ping: an ack reply with {server_time, enabled}, or an error. */
  async pingReply(messageId: string, timeoutMs: number, what = 'a reply to events.ping'): Promise<PingReply> {
    const reply = await this.reply(messageId, timeoutMs, what);
    if (reply.type === 'error' || (reply.type === 'ack' && 'server_time' in reply.body)) return reply as PingReply;
    throw new CheckFailure(`expected an ack {server_time, enabled} or an error to events.ping ${messageId}, got ${reply.$text}`);
  }

  /** Sends events.hello; returns the reply (welcome or error) and binds the session on welcome. */
  async hello(subscriptionId: string, capacity: number, timeoutMs: number): Promise<HelloReply> {
    const body: HelloFrame['body'] = { subscription_id: subscriptionId, capacity };
    const id = this.send('events.hello', body);
    const reply = await this.reply(id, timeoutMs, 'a reply to events.hello');
    if (reply.type === 'events.welcome') {
      this.sessionId = reply.session_id;
      return reply;
    }
    if (reply.type === 'error') return reply;
    throw new CheckFailure(`expected events.welcome or an error in reply to events.hello, got ${reply.$text}`);
  }

  /** Waits until the server closes the connection; null when it is still open after `timeoutMs`. */
  async waitClose(timeoutMs: number): Promise<{ code: number; reason: string } | null> {
    const deadline = Date.now() + timeoutMs;
    while (!this.closed) {
      const left = deadline - Date.now();
      if (left <= 0) return null;
      await this.wait(left);
    }
    return this.closed;
  }

  /** Closes with 1000 and waits (briefly) for the server's answer, so the server has let go. */
  async close(): Promise<void> {
    this.stopHeartbeat();
    this.resumeReading();
    if (this.closed) return;
    if (this.ws.readyState === WebSocket.OPEN || this.ws.readyState === WebSocket.CONNECTING) this.ws.close(1000);
    if (!(await this.waitClose(2_000))) this.ws.terminate();
  }

  private heartbeat: NodeJS.Timeout | undefined;

  /** Sends events.ping every `intervalMs` while bound and open, as a well-behaved client does. */
  startHeartbeat(intervalMs: number): void {
    this.stopHeartbeat();
    this.heartbeat = setInterval(
      () => {
        if (this.closed || this.sessionId === null || this.ws.readyState !== WebSocket.OPEN) return this.stopHeartbeat();
        this.send('events.ping', {});
      },
      Math.max(50, intervalMs),
    );
    this.heartbeat.unref();
  }

  stopHeartbeat(): void {
    clearInterval(this.heartbeat);
    this.heartbeat = undefined;
  }

  /**
   * Stops reading from the socket, like a client that hangs: the server's writes back up once the
   * kernel buffers are full. `ws` has no public way to do this, so it pauses the underlying socket.
   */
  pauseReading(): void {
    this.socket()?.pause();
  }

  resumeReading(): void {
    this.socket()?.resume();
  }

  private socket(): Socket | undefined {
    return (this.ws as unknown as { _socket?: Socket })._socket;
  }

  /** Drops the TCP connection without a close frame. */
  destroy(): void {
    this.stopHeartbeat();
    this.ws.terminate();
  }
}

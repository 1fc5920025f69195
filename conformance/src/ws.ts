/**
 * @module
 * A raw orbit.events.v1 client. It offers exactly the subprotocols, headers and extensions a case
 * asks for, sends any text or binary frame (valid or not), and keeps every server frame as text:
 * parsed with the strict codec and checked against the generated `serverFrame` validator. A frame
 * that is not strict JSON, is binary, or does not match the schema is a protocol violation that
 * fails the case.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import WebSocket from 'ws';
import { parseStrict } from '@orbit/spec/codec';
import { validateServerFrame } from '@orbit/generated';
import { CheckFailure } from './case.ts';
import type { EvidenceLog } from './evidence.ts';

export const PROTOCOL = 'orbit.events.v1';

export function newMessageId(): string {
  return randomBytes(16).toString('hex');
}

export interface ServerFrame {
  readonly protocol_version: string;
  readonly type: string;
  readonly message_id: string;
  readonly reply_to?: string;
  readonly session_id?: string;
  readonly body?: any;
  readonly error?: { code: string; message: string };
  /** The frame exactly as received. */
  readonly $text: string;
  /** When it arrived (Date.now()). */
  readonly $at: number;
}

export interface OpenOptions {
  readonly token?: string | null;
  /** Offered subprotocols; default `[orbit.events.v1]`; `[]` offers none. */
  readonly protocols?: readonly string[];
  readonly headers?: Readonly<Record<string, string>>;
  /** Path and query of the upgrade request; default `/v1/events/connect`. */
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
      readonly json: any;
    };

let connectionCounter = 0;

export class EventConnection {
  /** Every frame received, in order. */
  readonly received: ServerFrame[] = [];
  /** Problems with server frames (not strict JSON, binary, schema mismatch). */
  readonly violations: string[] = [];
  closed: { code: number; reason: string } | null = null;
  sessionId: string | null = null;
  private unread: ServerFrame[] = [];
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
    const target = options.target ?? '/v1/events/connect';
    const url = baseUrl.replace(/^http/, 'ws') + target;
    const headers: Record<string, string> = {
      ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
      ...(options.headers ?? {}),
    };
    const protocols = options.protocols ?? [PROTOCOL];
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
        res.on('error', reject);
      });
      ws.once('error', (error) => reject(new CheckFailure(`WebSocket upgrade to ${target} failed: ${error.message}`)));
    });
  }

  private onMessage(data: Buffer, isBinary: boolean): void {
    const text = data.toString('utf8');
    this.log?.add({ kind: 'ws-frame', conn: this.id, direction: 'received', text: this.log.clean(text), binary: isBinary });
    if (isBinary) this.violations.push(`binary frame from the server: ${text.slice(0, 200)}`);
    let value: unknown;
    try {
      value = parseStrict(text);
    } catch (error) {
      this.violations.push(`server frame is not strict JSON (${(error as Error).message}): ${text.slice(0, 300)}`);
      return;
    }
    if (!validateServerFrame(value)) {
      const e = validateServerFrame.errors?.[0];
      this.violations.push(`server frame does not match serverFrame (${e?.instancePath ?? ''} ${e?.message ?? ''}): ${text.slice(0, 500)}`);
    }
    const frame = Object.assign(Object.create(null) as object, value as object, { $text: text, $at: Date.now() }) as ServerFrame;
    Object.defineProperty(frame, '$text', { enumerable: false });
    Object.defineProperty(frame, '$at', { enumerable: false });
    this.received.push(frame);
    this.unread.push(frame);
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
  send(type: string, body: unknown, extra: Record<string, unknown> = {}): string {
    const messageId = newMessageId();
    const frame = {
      protocol_version: '1',
      type,
      message_id: messageId,
      ...(this.sessionId !== null && type !== 'events.hello' ? { session_id: this.sessionId } : {}),
      body,
      ...extra,
    };
    this.sendText(JSON.stringify(frame));
    return messageId;
  }

  /** The first unread frame matching `predicate` within `timeoutMs`, or null (closed or timed out). */
  async poll(predicate: (f: ServerFrame) => boolean, timeoutMs: number): Promise<ServerFrame | null> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const index = this.unread.findIndex(predicate);
      if (index >= 0) return this.unread.splice(index, 1)[0]!;
      const left = deadline - Date.now();
      if (this.closed || left <= 0) return null;
      await this.wait(left);
    }
  }

  /** Like `poll`, but a missing frame fails the case with what did arrive. */
  async next(predicate: (f: ServerFrame) => boolean, timeoutMs: number, what: string): Promise<ServerFrame> {
    const frame = await this.poll(predicate, timeoutMs);
    if (frame) return frame;
    const state = this.closed
      ? `the connection closed (${this.closed.code} ${this.closed.reason})`
      : `nothing matched within ${timeoutMs} ms`;
    throw new CheckFailure(`expected ${what}, but ${state}; unread frames: ${this.unread.map((f) => f.$text).join(' ') || 'none'}`);
  }

  reply(messageId: string, timeoutMs: number, what = `a reply to ${messageId}`): Promise<ServerFrame> {
    return this.next((f) => f.reply_to === messageId, timeoutMs, what);
  }

  /** Sends events.hello; returns the reply (welcome or error) and binds the session on welcome. */
  async hello(subscriptionId: string, capacity: number, timeoutMs: number): Promise<ServerFrame> {
    const id = this.send('events.hello', { subscription_id: subscriptionId, capacity });
    const reply = await this.reply(id, timeoutMs, 'a reply to events.hello');
    if (reply.type === 'events.welcome' && typeof reply.session_id === 'string') this.sessionId = reply.session_id;
    return reply;
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

  /** Drops the TCP connection without a close frame. */
  destroy(): void {
    this.stopHeartbeat();
    this.ws.terminate();
  }
}

/**
 * @module
 * One `orbit.events.v1` connection (spec/rules.md#s5-1 to #s7-24): the upgrade with the token in
 * the Authorization header and the subprotocol `orbit.events.v1` (no compression), `events.hello` →
 * `events.welcome`, then an async-iterable stream of deliveries, `event.ack`, `events.ping` and
 * `close`. Every frame received is parsed strictly (`details` and `snapshot.result` stay `RawJson`)
 * and validated by the generated `serverFrame` validator; a frame that breaks the contract ends the
 * connection.
 *
 * This is the low-level building block. `createEventConsumer` adds the Inbox, heartbeats and
 * reconnects.
 *
 * Longer than 400 lines: one class, `EventConnection`, whose handshake, pending requests, frame
 * reading and close handling are one state machine over the same private fields.
 */
import { randomBytes } from 'node:crypto';
import WebSocket from 'ws';
import { isCanonicalBase64url, isCanonicalUint64, LEASE_SECRET_BYTES } from '@orbit/spec/codec';
import {
  validateErrorEnvelope,
  validateServerFrame,
  type AckReplyFrame,
  type EventDelivery,
  type PingReplyFrame,
  type ServerFrame,
  type WelcomeFrame,
} from '@orbit/generated';
import { ERROR_TABLE, type OrbitError } from '@orbit/spec/errors';
import { CONNECT_PATH, MAX_FRAME_BYTES, SUBPROTOCOL } from '@orbit/spec/protocol';
import { retryAfterMs } from './backoff.ts';
import { ConnectionClosedError, OrbitTransportError, causeText, closedError, invalidArgument, serverError } from './errors.ts';
import { checkTokenSource, currentToken, type TokenSource } from './token.ts';
import { isId, rawPaths, readDocument, type ResultEvent } from './wire.ts';

/** What proves the right to acknowledge one delivery: kept byte for byte until the server answers. */
export interface AckProof {
  readonly delivery_id: string;
  readonly epoch: string;
  readonly lease_secret: string;
}

/** One `event.deliver`: the leased delivery, its event, and the proof to acknowledge it with. */
export interface Delivery {
  readonly delivery: EventDelivery;
  readonly event: ResultEvent;
  readonly leaseSecret: string;
  /** `{delivery_id, epoch, lease_secret}` of this delivery: pass it to `ack` (on this or a later connection). */
  readonly proof: AckProof;
  /** The session that received it. */
  readonly sessionId: string;
}

export type Welcome = WelcomeFrame['body'];
/** The server's ack reply: `deduplicated` with the original `acknowledged_at` when it was already acknowledged. */
export type AckResult = AckReplyFrame['body'];
export type PingResult = PingReplyFrame['body'];

export interface ConnectEventsOptions {
  readonly baseUrl: string;
  /** The bearer token, or a function that returns it (or a promise of it), asked once per connection. */
  readonly token: TokenSource;
  readonly subscriptionId: string;
  /** How many deliveries this connection may hold at once: an integer 1–32, fixed for the connection. */
  readonly capacity: number;
  /** Time limit for the token, the upgrade and `events.welcome` (default 10000 ms). */
  readonly connectTimeoutMs?: number;
  /** Time limit for the answer to one `event.ack` or `events.ping` (default 10000 ms). */
  readonly requestTimeoutMs?: number;
  /** Extra upgrade headers (for example `Origin` for a browser-like client). Never put the token elsewhere. */
  readonly headers?: Readonly<Record<string, string>>;
  /**
   * Aborts the connection attempt (`connectEvents` rejects with the signal's reason) and, once
   * connected, closes the connection normally (1000): the deliveries already received are still
   * yielded, then the iteration ends without an error.
   */
  readonly signal?: AbortSignal;
}

/** How the connection ended: `error` is null when this side closed it with `close()`. */
export interface CloseInfo {
  readonly code: number;
  readonly reason: string;
  readonly error: ConnectionClosedError | OrbitTransportError | null;
}

interface PendingRequest {
  readonly kind: 'ack' | 'ping';
  readonly resolve: (body: AckResult | PingResult) => void;
  readonly reject: (error: OrbitError) => void;
  readonly timer: NodeJS.Timeout;
}

export function messageId(): string {
  return randomBytes(16).toString('hex');
}

/** `http(s)://host[/prefix]` → `ws(s)://host[/prefix]/v1/events/connect`. */
export function connectUrl(baseUrl: string): string {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw invalidArgument(`baseUrl must be an absolute http(s) or ws(s) URL, got "${baseUrl}"`);
  }
  const scheme = { 'http:': 'ws:', 'https:': 'wss:', 'ws:': 'ws:', 'wss:': 'wss:' }[url.protocol];
  if (!scheme) throw invalidArgument('baseUrl must use http, https, ws or wss');
  if (url.search || url.hash || url.username || url.password)
    throw invalidArgument('baseUrl must not carry a query, fragment or credentials');
  return `${scheme}//${url.host}${url.pathname.replace(/\/+$/, '')}${CONNECT_PATH}`;
}

function checkCapacity(capacity: unknown): number {
  if (typeof capacity !== 'number' || !Number.isInteger(capacity) || capacity < 1 || capacity > 32)
    throw invalidArgument('capacity must be an integer from 1 to 32');
  return capacity;
}

function checkProof(proof: AckProof): void {
  if (!isId(proof?.delivery_id)) throw invalidArgument('proof.delivery_id must be 32 lower-case hexadecimal characters');
  if (!isCanonicalUint64(proof.epoch)) throw invalidArgument('proof.epoch must be a canonical uint64 string');
  if (!isCanonicalBase64url(proof.lease_secret, LEASE_SECRET_BYTES))
    throw invalidArgument('proof.lease_secret must be the canonical base64url of 32 bytes');
}

/** A provider's token for one connection, under the connection's time limit and the caller's signal. */
export async function providedToken(
  provider: Exclude<TokenSource, string>,
  where: string,
  connectTimeoutMs: number,
  signal: AbortSignal | undefined,
): Promise<string> {
  const limit = AbortSignal.timeout(connectTimeoutMs);
  try {
    return await currentToken(provider, 'ConnectEvents', signal ? AbortSignal.any([signal, limit]) : limit);
  } catch (error) {
    if (signal?.aborted) throw signal.reason;
    if (limit.aborted)
      throw new OrbitTransportError('timeout', `${where} failed: no token from the token provider within ${connectTimeoutMs} ms`);
    throw error;
  }
}

const RAW_PATHS = rawPaths('serverFrame');

/**
 * An open, bound event connection. Iterate it (once) for deliveries; `ack` and `ping` may be
 * called at any time while it is open. After the connection ends, the iterator yields the
 * deliveries already received, then ends (after `close()`) or throws the `ConnectionClosedError`.
 */
export class EventConnection implements AsyncIterable<Delivery> {
  readonly sessionId: string;
  readonly welcome: Welcome;
  /** Settles once the connection is closed, never rejects. */
  readonly closed: Promise<CloseInfo>;

  readonly #ws: WebSocket;
  readonly #requestTimeoutMs: number;
  readonly #pending = new Map<string, PendingRequest>();
  readonly #buffer: Delivery[] = [];
  #wake: (() => void) | null = null;
  #closeInfo: CloseInfo | null = null;
  #closing = false;
  /** The last error frame that was not a reply: it explains the close that follows (spec/rules.md#s7-7). */
  #unsolicited: OrbitError | null = null;
  /** A contract violation found on our side. */
  #violation: OrbitTransportError | null = null;
  #resolveClosed!: (info: CloseInfo) => void;

  private constructor(ws: WebSocket, welcome: WelcomeFrame, requestTimeoutMs: number, signal: AbortSignal | undefined) {
    this.#ws = ws;
    this.sessionId = welcome.session_id;
    this.welcome = welcome.body;
    this.#requestTimeoutMs = requestTimeoutMs;
    this.closed = new Promise((resolve) => (this.#resolveClosed = resolve));
    if (signal) {
      const onAbort = (): void => void this.close(1000, 'client aborted');
      if (signal.aborted) queueMicrotask(onAbort);
      else {
        signal.addEventListener('abort', onAbort, { once: true });
        void this.closed.then(() => signal.removeEventListener('abort', onAbort));
      }
    }
    ws.on('message', (data, isBinary) => this.#onMessage(data, isBinary));
    ws.on('close', (code, reason) => this.#onClose(code, reason.toString()));
    ws.on('error', (error: Error & { code?: string }) => {
      // ws refuses what breaks the WebSocket protocol or our limits (a frame over 512 KiB,
      // invalid UTF-8, ...) with a WS_ERR_* code; other errors are the network's. The close follows.
      if (error.code?.startsWith('WS_ERR_') && !this.#violation) {
        this.#violation = new OrbitTransportError('bad_response', `the server broke the WebSocket protocol: ${error.message}`, {
          cause: error,
        });
      }
    });
  }

  /** Opens a connection and binds it to the subscription; resolves after `events.welcome`. */
  static async open(options: ConnectEventsOptions): Promise<EventConnection> {
    const url = connectUrl(options.baseUrl);
    const capacity = checkCapacity(options.capacity);
    if (!isId(options.subscriptionId)) throw invalidArgument('subscriptionId must be 32 lower-case hexadecimal characters');
    const source = checkTokenSource(options.token);
    const connectTimeoutMs = options.connectTimeoutMs ?? 10_000;
    const requestTimeoutMs = options.requestTimeoutMs ?? 10_000;
    options.signal?.throwIfAborted();
    const where = `ConnectEvents: GET ${url}`;
    const started = Date.now();
    // A fixed token is used at once (no await): the upgrade starts in the caller's turn.
    const token = typeof source === 'string' ? source : await providedToken(source, where, connectTimeoutMs, options.signal);
    const leftMs = Math.max(1, connectTimeoutMs - (Date.now() - started));

    return new Promise<EventConnection>((resolve, reject) => {
      const ws = new WebSocket(url, SUBPROTOCOL, {
        headers: { ...(options.headers ?? {}), authorization: `Bearer ${token}` },
        perMessageDeflate: false,
        handshakeTimeout: leftMs,
        maxPayload: MAX_FRAME_BYTES,
        followRedirects: false,
      });
      const helloId = messageId();
      let settled = false;
      let refusal: OrbitError | null = null;
      const timer = setTimeout(
        () => fail(new OrbitTransportError('timeout', `${where} failed: no events.welcome within ${connectTimeoutMs} ms`)),
        leftMs,
      );
      let pendingError: OrbitError | null = null;
      const onAbort = (): void => fail(options.signal?.reason);
      options.signal?.addEventListener('abort', onAbort, { once: true });

      function finish(): void {
        settled = true;
        clearTimeout(timer);
        options.signal?.removeEventListener('abort', onAbort);
        ws.removeAllListeners('message');
        ws.removeAllListeners('unexpected-response');
        ws.removeAllListeners('close');
        ws.removeAllListeners('open');
        ws.removeAllListeners('error');
      }
      function fail(error: unknown): void {
        if (settled) return;
        finish();
        ws.on('error', () => {});
        if (ws.readyState === WebSocket.OPEN) ws.close(1000, 'client gave up');
        else ws.terminate();
        reject(error);
      }

      ws.once('unexpected-response', (_request, response) => {
        // The upgrade was refused with an HTTP answer: read the Orbit error envelope.
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('error', (cause) =>
          fail(
            new OrbitTransportError('network', `${where} failed: upgrade refused with ${response.statusCode}`, {
              status: response.statusCode ?? null,
              cause,
            }),
          ),
        );
        response.on('end', () => {
          const status = response.statusCode ?? 0;
          const read = readDocument<{ request_id: string; error: { code: string; message: string } }>(
            Buffer.concat(chunks).toString('utf8'),
            validateErrorEnvelope,
          );
          // A 429 or 503 says how long to wait; the error carries it to whoever reconnects.
          const wait = retryAfterMs(response.headers['retry-after']);
          const after = wait !== undefined ? { retryAfterMs: wait } : {};
          if (read.ok) refusal = serverError(read.value.error, { status, requestId: read.value.request_id, ...after });
          else {
            const retryable = status === 429 || status >= 500;
            refusal = new OrbitTransportError(
              'bad_response',
              `${where}: upgrade refused with HTTP ${status} without an Orbit error envelope`,
              { status, retryable, ...(retryable ? after : {}) },
            );
          }
          fail(refusal);
        });
      });
      ws.once('error', (cause) =>
        fail(refusal ?? new OrbitTransportError('network', `${where} failed: ${causeText(cause).split(token).join('[token]')}`, { cause })),
      );
      ws.once('close', (code, reason) => fail(refusal ?? pendingError ?? closedError(code, reason.toString(), null)));
      ws.once('open', () => {
        if (ws.protocol !== SUBPROTOCOL)
          return fail(new OrbitTransportError('bad_response', `${where}: the server did not select ${SUBPROTOCOL}`, { retryable: false }));
        ws.send(
          JSON.stringify({
            protocol_version: '1',
            type: 'events.hello',
            message_id: helloId,
            body: { subscription_id: options.subscriptionId, capacity },
          }),
          (error) => {
            if (error)
              fail(new OrbitTransportError('network', `${where} failed: cannot send events.hello: ${error.message}`, { cause: error }));
          },
        );
      });
      ws.on('message', (data, isBinary) => {
        const frame = readFrame(data, isBinary);
        if (!frame.ok) return fail(frame.error);
        const value = frame.value;
        if (value.type === 'error') {
          // A refused hello: NOT_FOUND, PERMISSION_DENIED, INVALID_ARGUMENT, UNAVAILABLE ... then close.
          pendingError = serverError(value.error);
          if (value.reply_to === helloId || value.reply_to === undefined) return fail(pendingError);
          return;
        }
        if (value.type !== 'events.welcome' || value.reply_to !== helloId) {
          return fail(new OrbitTransportError('bad_response', `${where}: expected events.welcome, got ${value.type}`, { retryable: true }));
        }
        if (
          value.body.subscription_id !== options.subscriptionId ||
          value.body.capacity !== capacity ||
          value.body.session_id !== value.session_id
        ) {
          return fail(new OrbitTransportError('bad_response', 'events.welcome does not match the hello', { retryable: false }));
        }
        finish();
        resolve(new EventConnection(ws, value, requestTimeoutMs, options.signal));
      });
    });
  }

  /** Whether the connection can still send. */
  get isOpen(): boolean {
    return !this.#closing && this.#closeInfo === null && this.#ws.readyState === WebSocket.OPEN;
  }

  /** Sends `event.ack` with the proof; resolves with the server's answer, rejects with `DELIVERY_LEASE_LOST`, a closed or a timeout error. */
  ack(proof: AckProof): Promise<AckResult> {
    checkProof(proof);
    return this.#request('ack', 'event.ack', {
      delivery_id: proof.delivery_id,
      epoch: proof.epoch,
      lease_secret: proof.lease_secret,
    }) as Promise<AckResult>;
  }

  /** Sends `events.ping`; the server re-checks the credential and the subscription and answers `{server_time, enabled}`. */
  ping(): Promise<PingResult> {
    return this.#request('ping', 'events.ping', {}) as Promise<PingResult>;
  }

  /** Closes with a normal close (1000) and waits until the socket is closed (at most `timeoutMs`, then it is cut). */
  async close(code = 1000, reason = 'client closing', timeoutMs = 5000): Promise<CloseInfo> {
    if (!this.#closing && this.#closeInfo === null) {
      this.#closing = true;
      this.#ws.close(code, reason);
      const timer = setTimeout(() => this.#ws.terminate(), timeoutMs);
      timer.unref();
      void this.closed.then(() => clearTimeout(timer));
    }
    return this.closed;
  }

  /** Cuts the connection at once, without a close handshake (the iterator then throws UNAVAILABLE). */
  terminate(): void {
    this.#ws.terminate();
  }

  [Symbol.asyncIterator](): AsyncIterator<Delivery> {
    return this.deliveries();
  }

  /** The deliveries, in arrival order. Use one reader. */
  async *deliveries(): AsyncGenerator<Delivery, void, undefined> {
    for (;;) {
      const next = this.#buffer.shift();
      if (next) {
        yield next;
        continue;
      }
      if (this.#closeInfo) {
        if (this.#closeInfo.error) throw this.#closeInfo.error;
        return;
      }
      await new Promise<void>((resolve) => (this.#wake = resolve));
    }
  }

  #signal(): void {
    const wake = this.#wake;
    this.#wake = null;
    wake?.();
  }

  #request(kind: 'ack' | 'ping', type: string, body: object): Promise<AckResult | PingResult> {
    if (!this.isOpen) {
      return Promise.reject(
        this.#closeInfo?.error ??
          new ConnectionClosedError(
            'UNAVAILABLE',
            'the connection is closed',
            this.#closeInfo?.code ?? 1000,
            this.#closeInfo?.reason ?? '',
          ),
      );
    }
    const id = messageId();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#pending.delete(id);
        reject(new OrbitTransportError('timeout', `no answer to ${type} within ${this.#requestTimeoutMs} ms`));
      }, this.#requestTimeoutMs);
      this.#pending.set(id, { kind, resolve, reject, timer });
      this.#ws.send(JSON.stringify({ protocol_version: '1', type, message_id: id, session_id: this.sessionId, body }), (error) => {
        if (!error) return;
        const pending = this.#pending.get(id);
        if (!pending) return;
        this.#pending.delete(id);
        clearTimeout(pending.timer);
        pending.reject(new OrbitTransportError('network', `cannot send ${type}: ${error.message}`, { cause: error }));
      });
    });
  }

  #violate(error: OrbitTransportError): void {
    if (this.#violation || this.#closeInfo) return;
    this.#violation = error;
    this.#closing = true;
    this.#ws.close(1002, 'protocol error');
    setTimeout(() => this.#ws.terminate(), 2000).unref();
  }

  #onMessage(data: WebSocket.RawData, isBinary: boolean): void {
    if (this.#closeInfo) return;
    const read = readFrame(data, isBinary);
    if (!read.ok) return this.#violate(read.error);
    const frame = read.value;
    if (frame.session_id !== undefined && frame.session_id !== this.sessionId) {
      return this.#violate(
        new OrbitTransportError('bad_response', `a frame for session ${frame.session_id} arrived on session ${this.sessionId}`),
      );
    }
    switch (frame.type) {
      case 'event.deliver': {
        const { delivery, lease_secret } = frame.body;
        if (delivery.subscription_id !== this.welcome.subscription_id || delivery.event_id !== frame.body.event.id) {
          return this.#violate(
            new OrbitTransportError('bad_response', 'event.deliver for another subscription or with a mismatched event'),
          );
        }
        this.#buffer.push({
          delivery,
          event: frame.body.event as unknown as ResultEvent,
          leaseSecret: lease_secret,
          proof: { delivery_id: delivery.id, epoch: delivery.lease_epoch, lease_secret },
          sessionId: this.sessionId,
        });
        return this.#signal();
      }
      case 'ack': {
        const pending = frame.reply_to === undefined ? undefined : this.#pending.get(frame.reply_to);
        if (!pending) return; // a reply to a request that already timed out
        const isAckBody = 'delivery_id' in frame.body;
        if (isAckBody !== (pending.kind === 'ack')) {
          return this.#violate(new OrbitTransportError('bad_response', `the reply to ${pending.kind} has the wrong body`));
        }
        this.#pending.delete(frame.reply_to);
        clearTimeout(pending.timer);
        return pending.resolve(frame.body);
      }
      case 'error': {
        const error = serverError(frame.error);
        const pending = frame.reply_to === undefined ? undefined : this.#pending.get(frame.reply_to);
        if (pending) {
          this.#pending.delete(frame.reply_to!);
          clearTimeout(pending.timer);
          pending.reject(error);
        }
        // An error whose reaction is to close explains the close that follows.
        if (!pending || ERROR_TABLE[error.code].socket === 'close') this.#unsolicited = error;
        return;
      }
      case 'events.welcome':
        return this.#violate(new OrbitTransportError('bad_response', 'a second events.welcome'));
    }
  }

  #onClose(code: number, reason: string): void {
    if (this.#closeInfo) return;
    const byClient = this.#closing && !this.#violation && !this.#unsolicited;
    const error = byClient ? null : (this.#violation ?? closedError(code, reason, this.#unsolicited));
    this.#closeInfo = { code, reason, error };
    const rejection = error ?? new ConnectionClosedError('UNAVAILABLE', 'the connection was closed by the client', code, reason);
    for (const [id, pending] of this.#pending) {
      this.#pending.delete(id);
      clearTimeout(pending.timer);
      pending.reject(rejection);
    }
    this.#signal();
    this.#resolveClosed(this.#closeInfo);
  }
}

type FrameRead = { ok: true; value: ServerFrame } | { ok: false; error: OrbitTransportError };

function readFrame(data: WebSocket.RawData, isBinary: boolean): FrameRead {
  if (isBinary) return { ok: false, error: new OrbitTransportError('bad_response', 'the server sent a binary frame') };
  const text = Buffer.isBuffer(data)
    ? data.toString('utf8')
    : Array.isArray(data)
      ? Buffer.concat(data).toString('utf8')
      : Buffer.from(data).toString('utf8');
  const read = readDocument<ServerFrame>(text, validateServerFrame, RAW_PATHS);
  if (!read.ok) return { ok: false, error: new OrbitTransportError('bad_response', `invalid server frame: ${read.problem}`) };
  return { ok: true, value: read.value };
}

/** Opens an event connection; resolves after `events.welcome`. */
export function connectEvents(options: ConnectEventsOptions): Promise<EventConnection> {
  return EventConnection.open(options);
}

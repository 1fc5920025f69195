/**
 * @module
 * The fixture's orbit.events.v1 endpoint: the upgrade checks (path, query, Origin, subprotocol,
 * connection limit, token, events:consume), the session (hello within the hello timeout, the
 * idle timeout, 1008 for a broken envelope, an error frame for a bad body), ACKs and pings, and a
 * claim pass that runs whenever something changed and every 100 ms: it recovers expired leases,
 * materializes matching results within max_pending and leases up to each connection's capacity.
 * Recovery happens only when a consumer of an enabled subscription is connected (spec/rules.md#s4-26).
 */
import { type IncomingMessage, STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { validateAckRequestFrame, validateHelloFrame, validatePingFrame } from '@orbit/generated';
import { encodeBase64url, isCanonicalBase64url, parseStrict, parseUint64, stringify } from '@orbit/spec/codec';
import { ERROR_TABLE, type ErrorCode } from '@orbit/spec/errors';
import { type WebSocket, WebSocketServer } from 'ws';
import type { Faults } from './faults.ts';
import { type Credential, FixtureError, id, iso, type State } from './state.ts';

const PROTOCOL = 'orbit.events.v1';
const MAX_FRAME = 512 * 1024;
const ENVELOPE = ['protocol_version', 'type', 'message_id', 'session_id', 'body'];
const CLIENT_TYPES = ['events.hello', 'event.ack', 'events.ping'];
const ID = /^[0-9a-f]{32}$/;
const WRITE_QUEUE = 8;

export interface EventTiming {
  readonly leaseMs: number;
  readonly heartbeatMs: number;
  readonly idleMs: number;
  readonly helloMs: number;
  readonly writeMs: number;
}

export interface EventDeps {
  readonly state: State;
  readonly faults: Faults;
  readonly timing: EventTiming;
  readonly maxConnections: number;
  /** Called by the `crash-on-oversize` fault. */
  readonly crash: () => void;
}

/** Refuses an upgrade with an ordinary error envelope. */
function refuse(socket: Duplex, faults: Faults, code: ErrorCode, message: string): void {
  const status = ERROR_TABLE[code].status ?? 400;
  const requestId = id();
  const body = stringify({ request_id: requestId, error: { code, message } });
  const headers = [
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}`,
    'Content-Type: application/json',
    `X-Request-ID: ${requestId}`,
    `Cache-Control: ${faults.has('cache-control') ? 'no-cache' : 'no-store'}`,
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Connection: close',
    ...(status === 429 ? ['Retry-After: 1'] : []),
  ];
  socket.end(`${headers.join('\r\n')}\r\n\r\n${body}`);
}

class Session {
  sessionId: string | null = null;
  subscriptionId: string | null = null;
  capacity = 0;
  writes = 0;
  closing = false;
  /** The hello deadline, then the idle deadline: one pending timer at a time. */
  private deadline: NodeJS.Timeout | undefined;

  constructor(
    private readonly engine: EventEngine,
    readonly ws: WebSocket,
    readonly credential: Credential,
  ) {
    const { faults, timing } = engine.deps;
    if (!faults.has('no-hello-timeout')) this.deadline = setTimeout(() => this.close(1008, 'no hello in time'), timing.helloMs);
    ws.on('message', (data: Buffer, isBinary) => this.onMessage(data, isBinary));
    const gone = () => {
      this.closing = true;
      clearTimeout(this.deadline);
      engine.sessions.delete(this);
    };
    ws.on('close', gone);
    ws.on('error', gone);
  }

  private get deps(): EventDeps {
    return this.engine.deps;
  }

  send(frame: Record<string, unknown>): void {
    if (this.closing) return;
    this.writes++;
    const timer = this.deps.faults.has('no-write-timeout') ? undefined : setTimeout(() => this.ws.terminate(), this.deps.timing.writeMs);
    this.ws.send(stringify({ protocol_version: '1', message_id: id(), ...frame }), () => {
      clearTimeout(timer);
      this.writes--;
      this.engine.wake();
    });
  }

  /** A frame answering request `messageId` (the faults may spoil reply_to or message_id). */
  reply(messageId: string, frame: Record<string, unknown>): void {
    const { faults } = this.deps;
    this.send({
      ...frame,
      ...(faults.has('missing-reply-to') ? {} : { reply_to: messageId }),
      ...(faults.has('reused-message-id') ? { message_id: messageId } : {}),
    });
  }

  fail(error: FixtureError, replyTo?: string): void {
    const frame = {
      type: 'error',
      ...(this.sessionId ? { session_id: this.sessionId } : {}),
      error: { code: error.code, message: error.message },
    };
    if (replyTo) this.reply(replyTo, frame);
    else this.send(frame);
    if (ERROR_TABLE[error.code].socket === 'close' || this.sessionId === null) this.close(1008, error.code);
  }

  /** Starts the closing handshake; a peer that does not answer it within the write timeout is cut off. */
  close(code: number, reason: string): void {
    if (this.closing) return;
    this.closing = true;
    clearTimeout(this.deadline);
    this.ws.close(code, reason);
    setTimeout(() => this.ws.terminate(), this.deps.timing.writeMs).unref();
  }

  /** A valid frame: the idle deadline starts again. */
  private touch(): void {
    clearTimeout(this.deadline);
    this.deadline = setTimeout(() => this.close(1008, 'idle'), this.deps.timing.idleMs);
  }

  private onMessage(data: Buffer, isBinary: boolean): void {
    if (data.byteLength > MAX_FRAME && this.deps.faults.has('crash-on-oversize')) this.deps.crash();
    if (isBinary) return this.close(1008, 'binary frame');
    let frame: Record<string, unknown>;
    try {
      frame = parseStrict(data.toString('utf8')) as Record<string, unknown>;
    } catch {
      return this.close(1008, 'not strict JSON');
    }
    if (typeof frame !== 'object' || frame === null || Array.isArray(frame)) return this.close(1008, 'not an object');
    const type = frame.type;
    const messageId = frame.message_id;
    if (
      frame.protocol_version !== '1' ||
      typeof type !== 'string' ||
      !CLIENT_TYPES.includes(type) ||
      typeof messageId !== 'string' ||
      !ID.test(messageId)
    )
      return this.close(1008, 'invalid envelope');
    const extra = Object.keys(frame).filter((k) => !ENVELOPE.includes(k));
    if (type === 'events.hello') {
      if (this.sessionId !== null) return this.fail(new FixtureError('INVALID_ARGUMENT', 'this connection is bound already'), messageId);
      if (extra.length > 0 || 'session_id' in frame)
        return this.fail(new FixtureError('INVALID_ARGUMENT', 'hello carries no session_id, reply_to or error'), messageId);
      return this.hello(frame, messageId);
    }
    if (extra.length > 0 || this.sessionId === null || frame.session_id !== this.sessionId)
      return this.close(1008, 'invalid envelope or session');
    this.touch();
    if (type === 'events.ping') return this.ping(frame, messageId);
    return this.ack(frame, messageId);
  }

  private hello(frame: Record<string, unknown>, messageId: string): void {
    if (!validateHelloFrame(frame)) return this.fail(new FixtureError('INVALID_ARGUMENT', 'invalid hello body'), messageId);
    const { state, faults, timing } = this.deps;
    const sub = state.subs.get(frame.body.subscription_id);
    if (!sub || sub.credentialId !== this.credential.id || !this.credential.queues.has(sub.queueId) || sub.retiredAt !== undefined)
      return this.fail(new FixtureError('NOT_FOUND', 'subscription not found'), messageId);
    this.sessionId = id();
    this.subscriptionId = sub.id;
    this.capacity = faults.has('capacity-ignored') ? 32 : frame.body.capacity;
    this.touch();
    this.reply(messageId, {
      type: 'events.welcome',
      session_id: this.sessionId,
      body: {
        session_id: this.sessionId,
        subscription_id: sub.id,
        capacity: frame.body.capacity,
        lease_duration_ms: faults.has('wrong-lease-duration') ? 30_000 : timing.leaseMs,
        heartbeat_interval_ms: timing.heartbeatMs,
        server_time: iso(Date.now()),
        enabled: sub.enabled,
      },
    });
    this.engine.wake();
  }

  private ping(frame: Record<string, unknown>, messageId: string): void {
    if (!validatePingFrame(frame)) return this.fail(new FixtureError('INVALID_ARGUMENT', 'the body of events.ping is {}'), messageId);
    const { state } = this.deps;
    const credential = state.credentials.get(this.credential.token);
    if (!credential) return this.fail(new FixtureError('UNAUTHENTICATED', 'the credential is gone'), messageId);
    if (!credential.permissions.has('events:consume'))
      return this.fail(new FixtureError('PERMISSION_DENIED', 'events:consume is required'), messageId);
    const sub = state.subs.get(this.subscriptionId!);
    if (!sub || sub.retiredAt !== undefined || !credential.queues.has(sub.queueId))
      return this.fail(new FixtureError('NOT_FOUND', 'subscription not found'), messageId);
    this.reply(messageId, { type: 'ack', session_id: this.sessionId, body: { server_time: iso(Date.now()), enabled: sub.enabled } });
  }

  private ack(frame: Record<string, unknown>, messageId: string): void {
    const { state, faults } = this.deps;
    const body = frame.body as { lease_secret?: unknown } | undefined;
    if (faults.has('lenient-lease-secret') && typeof body?.lease_secret === 'string') {
      const bytes = Buffer.from(body.lease_secret.replace(/\s|=/g, ''), 'base64');
      if (bytes.byteLength === 32) body.lease_secret = encodeBase64url(new Uint8Array(bytes));
    }
    if (!validateAckRequestFrame(frame)) return this.fail(new FixtureError('INVALID_ARGUMENT', 'invalid event.ack body'), messageId);
    const { delivery_id, epoch, lease_secret } = frame.body;
    try {
      parseUint64(epoch);
      if (!isCanonicalBase64url(lease_secret, 32)) throw new Error();
    } catch {
      return this.fail(new FixtureError('INVALID_ARGUMENT', 'epoch or lease_secret is not canonical'), messageId);
    }
    try {
      const sub = state.subs.get(this.subscriptionId!)!;
      const { delivery, duplicate } = state.ack(sub, delivery_id, epoch, lease_secret);
      this.reply(messageId, {
        type: 'ack',
        session_id: this.sessionId,
        body: { delivery_id, event_id: delivery.eventId, epoch, acknowledged_at: iso(delivery.acknowledgedAt!), deduplicated: duplicate },
      });
      this.engine.wake();
    } catch (error) {
      this.fail(error instanceof FixtureError ? error : new FixtureError('UNAVAILABLE', 'the fixture failed'), messageId);
    }
  }

  /** One claim: recover, materialize, lease up to the free capacity, send. */
  claim(now: number): void {
    if (this.closing || this.sessionId === null) return;
    const { state } = this.deps;
    const sub = state.subs.get(this.subscriptionId!);
    if (!sub || sub.retiredAt !== undefined || !sub.enabled) return;
    if (sub.cursor < state.boundary)
      return this.fail(new FixtureError('EVENT_HISTORY_EXPIRED', 'results after this subscription’s cursor were pruned'));
    state.recover(sub, now);
    state.materialize(sub, now);
    if (this.writes >= WRITE_QUEUE) return;
    for (const { delivery, secret } of state.lease(sub, this.sessionId, this.capacity - state.held(this.sessionId, now), now)) {
      this.send({
        type: 'event.deliver',
        session_id: this.sessionId,
        body: { delivery: state.deliveryView(delivery), event: state.eventOf(delivery), lease_secret: secret },
      });
    }
  }
}

export class EventEngine {
  readonly sessions = new Set<Session>();
  private readonly wss: WebSocketServer;
  private readonly tick: NodeJS.Timeout;
  private woken = false;

  constructor(readonly deps: EventDeps) {
    this.wss = new WebSocketServer({
      noServer: true,
      perMessageDeflate: false,
      // With the crash fault the fixture reads the oversized frame itself (and dies of it).
      maxPayload: deps.faults.has('crash-on-oversize') ? 4 * MAX_FRAME : MAX_FRAME,
      handleProtocols: () => PROTOCOL,
    });
    this.tick = setInterval(() => this.claimAll(), 100);
    this.tick.unref();
  }

  /** Something changed: run a claim pass soon (passes are coalesced). */
  wake(): void {
    if (this.woken) return;
    this.woken = true;
    setImmediate(() => {
      this.woken = false;
      this.claimAll();
    });
  }

  private claimAll(): void {
    const now = Date.now();
    for (const s of this.sessions) s.claim(now);
  }

  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const { faults, state } = this.deps;
    socket.on('error', () => socket.destroy());
    const url = req.url ?? '';
    const [path, query] = [url.split('?')[0], url.includes('?')];
    if (path !== '/v1/events/connect') return refuse(socket, faults, 'NOT_FOUND', 'no such route');
    if (query) return refuse(socket, faults, 'INVALID_ARGUMENT', 'the connect URL takes no parameters');
    const origin = req.headers.origin;
    if (origin !== undefined && origin !== `http://${req.headers.host}`)
      return refuse(socket, faults, 'PERMISSION_DENIED', 'cross-origin upgrades are refused');
    const offered = String(req.headers['sec-websocket-protocol'] ?? '')
      .split(',')
      .map((p) => p.trim());
    if (!offered.includes(PROTOCOL)) return refuse(socket, faults, 'PROTOCOL_REQUIRED', `offer ${PROTOCOL}`);
    if (this.sessions.size >= this.deps.maxConnections) return refuse(socket, faults, 'CAPACITY_EXCEEDED', 'too many connections');
    const match = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '');
    const credential = match ? state.credentials.get(match[1]!) : undefined;
    if (!credential) return refuse(socket, faults, 'UNAUTHENTICATED', 'a valid bearer token is required');
    if (!credential.permissions.has('events:consume')) return refuse(socket, faults, 'PERMISSION_DENIED', 'events:consume is required');
    this.wss.handleUpgrade(req, socket, head, (ws) => {
      this.sessions.add(new Session(this, ws, credential));
    });
  }

  close(): void {
    clearInterval(this.tick);
    for (const s of this.sessions) s.ws.terminate();
    this.wss.close();
  }
}

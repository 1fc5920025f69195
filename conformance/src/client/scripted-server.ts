/**
 * @module
 * The server that client mode plays: an `orbit.events.v1` endpoint on 127.0.0.1 (a port the OS
 * picks) whose answers a case scripts. By default it behaves as a correct server would: it accepts
 * an upgrade that names the subprotocol and carries a bearer token, answers the hello with a
 * welcome, answers pings, and answers an ACK whose proof is the newest one it sent
 * (spec/rules.md#s6-13 to #s6-16) and `DELIVERY_LEASE_LOST` otherwise. A case changes that through
 * the hooks and switches, and reads what the client did from `upgrades` and `frames`, each with
 * the time it arrived.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { type AckRequestFrame, type ClientFrame, type ErrorCode, validateClientFrame } from '@orbit/generated';
import { parseStrict } from '@orbit/spec/codec';
import { CONNECT_PATH, SUBPROTOCOL } from '@orbit/spec/protocol';
import { WebSocket, WebSocketServer } from 'ws';
import type { EvidenceLog } from '../evidence.ts';
import { randomId } from '../ids.ts';

/** One upgrade request the client made, answered or not. */
export interface UpgradeAttempt {
  readonly at: number;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
}

/** A refusal of the upgrade: an HTTP answer with the contract's error envelope. */
export interface Refusal {
  readonly status: number;
  readonly code: ErrorCode;
  readonly headers?: Readonly<Record<string, string>>;
}

/** A frame the client sent, as received. `frame` is null when it was not a valid client frame. */
export interface SeenFrame {
  readonly conn: number;
  readonly at: number;
  readonly text: string;
  readonly frame: ClientFrame | null;
  /** Why the frame is not valid (strict JSON, then the generated validator). */
  readonly invalid?: string;
}

/** A scripted event: its id, task and the JSON text of its `event` object. */
export interface ScriptedEvent {
  readonly id: string;
  readonly taskId: string;
  readonly type: string;
  readonly text: string;
}

/** A proof the server sent: what the client must ACK with. */
export interface SentProof {
  readonly deliveryId: string;
  readonly eventId: string;
  readonly epoch: string;
  readonly secret: string;
}

let sequence = 0;
const now = (): string => new Date().toISOString();

/** `event` with its `details.filler` (declared as `''`) replaced by `length` characters: the same event, a longer frame. */
export function withFiller(event: ScriptedEvent, length: number): ScriptedEvent {
  if (!event.text.includes('"filler":""')) throw new Error('the event has no empty details.filler');
  return { ...event, text: event.text.replace('"filler":""', `"filler":"${'x'.repeat(length)}"`) };
}

/** An event of the result log; `resultJson` is the raw JSON text of `snapshot.result`, kept byte-exact. */
export function scriptedEvent(
  options: { type?: string; taskId?: string; resultJson?: string; details?: Record<string, unknown> } = {},
): ScriptedEvent {
  const id = randomId();
  const taskId = options.taskId ?? randomId();
  const type = options.type ?? 'task.succeeded';
  const state = type.slice('task.'.length).toUpperCase();
  const seq = String(++sequence);
  const event = {
    id,
    sequence: seq,
    type,
    aggregate_kind: 'task',
    aggregate_id: taskId,
    aggregate_revision: seq,
    occurred_at: now(),
    details: options.details ?? { state },
    snapshot: {
      schema_version: 1,
      task_id: taskId,
      queue_id: '0'.repeat(32),
      state,
      revision: seq,
      effect_uncertain: false,
      ...(options.resultJson !== undefined ? { result: '\u0000RESULT\u0000' } : {}),
    },
  };
  const text = JSON.stringify(event).replace('"\\u0000RESULT\\u0000"', options.resultJson ?? 'null');
  return { id, taskId, type, text };
}

/** One accepted connection after its hello: what a case sends on it. */
export class ScriptedSession {
  readonly sessionId = randomId();
  /** Answer ACKs (true) or leave them unanswered, as when the reply is lost (spec/rules.md#s6-13). */
  answerAcks = true;
  /** Answer pings (true) or stop answering, as a server that hangs. */
  answerPings = true;
  /** Called for every ACK before the default answer; return true when the case answered it. */
  onAck: ((frame: AckRequestFrame) => boolean) | undefined;

  constructor(
    readonly conn: number,
    private readonly socket: WebSocket,
    private readonly server: ScriptedServer,
  ) {}

  get open(): boolean {
    return this.socket.readyState === WebSocket.OPEN;
  }

  /** The text of a frame of this session (`body` or `error` given as JSON text). */
  private frame(type: string, member: 'body' | 'error', json: string, replyTo?: string): string {
    const reply = replyTo ? `,"reply_to":"${replyTo}"` : '';
    return `{"protocol_version":"1","type":"${type}","message_id":"${randomId()}"${reply},"session_id":"${this.sessionId}","${member}":${json}}`;
  }

  send(text: string): void {
    this.server.log.add({ kind: 'ws-frame', conn: this.conn, direction: 'sent', text: this.server.log.clean(text), binary: false });
    this.socket.send(text);
  }

  /** Delivers `event` as delivery `deliveryId` (a new one unless given) with the next epoch and a fresh secret. */
  deliver(event: ScriptedEvent, deliveryId = randomId()): SentProof {
    const { text, proof } = this.deliverText(event, deliveryId);
    this.server.proofs.set(deliveryId, proof);
    this.send(text);
    return proof;
  }

  /** The `event.deliver` frame that `deliver` would send, and its proof. */
  deliverText(event: ScriptedEvent, deliveryId = randomId()): { text: string; proof: SentProof } {
    const previous = this.server.proofs.get(deliveryId);
    const epoch = String(previous ? Number(previous.epoch) + 1 : 1);
    const secret = randomBytes(32).toString('base64url');
    const at = now();
    const delivery = {
      created_at: at,
      id: deliveryId,
      subscription_id: this.server.subscriptionId,
      event_id: event.id,
      sequence: JSON.parse(event.text).sequence as string,
      revision: String(2 * Number(epoch)),
      state: 'LEASED',
      available_at: at,
      lease_epoch: epoch,
      lease_until: new Date(Date.now() + 30_000).toISOString(),
      attempts: Number(epoch),
      attempt_budget: 20,
    };
    const body = `{"delivery":${JSON.stringify(delivery)},"event":${event.text},"lease_secret":"${secret}"}`;
    return { text: this.frame('event.deliver', 'body', body), proof: { deliveryId, eventId: event.id, epoch, secret } };
  }

  /** An error frame (with `reply_to` when it answers a request). */
  error(code: ErrorCode, replyTo?: string): void {
    this.send(this.frame('error', 'error', JSON.stringify({ code, message: `scripted ${code}` }), replyTo));
  }

  /** The default answer to an ACK: the newest proof is acknowledged (once, then deduplicated); any other is lease-lost. */
  answerAck(frame: AckRequestFrame): void {
    const { delivery_id, epoch, lease_secret } = frame.body;
    const proof = this.server.proofs.get(delivery_id);
    if (!proof || proof.epoch !== epoch || proof.secret !== lease_secret) {
      this.error('DELIVERY_LEASE_LOST', frame.message_id);
      return;
    }
    const first = this.server.acknowledged.get(delivery_id);
    const acknowledgedAt = first ?? now();
    this.server.acknowledged.set(delivery_id, acknowledgedAt);
    const body = { delivery_id, event_id: proof.eventId, epoch, acknowledged_at: acknowledgedAt, deduplicated: first !== undefined };
    this.send(this.frame('ack', 'body', JSON.stringify(body), frame.message_id));
  }

  /** Closes with `code` (1006 is no close frame at all: the TCP connection is cut). */
  close(code: number, reason = ''): void {
    if (code === 1006) this.socket.terminate();
    else this.socket.close(code, reason);
  }

  receive(seen: SeenFrame): void {
    const frame = seen.frame;
    if (!frame) return;
    if (frame.type === 'events.ping' && this.answerPings)
      this.send(this.frame('ack', 'body', JSON.stringify({ server_time: now(), enabled: true }), frame.message_id));
    if (frame.type === 'event.ack' && !this.onAck?.(frame) && this.answerAcks) this.answerAck(frame);
  }
}

/** The scripted endpoint of one case. */
export class ScriptedServer {
  readonly token = `cc_${randomBytes(18).toString('base64url')}`;
  readonly subscriptionId = randomId();
  readonly upgrades: UpgradeAttempt[] = [];
  readonly frames: SeenFrame[] = [];
  readonly sessions: ScriptedSession[] = [];
  /** The newest proof sent per delivery. */
  readonly proofs = new Map<string, SentProof>();
  /** `acknowledged_at` per acknowledged delivery. */
  readonly acknowledged = new Map<string, string>();
  /** Decides each upgrade (numbered from 0); undefined accepts it. */
  refuse: ((attempt: number) => Refusal | undefined) | undefined;
  /** Called with every session once its welcome is sent. */
  onSession: ((session: ScriptedSession) => void) | undefined;
  /**
   * Decides each hello (numbered from 0): a close instead of the welcome, as a server that fails
   * during the handshake; undefined welcomes it. 1006 cuts the connection without a close frame.
   */
  closeBeforeWelcome: ((hello: number) => { code: number; reason?: string } | undefined) | undefined;
  /** The hellos received, welcomed or not. */
  hellos = 0;
  private readonly http: Server;
  private readonly wss = new WebSocketServer({ noServer: true, perMessageDeflate: false, maxPayload: 512 * 1024 });
  private readonly started = Date.now();
  private waiters: Array<() => void> = [];
  private conns = 0;

  constructor(
    readonly log: EvidenceLog,
    readonly heartbeatIntervalMs: number,
    readonly capacity: number,
  ) {
    log.redact(this.token, '<token>');
    this.http = createServer((_req, res) => {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"code":"NOT_FOUND","message":"no such route"}}');
    });
    this.http.on('upgrade', (req, socket, head) => this.upgrade(req, socket, head));
  }

  /** Milliseconds since the case started. */
  elapsed(): number {
    return Date.now() - this.started;
  }

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.http.listen(0, '127.0.0.1', resolve));
    const address = this.http.address();
    if (!address || typeof address === 'string') throw new Error('no port');
    return `http://127.0.0.1:${address.port}`;
  }

  async close(): Promise<void> {
    for (const client of this.wss.clients) client.terminate();
    this.http.closeAllConnections();
    await new Promise<void>((resolve) => this.http.close(() => resolve()));
  }

  /** Resolves once `check` returns a value (checked whenever the client did something), or rejects after `timeoutMs`. */
  async waitFor<T>(what: string, check: () => T | undefined | false, timeoutMs: number): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = check();
      if (value !== undefined && value !== false) return value;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(left, 50));
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** The valid frames of `type` the client sent, oldest first. */
  sent<T extends ClientFrame['type']>(type: T): Array<SeenFrame & { frame: Extract<ClientFrame, { type: T }> }> {
    return this.frames.filter((f) => f.frame?.type === type) as Array<SeenFrame & { frame: Extract<ClientFrame, { type: T }> }>;
  }

  notify(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }

  private upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    // A client that gives up on a refusal may reset the connection while the answer is written.
    socket.on('error', () => undefined);
    const attempt = this.upgrades.length;
    this.upgrades.push({ at: this.elapsed(), url: req.url ?? '', headers: req.headers });
    this.log.note(`upgrade ${attempt}: GET ${this.log.clean(req.url ?? '')}`);
    this.notify();
    const protocols = String(req.headers['sec-websocket-protocol'] ?? '')
      .split(',')
      .map((p) => p.trim());
    const refusal: Refusal | undefined =
      this.refuse?.(attempt) ??
      (!protocols.includes(SUBPROTOCOL)
        ? { status: 426, code: 'PROTOCOL_REQUIRED' }
        : req.headers.authorization !== `Bearer ${this.token}`
          ? { status: 401, code: 'UNAUTHENTICATED' }
          : !(req.url ?? '').startsWith(CONNECT_PATH)
            ? { status: 404, code: 'NOT_FOUND' }
            : undefined);
    if (refusal) {
      const body = JSON.stringify({ request_id: randomId(), error: { code: refusal.code, message: `scripted ${refusal.code}` } });
      const headers = { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), ...refusal.headers };
      const lines = Object.entries(headers).map(([k, v]) => `${k}: ${v}`);
      socket.end(`HTTP/1.1 ${refusal.status} Refused\r\n${lines.join('\r\n')}\r\nconnection: close\r\n\r\n${body}`);
      return;
    }
    this.wss.handleUpgrade(req, socket, head, (ws) => this.accept(ws));
  }

  private accept(ws: WebSocket): void {
    const conn = ++this.conns;
    let session: ScriptedSession | undefined;
    ws.on('message', (data, binary) => {
      const text = data.toString();
      const seen = this.parse(conn, text, binary);
      this.frames.push(seen);
      this.log.add({ kind: 'ws-frame', conn, direction: 'received', text: this.log.clean(text), binary });
      if (!session && seen.frame?.type === 'events.hello') {
        const close = this.closeBeforeWelcome?.(this.hellos++);
        if (close) {
          this.log.note(`hello ${this.hellos - 1}: closing with ${close.code} instead of the welcome`);
          if (close.code === 1006) ws.terminate();
          else ws.close(close.code, close.reason ?? '');
          this.notify();
          return;
        }
        session = new ScriptedSession(conn, ws, this);
        this.sessions.push(session);
        const body = {
          session_id: session.sessionId,
          subscription_id: this.subscriptionId,
          capacity: seen.frame.body.capacity,
          lease_duration_ms: 30_000,
          heartbeat_interval_ms: this.heartbeatIntervalMs,
          server_time: now(),
          enabled: true,
        };
        const welcome = { protocol_version: '1', type: 'events.welcome', message_id: randomId(), reply_to: seen.frame.message_id };
        session.send(JSON.stringify({ ...welcome, session_id: session.sessionId, body }));
        this.onSession?.(session);
      } else session?.receive(seen);
      this.notify();
    });
    ws.on('close', (code, reason) => {
      this.log.add({ kind: 'ws-close', conn, code, reason: reason.toString() });
      this.notify();
    });
    ws.on('error', () => undefined);
  }

  private parse(conn: number, text: string, binary: boolean): SeenFrame {
    const at = this.elapsed();
    if (binary) return { conn, at, text, frame: null, invalid: 'a binary frame' };
    try {
      parseStrict(text); // duplicate keys and the like, which JSON.parse would let through
    } catch (error) {
      return { conn, at, text, frame: null, invalid: `not strict JSON: ${(error as Error).message}` };
    }
    // The codec keeps numbers as raw text; a client frame has none but `capacity`, so compare by JSON.
    const plain: unknown = JSON.parse(text);
    if (!validateClientFrame(plain)) {
      const e = validateClientFrame.errors?.[0];
      return { conn, at, text, frame: null, invalid: `not a client frame: ${e?.instancePath || '/'} ${e?.message ?? ''}` };
    }
    return { conn, at, text, frame: plain };
  }
}

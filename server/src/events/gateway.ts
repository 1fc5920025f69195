/**
 * @module
 * The `GET /v1/events/connect` upgrade (spec/rules.md#s5-1 to #s5-3, #s5-18): token in the
 * Authorization header only, no query string, same-origin or allowed Origin, the `orbit.events.v1`
 * subprotocol, `events:consume`, and at most `maxConnections` per node. A refusal is an HTTP
 * response with the envelope. Accepted sockets become sessions fed by one claim pool per node.
 *
 * Longer than 400 lines: besides the upgrade, it is the node's one view of its connections, and
 * each part needs all of them: the node's row and heartbeat (and closing every session when the
 * heartbeat cannot reach the database), the head poll that wakes them, the lanes, and shutdown.
 */
import type { IncomingMessage, Server } from 'node:http';
import { hostname } from 'node:os';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { ERROR_TABLE, OrbitError } from '@orbit/spec/errors';
import type { Settings } from '../config.ts';
import { newId } from '../crypto.ts';
import { authorize } from '../wire/auth.ts';
import { envelopeHeaders, errorBody, errorHeaders, toOrbitError } from '../wire/envelope.ts';
import type { Principal, Store } from '../store/store.ts';
import type { EngineHooks } from '../ops/metrics.ts';
import { CONNECT_PATH, MAX_FRAME_BYTES, SUBPROTOCOL } from '@orbit/spec/protocol';
import { redeliveryPolicy } from '../domain/delivery.ts';
import type { DeliveryEngine } from '../engine/engine.ts';
import { ClaimPool } from './scheduler.ts';
import { ACCESS_MAX_STALENESS_MS, AccessView } from './access.ts';
import { Lane, type LaneDeps } from './lane.ts';
import { CLOSE, Session, type SessionDeps } from './session.ts';

const REASONS: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  426: 'Upgrade Required',
  429: 'Too Many Requests',
  503: 'Service Unavailable',
};

function refuse(socket: Duplex, error: OrbitError, requestId: string = newId()): void {
  const status = error.status ?? ERROR_TABLE[error.code].status ?? 400;
  const body = errorBody(requestId, error);
  const headers = {
    ...envelopeHeaders(requestId, errorHeaders(error)),
    'content-length': String(Buffer.byteLength(body)),
    connection: 'close',
  };
  if (error.code === 'PROTOCOL_REQUIRED') Object.assign(headers, { upgrade: 'websocket', 'sec-websocket-protocol': SUBPROTOCOL });
  const head = Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
  socket.end(`HTTP/1.1 ${status} ${REASONS[status] ?? 'Error'}\r\n${head}\r\n${body}`);
}

/** Same-origin (the Origin's host equals the Host header), absent, or explicitly allowed. */
export function originAllowed(origin: string | undefined, host: string | undefined, allowed: readonly string[]): boolean {
  if (origin === undefined) return true;
  if (allowed.includes(origin)) return true;
  try {
    return host !== undefined && new URL(origin).host === host;
  } catch {
    return false;
  }
}

function offeredProtocols(header: string | undefined): string[] {
  return (header ?? '')
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean);
}

export class EventGateway {
  private readonly wss = new WebSocketServer({
    noServer: true,
    perMessageDeflate: false,
    maxPayload: MAX_FRAME_BYTES,
    // One frame per turn of the event loop for each connection: a connection that writes
    // thousands of frames at once does not keep every other connection waiting while they are
    // parsed (spec/README.md "Read queue 4, write queue 8").
    allowSynchronousEvents: false,
    handleProtocols: (protocols) => (protocols.has(SUBPROTOCOL) ? SUBPROTOCOL : false),
  });
  private readonly sessions = new Set<Session>();
  private readonly pool: ClaimPool;
  /** The lane of each subscription that has sessions on this node. */
  private readonly lanes = new Map<string, Lane>();
  private readonly laneDeps: LaneDeps;
  private readonly deps: SessionDeps;
  /** Upgrades accepted by Orbit's checks whose WebSocket handshake has not finished. */
  private readonly pending = new Set<Duplex>();
  /** The 'close' listener of a pending upgrade's socket (`this`): one function for all of them, taken off at the handshake. */
  private readonly forgetPending: (this: Duplex) => void;
  private readonly access: AccessView;
  /** This node's row in `nodes`. */
  private readonly node = { id: newId(), description: `${hostname()} pid ${process.pid}` };
  private readonly registered: Promise<string>;
  private lastHead = -1n;
  /** When this node last learned the committed head: from a head query or from its own append. */
  private headSeenAt = Number.NEGATIVE_INFINITY;
  private headTimer: NodeJS.Timeout | undefined;
  /** When this node last renewed its row (`heartbeat`); it registered at start. */
  private renewedAt = performance.now();
  private renewing = false;
  private timers: NodeJS.Timeout[] = [];
  private accepting = true;

  constructor(
    private readonly store: Store,
    engine: DeliveryEngine,
    private readonly settings: Settings,
    private readonly log: SessionDeps['log'],
    private readonly hooks?: EngineHooks,
    /** The upgrade path this gateway owns: CONNECT_PATH under the app's base path. */
    private readonly connectPath: string = CONNECT_PATH,
  ) {
    const pending = this.pending;
    this.forgetPending = function (this: Duplex) {
      pending.delete(this);
    };
    this.pool = new ClaimPool(undefined, (error) => log('error', 'claim pool error', { error: String(error) }));
    this.access = new AccessView(
      (ids) => store.accessOf(ids),
      () => this.boundSubscriptions(),
    );
    this.registered = this.register();
    this.laneDeps = {
      engine,
      pool: this.pool,
      access: this.access,
      settings,
      policy: redeliveryPolicy(settings),
      log,
      ...(hooks ? { hooks } : {}),
    };
    this.deps = {
      store,
      engine,
      lanes: {
        join: (session) => this.joinLane(session),
        leave: (session, lane) => this.leaveLane(session, lane),
        markDirty: (id) => this.pool.markDirty(id),
        wake: () => this.pool.wake(),
      },
      access: this.access,
      node: this.registered,
      settings,
      log,
      ...(hooks ? { hooks } : {}),
    };
    // This node's own appends wake its sessions at once, and move the head it knows, so that the
    // head poll wakes them only for results that other nodes appended.
    store.onAppend((head) => {
      if (head > this.lastHead) this.lastHead = head;
      this.headSeenAt = performance.now();
      this.pool.markAllDirty();
    });
    // Results appended by other nodes: watch the committed head, only while a session waits.
    this.scheduleHeadPoll(settings.pollIntervalMs);
    // Lease expiries, manual retries and resumes happen without a local signal: sweep regularly.
    const sweepMs = Math.max(settings.pollIntervalMs, Math.min(1000, Math.floor(settings.leaseDurationMs / 2)));
    this.timers.push(
      setInterval(() => {
        for (const session of this.sessions) session.refresh();
        this.pool.markAllDirty();
      }, sweepMs),
    );
    // Authorization may go away while nobody claims or ACKs: re-check it at the staleness bound.
    this.timers.push(setInterval(() => void this.checkAccess(), ACCESS_MAX_STALENESS_MS));
    this.timers.push(setInterval(() => void this.heartbeat(), Math.max(100, Math.floor(settings.nodeTtlMs / 3))));
    for (const timer of this.timers) timer.unref();
  }

  private joinLane(session: Session): Lane {
    let lane = this.lanes.get(session.subscriptionId);
    if (!lane) {
      lane = new Lane(session.applicationId, session.subscriptionId, session.subscription, this.laneDeps);
      this.lanes.set(session.subscriptionId, lane);
    }
    lane.join(session);
    return lane;
  }

  private leaveLane(session: Session, lane: Lane): void {
    if (!lane.leave(session)) return;
    this.pool.remove(lane);
    if (this.lanes.get(session.subscriptionId) === lane) this.lanes.delete(session.subscriptionId);
  }

  /** Registers the node, retrying until the database answers (sessions wait for it). */
  private async register(): Promise<string> {
    for (let attempt = 0; ; attempt++) {
      try {
        await this.store.registerNode(this.node);
        return this.node.id;
      } catch (error) {
        if (!this.accepting) throw error;
        this.log('warn', 'could not register the node; retrying', { error: String(error) });
        await new Promise((resolve) => setTimeout(resolve, Math.min(5000, 100 * 2 ** attempt)));
      }
    }
  }

  private boundSubscriptions(): Set<string> {
    const ids = new Set<string>();
    for (const session of this.sessions) if (session.sessionId !== null) ids.add(session.subscriptionId);
    return ids;
  }

  /** Closes the sessions whose credential or subscription no longer allows consuming. */
  private async checkAccess(): Promise<void> {
    if (this.sessionCount === 0) return;
    try {
      await this.access.refresh();
      for (const session of [...this.sessions]) {
        if (session.sessionId === null || this.access.decide(session.subscriptionId, session.tokenDigest).ok) continue;
        // Confirmed by a query sent now: the session may have connected after the one above was sent.
        const verdict = await this.access.verdict(session.subscriptionId, session.tokenDigest);
        if (!verdict.ok) session.fail(verdict.code, verdict.message);
      }
    } catch (error) {
      // The next claim or ACK meets the same failure and reports it to its session.
      this.log('warn', 'authorization check failed', { error: String(error) });
    }
  }

  /**
   * Renews this node and its sessions that were active; removes the rows of dead nodes. A node that
   * has not renewed itself for `node_ttl_ms` (the database is unreachable, or a renewal hangs on a
   * cut link) is gone for the others, its sessions' rows with it, and its sessions can neither
   * lease nor acknowledge: it closes them with UNAVAILABLE so that their clients reconnect to a node
   * that reaches the database (spec/README.md, "Sessions and nodes").
   */
  private async heartbeat(): Promise<void> {
    if (performance.now() - this.renewedAt > this.settings.nodeTtlMs) this.cutOff();
    // A renewal still waiting (a cut link holds it) is not joined by another.
    if (this.renewing) return;
    const active: string[] = [];
    for (const session of this.sessions) {
      if (session.sessionId !== null && session.active) active.push(session.sessionId);
      session.active = false;
    }
    this.renewing = true;
    try {
      await this.registered;
      const removed = await this.store.heartbeat(this.node, active, this.settings.nodeTtlMs);
      this.renewedAt = performance.now();
      if (removed > 0) this.log('info', 'removed the sessions of nodes that stopped', { sessions: removed });
    } catch (error) {
      this.log('warn', 'node heartbeat failed', { error: String(error) });
    } finally {
      this.renewing = false;
    }
  }

  /** Closes every event connection of a node the others take for dead (see `heartbeat`). */
  private cutOff(): void {
    const bound = [...this.sessions].filter((s) => s.sessionId !== null);
    if (bound.length === 0) return;
    this.log('warn', 'no heartbeat within node_ttl_ms; closing event connections', {
      sessions: bound.length,
      node_ttl_ms: this.settings.nodeTtlMs,
    });
    for (const session of bound) session.fail('UNAVAILABLE', 'this node cannot reach the database; reconnect');
  }

  get connectionCount(): number {
    return this.sessions.size + this.pending.size;
  }

  /** Connections bound to a subscription (after `events.welcome`). */
  get sessionCount(): number {
    let bound = 0;
    for (const session of this.sessions) if (session.sessionId !== null) bound++;
    return bound;
  }

  /** Claims waiting plus running in this node's pool. */
  get claimPoolDepth(): number {
    return this.pool.depth;
  }

  /** Offers work to every connected session now (after the background sweep recovered leases). */
  wake(): void {
    for (const session of this.sessions) session.refresh();
    this.pool.markAllDirty();
  }

  /** Shutdown, first step: new upgrades are refused with UNAVAILABLE. */
  stopAccepting(): void {
    this.accepting = false;
  }

  private refuse(socket: Duplex, error: OrbitError): void {
    const requestId = newId();
    this.hooks?.upgradeRejected(error.code);
    this.log('debug', 'event connection refused', { request_id: requestId, code: error.code });
    refuse(socket, error, requestId);
  }

  /**
   * One look at the committed head when some local session could take a delivery now and the node
   * has not learned the head for a poll interval. A node whose sessions are all full or absent sends
   * no statement, and neither does one that appends itself more often than the interval: each of its
   * appends shows the committed head, which covers every result committed before it, so a result
   * another node commits is seen within one interval either way (spec/README.md, "The event engine (`orbit.events.v1`)").
   * One look at a time: the next is scheduled when this one is done.
   */
  private async pollHead(): Promise<void> {
    const interval = this.deps.settings.pollIntervalMs;
    const now = performance.now();
    const fresh = now - this.headSeenAt < interval;
    if (!fresh && this.anySessionWants()) {
      try {
        const { head } = await this.store.logPosition();
        this.headSeenAt = Math.max(this.headSeenAt, now);
        if (head > this.lastHead) {
          this.lastHead = head;
          this.pool.markAllDirty();
        }
      } catch {
        // The next claim reports the failure to its session.
      }
    }
    this.scheduleHeadPoll(fresh ? this.headSeenAt + interval - now : interval);
  }

  private scheduleHeadPoll(delayMs: number): void {
    if (!this.accepting) return;
    this.headTimer = setTimeout(() => void this.pollHead(), delayMs);
    this.headTimer.unref();
  }

  private anySessionWants(): boolean {
    for (const session of this.sessions) if (session.wants()) return true;
    return false;
  }

  /** Whether an upgrade request is for Orbit's own path (the query string aside). */
  owns(request: IncomingMessage): boolean {
    return (request.url ?? '').split('?')[0] === this.connectPath;
  }

  /**
   * Handles the upgrades of `server` for Orbit's path. Every other upgrade is left to the server's
   * other `upgrade` listeners (a host app's own WebSocket endpoints), unless `refuseOthers`: then it
   * gets the NOT_FOUND envelope, for a server that is Orbit's alone.
   */
  attach(server: Server, options: { refuseOthers?: boolean } = {}): void {
    server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
      if (this.owns(request)) void this.upgrade(request, socket, head);
      else if (options.refuseOthers) {
        socket.on('error', () => socket.destroy());
        this.refuse(socket, new OrbitError('NOT_FOUND', `no route for ${(request.url ?? '').split('?')[0]}`));
      }
    });
  }

  private async upgrade(request: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    socket.on('error', () => socket.destroy());
    const url = request.url ?? '';
    if (!this.accepting) return this.refuse(socket, new OrbitError('UNAVAILABLE', 'the server is shutting down'));
    if (url.includes('?'))
      return this.refuse(
        socket,
        new OrbitError('INVALID_ARGUMENT', 'the connect URL takes no query parameters; send the token in the Authorization header'),
      );
    if (request.method !== 'GET') return this.refuse(socket, new OrbitError('NOT_FOUND', 'use GET to connect'));
    if (!originAllowed(request.headers.origin, request.headers.host, this.settings.allowedOrigins)) {
      return this.refuse(socket, new OrbitError('PERMISSION_DENIED', 'cross-origin event connections are not allowed'));
    }
    if (!offeredProtocols(request.headers['sec-websocket-protocol']).includes(SUBPROTOCOL)) {
      return this.refuse(socket, new OrbitError('PROTOCOL_REQUIRED', `Sec-WebSocket-Protocol: ${SUBPROTOCOL} is required`));
    }
    if (this.connectionCount >= this.settings.maxConnections) {
      return this.refuse(socket, new OrbitError('CAPACITY_EXCEEDED', 'this node has no free event connection; retry shortly'));
    }
    // The slot is held until the session exists or the socket is gone, whichever comes first:
    // `ws` answers a handshake it cannot accept (no key, another version, an unparsable protocol
    // list) without calling back, and destroys the socket later.
    this.pending.add(socket);
    socket.once('close', this.forgetPending);
    let principal: Principal;
    try {
      principal = await authorize(this.store.authenticator, request.headers.authorization, 'ConnectEvents');
    } catch (error) {
      this.pending.delete(socket);
      return this.refuse(socket, toOrbitError(error));
    }
    const requestId = newId();
    const addHeaders = (headers: string[]) => headers.push(`X-Request-ID: ${requestId}`, 'Cache-Control: no-store');
    this.wss.once('headers', addHeaders);
    this.wss.handleUpgrade(request, socket, head, (ws: WebSocket) => {
      this.pending.delete(socket);
      socket.off('close', this.forgetPending);
      const session = new Session(ws, socket, principal, this.deps);
      this.sessions.add(session);
      this.log('debug', 'event connection opened', { request_id: requestId, credential_id: principal.credentialId });
      ws.on('close', (code: number) => {
        this.sessions.delete(session); // `ws` emits 'close' once; `on` keeps no `once` wrapper per connection
        this.log('info', 'event connection closed', {
          request_id: requestId,
          session_id: session.sessionId,
          subscription_id: session.subscriptionId || null,
          code,
        });
      });
    });
    this.wss.off('headers', addHeaders);
  }

  /** Stops accepting, lets running claims commit, then closes every session with 1001. */
  async close(): Promise<void> {
    this.accepting = false;
    clearTimeout(this.headTimer);
    for (const timer of this.timers) clearInterval(timer);
    this.pool.close();
    await this.pool.drain();
    for (const session of this.sessions) session.close(CLOSE.goingAway, 'server shutting down');
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
    // The sessions are closed: remove the node's row and theirs (a crash leaves them to the TTL).
    await this.registered
      .then(
        () => this.store.deregisterNode(this.node.id),
        () => undefined,
      )
      .catch((error: unknown) => this.log('warn', 'could not remove the node row', { error: String(error) }));
  }
}

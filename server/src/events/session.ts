/**
 * @module
 * One event connection (spec/rules.md#s5-9 to #s7-9): hello within the deadline, then ACKs and
 * pings while its subscription's lane (`lane.ts`) feeds it deliveries. Frames wait in a read queue
 * with at most 4 in processing; every frame the connection sends counts against its write queue of
 * 8, and a turn leases only what the queue can take now; a write that does not finish within the
 * write timeout ends the connection. Capacity is decided by the database (the `sessions` row and
 * the leases it holds); every claim and ACK acts on authorization at most one second stale
 * (`access.ts`).
 *
 * Longer than 400 lines: one connection's state machine (hello, frames in, the turn's frames out
 * in their fixed order, close) reads as one piece; the decisions it applies live in domain/.
 */
import { CLOSE_CODES, ERROR_TABLE, type ErrorCode, OrbitError } from '@orbit/spec/errors';
import type { Settings } from '../config.ts';
import { newId } from '../crypto.ts';
import { decideConsumeAccess } from '../domain/access.ts';
import { claimRoom, isLeaseExpired, REFILL_WAIT_MS, refillRoom, wantsClaim } from '../domain/delivery.ts';
import type { DeliveryEngine } from '../engine/engine.ts';
import type { Log } from '../ops/log.ts';
import type { EngineHooks } from '../ops/metrics.ts';
import type { Principal, Store } from '../store/store.ts';
import type { AccessView } from './access.ts';
import { type ClientFrame, readClientFrame } from './envelope.ts';
import { ackReplyFrame, deliverFrame, errorFrame, pingReplyFrame, welcomeFrame } from './frames.ts';
import type { Lane, LaneMember, TurnPart } from './lane.ts';
import { ReadQueue } from './read-queue.ts';

const READ_QUEUE = 4;
const WRITE_QUEUE = 8;

export const CLOSE = {
  normal: CLOSE_CODES.normal.code,
  goingAway: CLOSE_CODES.goingAway.code,
  policy: CLOSE_CODES.policy.code,
} as const;

/** The subscription of a session not bound yet, or whose lane holds it: one object for all of them. */
const UNBOUND: Session['subscription'] = Object.freeze({ queueId: '', types: Object.freeze([]), cursorSequence: 0n });

export interface SessionDeps {
  readonly store: Store;
  readonly engine: DeliveryEngine;
  /** The lane of the session's subscription on this node, joined once the session is bound. */
  readonly lanes: {
    join(member: Session): Lane;
    leave(member: Session, lane: Lane): void;
    /** The subscription may have work again (a resume). */
    markDirty(subscriptionId: string): void;
    /** A session can take more again (a write finished, a partial window waited). */
    wake(): void;
  };
  readonly access: AccessView;
  /** This node's id in the `nodes` table; resolves once the node is registered. */
  readonly node: Promise<string>;
  readonly settings: Settings;
  readonly log: Log;
  /** Metrics hooks (optional). */
  readonly hooks?: EngineHooks;
}

/** What waits in the read queue: a parsed frame, or a frame whose body failed validation. */
/** A text frame as `ws` delivered it: read (parsed and checked) only when its turn in the read queue comes. */
type Task = Buffer | ArrayBuffer | Buffer[];

export class Session implements LaneMember {
  sessionId: string | null = null;
  subscriptionId = '';
  /** The subscription as the hello found it (its queue and types are fixed at its creation), until its lane has it. */
  subscription: { readonly queueId: string; readonly types: readonly string[]; readonly cursorSequence: bigint } = UNBOUND;
  readonly applicationId: string;
  /** The digest of the token the connection authenticated with (a rotation may retire it). */
  readonly tokenDigest: string | undefined;
  /** A valid frame arrived since the node's last heartbeat (the session's `last_seen_at`). */
  active = false;
  private capacity = 0;
  private enabled = true;
  /**
   * Deliveries this connection believes it holds: id → lease deadline (database clock). The
   * database decides capacity; this only spares turns that could not lease anything.
   */
  private readonly held = new Map<string, number>();
  /** The lane of the subscription on this node, once bound. */
  private lane: Lane | null = null;
  private writing = 0;
  private partialSince: number | null = null; // since when room has been below a refill's worth (`wantsClaim`)
  /** Whether the socket is corked until the end of this turn (see `cork`). */
  private corked = false;
  private closing = false;
  private released = false;
  private readonly reads: ReadQueue<Task>;
  private helloTimer: NodeJS.Timeout | undefined;
  private idleTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly ws: import('ws').WebSocket,
    /** The upgraded connection under `ws`: corked while a turn's frames are written (see `cork`). */
    private readonly socket: import('node:stream').Writable,
    private readonly principal: Principal,
    private readonly deps: SessionDeps,
  ) {
    this.applicationId = principal.applicationId;
    this.tokenDigest = principal.tokenDigest;
    this.reads = new ReadQueue<Task>(
      READ_QUEUE,
      (task) => this.run(task),
      // Each frame in processing may answer with one frame: keep room for it in the write queue.
      () => this.writing + this.reads.running < WRITE_QUEUE,
      (waiting) => {
        if (waiting) this.ws.pause();
        else if (!this.closing) this.ws.resume();
      },
    );
    this.helloTimer = setTimeout(() => this.close(CLOSE.policy, 'no events.hello in time'), deps.settings.helloTimeoutMs);
    this.touch();
    ws.on('message', (data, isBinary) => this.onMessage(data, isBinary));
    ws.on('close', () => this.onClosed());
    ws.on('error', () => this.onClosed());
  }

  // --- LaneMember ------------------------------------------------------------------------------

  wants(): boolean {
    if (this.sessionId === null || this.closing || !this.enabled) return false;
    const room = this.room();
    const held = this.capacity - this.free();
    if (room <= 0 || held <= 0 || room >= refillRoom(this.capacity)) this.partialSince = null;
    else if (this.partialSince === null) {
      this.partialSince = performance.now();
      setTimeout(() => this.deps.lanes.wake(), REFILL_WAIT_MS).unref();
    }
    const partialForMs = this.partialSince === null ? null : performance.now() - this.partialSince;
    return wantsClaim({ room, held, capacity: this.capacity, partialForMs });
  }

  /**
   * How many deliveries this connection could take now: write-queue room within its free capacity.
   * `releasing`: held leases whose ACKs commit in the same turn, before its leases.
   */
  room(releasing = 0): number {
    const writable = WRITE_QUEUE - this.writing - this.reads.running;
    const held = this.capacity - this.free();
    return claimRoom({ writable, capacity: this.capacity, held, releasing });
  }

  holds(deliveryId: string): boolean {
    return this.held.has(deliveryId);
  }

  open(): boolean {
    return !this.closing && this.sessionId !== null;
  }

  /**
   * Writes what a turn means for this connection, always in this order: the answers to its ACKs,
   * then its deliveries (their leases are committed), then what ends it or pauses it.
   */
  apply(part: TurnPart): void {
    for (const { entry, answer } of part.acks) {
      const deliveryId = entry.request.deliveryId;
      this.deps.hooks?.acked(answer.kind, this.held.get(deliveryId));
      if (answer.kind === 'lease_lost') {
        this.send(
          errorFrame({
            code: 'DELIVERY_LEASE_LOST',
            message: 'this proof was replaced by a newer delivery or is not valid',
            replyTo: entry.messageId,
            sessionId: this.sessionId ?? undefined,
          }),
        );
        continue;
      }
      this.held.delete(deliveryId);
      this.send(
        ackReplyFrame({
          replyTo: entry.messageId,
          sessionId: this.sessionId!,
          deliveryId,
          eventId: answer.eventId,
          epoch: entry.epoch,
          acknowledgedAt: answer.acknowledgedAt,
          deduplicated: answer.kind === 'duplicate',
        }),
      );
    }
    const now = this.deps.store.clock.now();
    for (const item of part.leased) {
      // A connection that is closing drops it: the lease runs out and the delivery is offered again.
      if (this.closing || this.sessionId === null) break;
      // So does a lease that ended before its frame could leave (its commit stalled, as when a
      // Galera cluster pauses to evict a node): the delivery may already be offered to another
      // session, and an ACK of it could only be DELIVERY_LEASE_LOST (spec/README.md, "What a connection is sent").
      if (isLeaseExpired(item.delivery, now)) {
        this.deps.log('warn', 'lease ended before its event.deliver was sent; not sent', {
          session_id: this.sessionId,
          delivery_id: item.delivery.id,
          late_ms: now - (item.delivery.leaseUntil ?? now),
        });
        continue;
      }
      this.held.set(item.delivery.id, item.delivery.leaseUntil ?? 0);
      this.send(deliverFrame(this.sessionId, item));
      this.deps.hooks?.sent(item);
    }
    if (part.lost) return this.fail('UNAVAILABLE', 'this node lost track of the session; reconnect');
    switch (part.state?.kind) {
      case 'paused':
        this.enabled = false;
        return;
      case 'retired':
        return this.fail('NOT_FOUND', 'the subscription was retired');
      case 'history_expired':
        return this.fail('EVENT_HISTORY_EXPIRED', `the subscription's cursor is behind the retention boundary ${part.state.boundary}`);
    }
  }

  /** Free capacity as far as this node knows, forgetting leases that have run out. */
  private free(): number {
    const now = this.deps.store.clock.now();
    for (const [id, until] of this.held) if (until <= now) this.held.delete(id);
    return this.capacity - this.held.size;
  }

  /** Called by the engine's sweep: a paused subscription may have been resumed meanwhile. */
  refresh(): void {
    this.enabled = true;
  }

  // --- frames in ------------------------------------------------------------------------------

  /**
   * A frame is only queued on arrival: `ws` hands over every frame of a TCP chunk at once, so any
   * work done here for a burst of them keeps the event loop from every other connection (see
   * `ReadQueue`). It is read, and a malformed one closes the connection, when its turn comes.
   */
  private onMessage(data: unknown, isBinary: boolean): void {
    if (this.closing) return;
    if (isBinary) return this.close(CLOSE.policy, 'binary frames are not allowed');
    this.touch();
    this.reads.push(data as Task);
  }

  private async run(data: Task): Promise<void> {
    if (this.closing) return;
    const text = Buffer.isBuffer(data)
      ? data.toString('utf8')
      : Array.isArray(data)
        ? Buffer.concat(data).toString('utf8')
        : Buffer.from(data).toString('utf8');
    const intake = readClientFrame(text, this.sessionId);
    if (intake.kind === 'close') return this.close(CLOSE.policy, intake.reason);
    // A bad body keeps a bound connection open; a bad hello ends it (fail closes without a session).
    if (intake.kind === 'bad_body') return this.fail('INVALID_ARGUMENT', intake.message, intake.messageId);
    try {
      await this.handle(intake.frame);
    } catch (error) {
      const orbitError =
        error instanceof OrbitError ? error : new OrbitError('UNAVAILABLE', 'temporary failure; reconnect and retry', { cause: error });
      if (!(error instanceof OrbitError)) this.deps.log('error', 'frame failed', { session_id: this.sessionId, error: String(error) });
      this.fail(orbitError.code, orbitError.message, intake.frame.message_id);
    }
  }

  private async handle(frame: ClientFrame): Promise<void> {
    switch (frame.type) {
      case 'events.hello':
        return this.hello(frame);
      case 'event.ack':
        return this.ack(frame);
      case 'events.ping':
        return this.ping(frame);
    }
  }

  private async hello(frame: Extract<ClientFrame, { type: 'events.hello' }>): Promise<void> {
    clearTimeout(this.helloTimer);
    this.helloTimer = undefined;
    if (this.sessionId !== null) return; // readClientFrame refuses a second hello; defensive only
    const sessionId = newId();
    const subscription = await this.deps.engine.bind(this.principal, {
      id: sessionId,
      nodeId: await this.deps.node,
      subscriptionId: frame.body.subscription_id,
      capacity: frame.body.capacity,
    });
    this.sessionId = sessionId;
    if (this.closing) return this.release();
    this.subscriptionId = subscription.id;
    this.subscription = subscription;
    this.capacity = frame.body.capacity;
    this.enabled = subscription.enabled;
    this.send(
      welcomeFrame({
        replyTo: frame.message_id,
        sessionId,
        subscriptionId: subscription.id,
        capacity: this.capacity,
        leaseDurationMs: this.deps.settings.leaseDurationMs,
        heartbeatIntervalMs: this.deps.settings.heartbeatIntervalMs,
        serverTime: this.deps.store.clock.now(),
        enabled: subscription.enabled,
      }),
    );
    this.lane = this.deps.lanes.join(this);
    this.subscription = UNBOUND; // a new lane took it from the first session; no connection keeps its own copy
  }

  /** Queues the ACK for its subscription's next turn; the turn's part brings its answer (`apply`). */
  private async ack(frame: Extract<ClientFrame, { type: 'event.ack' }>): Promise<void> {
    const verdict = await this.deps.access.verdict(this.subscriptionId, this.tokenDigest);
    if (!verdict.ok) throw new OrbitError(verdict.code, verdict.message);
    await this.lane!.ack(this, {
      request: { deliveryId: frame.body.delivery_id, epoch: BigInt(frame.body.epoch), secret: frame.body.lease_secret },
      messageId: frame.message_id,
      epoch: frame.body.epoch,
    });
  }

  /** A ping re-checks the credential and the subscription from the database before answering (spec/rules.md#s7-1). */
  private async ping(frame: Extract<ClientFrame, { type: 'events.ping' }>): Promise<void> {
    const state = (await this.deps.store.accessOf([this.subscriptionId])).get(this.subscriptionId)!;
    const token = this.tokenDigest === undefined ? undefined : { digest: this.tokenDigest, now: Date.now() };
    const verdict = decideConsumeAccess(state, token);
    if (!verdict.ok) throw new OrbitError(verdict.code, verdict.message);
    const enabled = state.subscription!.enabled;
    const resumed = enabled && !this.enabled;
    this.enabled = enabled;
    if (resumed) this.deps.lanes.markDirty(this.subscriptionId);
    this.send(pingReplyFrame({ replyTo: frame.message_id, sessionId: this.sessionId!, serverTime: this.deps.store.clock.now(), enabled }));
  }

  // --- frames out and lifecycle ---------------------------------------------------------------

  private send(text: string): void {
    if (this.closing) return;
    this.cork();
    this.writing++;
    const timer = setTimeout(() => {
      this.deps.log('warn', 'write timed out; closing', { session_id: this.sessionId });
      this.closing = true;
      this.ws.terminate();
    }, this.deps.settings.writeTimeoutMs);
    this.ws.send(text, (error) => {
      clearTimeout(timer);
      this.writing--;
      if (error) return this.onClosed();
      this.reads.pump();
      if (this.sessionId !== null && this.room() > 0) this.deps.lanes.wake();
    });
  }

  /**
   * Frames sent in one turn of the event loop (the deliveries of one claim, the answers of one ACK
   * group) leave in one write: the socket is corked at the first and uncorked once the turn's
   * callbacks and promise reactions have run.
   */
  private cork(): void {
    if (this.corked) return;
    this.corked = true;
    this.socket.cork();
    process.nextTick(() => {
      this.corked = false;
      this.socket.uncork();
    });
  }

  /** Sends an error frame; closes when the code's reaction (spec/README.md "Close codes") is to close. */
  fail(code: ErrorCode, message: string, replyTo?: string): void {
    this.send(errorFrame({ code, message, replyTo, sessionId: this.sessionId ?? undefined }));
    const rule = ERROR_TABLE[code];
    if (rule.socket === 'close' || this.sessionId === null) this.close(rule.closeCode ?? CLOSE.policy, code);
  }

  /** A valid frame: the idle timeout starts again, on the connection's one timer (re-armed, not replaced). */
  private touch(): void {
    this.active = true;
    this.idleTimer ??= setTimeout(
      () => this.close(CLOSE.policy, 'no valid frame within the idle timeout'),
      this.deps.settings.idleTimeoutMs,
    );
    this.idleTimer.refresh();
  }

  close(code: number, reason: string): void {
    if (this.closing) return;
    this.closing = true;
    this.stopWork();
    // Read again whatever is queued, so the peer's answer to our close frame is seen at once.
    this.ws.resume();
    this.ws.close(code, reason.slice(0, 120));
    // A peer that never answers the close handshake is cut off after the write timeout.
    setTimeout(() => this.ws.terminate(), this.deps.settings.writeTimeoutMs).unref();
  }

  private onClosed(): void {
    this.closing = true;
    this.stopWork();
  }

  private stopWork(): void {
    clearTimeout(this.helloTimer);
    clearTimeout(this.idleTimer);
    this.reads.stop();
    if (this.lane) this.deps.lanes.leave(this, this.lane);
    this.release();
  }

  /** Removes the session's row once; its leases stay and run out (spec/rules.md#s5-17). */
  private release(): void {
    if (this.released || this.sessionId === null) return;
    this.released = true;
    this.deps.store.closeSession(this.sessionId).catch((error: unknown) => {
      this.deps.log('warn', 'could not remove a closed session; the node heartbeat will', {
        session_id: this.sessionId,
        error: String(error),
      });
    });
  }
}

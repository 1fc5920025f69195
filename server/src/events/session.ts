/**
 * @module
 * One event connection (spec/rules.md#s5-9 to #s7-9): hello within the deadline, then ACKs and
 * pings while the claim pool feeds deliveries. Frames wait in a read queue with at most 4 in
 * processing; every frame the connection sends counts against its write queue of 8, and a claim
 * leases only what the queue can take now; a write that does not finish within the write timeout
 * ends the connection. Capacity is decided by the database (the `sessions` row and the leases that
 * name this session); every claim and ACK acts on authorization at most one second stale
 * (`access.ts`).
 */
import { CLOSE_CODES, ERROR_TABLE, type ErrorCode, OrbitError } from '@orbit/spec/errors';
import type { Settings } from '../config.ts';
import { newId } from '../crypto.ts';
import { decideConsumeAccess } from '../domain/access.ts';
import { claimRoom, REFILL_WAIT_MS, refillRoom, wantsClaim, type RedeliveryPolicy } from '../domain/delivery.ts';
import type { Log } from '../ops/log.ts';
import type { EngineHooks } from '../ops/metrics.ts';
import type { AckAnswer, ClaimOutcome, Claimed, Principal, Store } from '../store/store.ts';
import type { AccessView } from './access.ts';
import { type ClientFrame, readClientFrame } from './envelope.ts';
import { ackReplyFrame, deliverFrame, errorFrame, pingReplyFrame, welcomeFrame } from './frames.ts';
import { ReadQueue } from './read-queue.ts';
import type { Claimant, ClaimPool } from './scheduler.ts';
import { claimFailed, followUpClaim, planClaim, settleClaim, type ClaimMember } from './claiming.ts';

const READ_QUEUE = 4;
const WRITE_QUEUE = 8;

export const CLOSE = {
  normal: CLOSE_CODES.normal.code,
  goingAway: CLOSE_CODES.goingAway.code,
  policy: CLOSE_CODES.policy.code,
} as const;

export interface SessionDeps {
  readonly store: Store;
  readonly pool: ClaimPool;
  readonly access: AccessView;
  /** This node's id in the `nodes` table; resolves once the node is registered. */
  readonly node: Promise<string>;
  readonly settings: Settings;
  /** Made from `settings` once, for every claim of every session on this node. */
  readonly policy: RedeliveryPolicy;
  readonly log: Log;
  /** Metrics hooks (optional). */
  readonly hooks?: EngineHooks;
}

/** What waits in the read queue: a parsed frame, or a frame whose body failed validation. */
type Task =
  | { readonly kind: 'frame'; readonly frame: ClientFrame }
  | { readonly kind: 'bad_body'; readonly messageId: string; readonly message: string };

export class Session implements Claimant, ClaimMember {
  sessionId: string | null = null;
  subscriptionId = '';
  readonly applicationId: string;
  /** The digest of the token the connection authenticated with (a rotation may retire it). */
  readonly tokenDigest: string | undefined;
  /** A valid frame arrived since the node's last heartbeat (the session's `last_seen_at`). */
  active = false;
  private capacity = 0;
  private enabled = true;
  /** The last claim found max_pending reached with results still waiting. */
  backlogFull = false;
  /**
   * Deliveries this connection believes it holds: id → lease deadline (database clock). The
   * database decides capacity; this only spares claims that could not lease anything.
   */
  private readonly held = new Map<string, number>();
  /** Held deliveries whose ACK is waiting in the ACK batcher or committing. */
  private readonly acking = new Set<string>();
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

  // --- Claimant -------------------------------------------------------------------------------

  wants(): boolean {
    if (this.sessionId === null || this.closing || !this.enabled) return false;
    const room = this.room();
    const held = this.capacity - this.free();
    if (room <= 0 || held <= 0 || room >= refillRoom(this.capacity)) this.partialSince = null;
    else if (this.partialSince === null) {
      this.partialSince = performance.now();
      setTimeout(() => this.deps.pool.wake(), REFILL_WAIT_MS).unref();
    }
    const partialForMs = this.partialSince === null ? null : performance.now() - this.partialSince;
    return wantsClaim({ room, held, capacity: this.capacity, partialForMs });
  }

  /**
   * How many deliveries this connection could take now: write-queue room within its free capacity.
   * `fused`: for a claim in the transaction of this connection's ACKs, where they free capacity.
   */
  room(fused = false): number {
    const writable = WRITE_QUEUE - this.writing - this.reads.running;
    const held = this.capacity - this.free();
    return claimRoom({ writable, capacity: this.capacity, held, releasing: fused ? this.acking.size : 0 });
  }

  async claim(group: readonly Claimant[]): Promise<boolean> {
    const plan = await planClaim(this.deps, this, [this, ...(group as Session[])], false);
    if (plan === null) return false;
    let outcome: ClaimOutcome;
    try {
      outcome = await this.deps.store.claim(plan.request);
    } catch (error) {
      claimFailed(this.deps, plan.sessions, error);
      return false;
    }
    return settleClaim(this.deps, plan.sessions, outcome);
  }

  open(): boolean {
    return !this.closing && this.sessionId !== null;
  }

  deliver(item: Claimed): void {
    if (this.closing || this.sessionId === null) return; // the lease runs out and the delivery is offered again
    this.held.set(item.delivery.id, item.delivery.leaseUntil ?? 0);
    this.send(deliverFrame(this.sessionId, item));
    this.deps.hooks?.sent(item);
  }

  /** A claim that leased nothing for a reason every session of the subscription shares. */
  settle(outcome: Exclude<ClaimOutcome, { kind: 'claimed' }>): void {
    switch (outcome.kind) {
      case 'paused':
        this.enabled = false;
        return;
      case 'retired':
        this.fail('NOT_FOUND', 'the subscription was retired');
        return;
      case 'history_expired':
        this.fail('EVENT_HISTORY_EXPIRED', `the subscription's cursor is behind the retention boundary ${outcome.boundary}`);
        return;
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

  private onMessage(data: unknown, isBinary: boolean): void {
    if (this.closing) return;
    if (isBinary) return this.close(CLOSE.policy, 'binary frames are not allowed');
    const text = Buffer.isBuffer(data)
      ? data.toString('utf8')
      : Array.isArray(data)
        ? Buffer.concat(data).toString('utf8')
        : Buffer.from(data as ArrayBuffer).toString('utf8');
    const intake = readClientFrame(text, this.sessionId);
    if (intake.kind === 'close') return this.close(CLOSE.policy, intake.reason);
    this.touch();
    this.reads.push(intake.kind === 'frame' ? { kind: 'frame', frame: intake.frame } : intake);
  }

  private async run(task: Task): Promise<void> {
    if (this.closing) return;
    // A bad body keeps a bound connection open; a bad hello ends it (fail closes without a session).
    if (task.kind === 'bad_body') return this.fail('INVALID_ARGUMENT', task.message, task.messageId);
    try {
      await this.handle(task.frame);
    } catch (error) {
      const orbitError =
        error instanceof OrbitError ? error : new OrbitError('UNAVAILABLE', 'temporary failure; reconnect and retry', { cause: error });
      if (!(error instanceof OrbitError)) this.deps.log('error', 'frame failed', { session_id: this.sessionId, error: String(error) });
      this.fail(orbitError.code, orbitError.message, task.frame.message_id);
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
    if (this.sessionId !== null) return; // readClientFrame refuses a second hello; defensive only
    const sessionId = newId();
    const subscription = await this.deps.store.bindSession(this.principal, {
      id: sessionId,
      nodeId: await this.deps.node,
      subscriptionId: frame.body.subscription_id,
      capacity: frame.body.capacity,
    });
    this.sessionId = sessionId;
    if (this.closing) return this.release();
    this.subscriptionId = subscription.id;
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
    this.deps.pool.add(this);
  }

  private async ack(frame: Extract<ClientFrame, { type: 'event.ack' }>): Promise<void> {
    const verdict = await this.deps.access.verdict(this.subscriptionId, this.tokenDigest);
    if (!verdict.ok) throw new OrbitError(verdict.code, verdict.message);
    const deliveryId = frame.body.delivery_id;
    // Held here and acknowledged in a group's transaction: a claim that follows in it may fill the slot.
    const releasing = this.held.has(deliveryId);
    if (releasing) this.acking.add(deliveryId);
    let outcome: AckAnswer;
    try {
      outcome = await this.deps.store.acknowledge(
        { subscriptionId: this.subscriptionId, deliveryId, epoch: BigInt(frame.body.epoch), secret: frame.body.lease_secret },
        () => followUpClaim(this.deps, this),
      );
    } finally {
      if (releasing) this.acking.delete(deliveryId);
    }
    this.deps.hooks?.acked(outcome.kind, this.held.get(frame.body.delivery_id));
    if (outcome.kind === 'lease_lost') {
      this.send(
        errorFrame({
          code: 'DELIVERY_LEASE_LOST',
          message: 'this proof was replaced by a newer delivery or is not valid',
          replyTo: frame.message_id,
          sessionId: this.sessionId ?? undefined,
        }),
      );
      return;
    }
    // An ACK frees capacity here; when the backlog was full it also frees room for results
    // waiting to be materialized, which only a new claim can pick up.
    const freed = this.held.delete(frame.body.delivery_id);
    // A claim that followed the ACK in its transaction has used what it freed; otherwise the
    // pool's next claim fills the room.
    if (!outcome.followed && outcome.kind === 'acknowledged' && this.backlogFull) this.deps.pool.markDirty(this.subscriptionId);
    else if (freed) this.deps.pool.wake();
    this.send(
      ackReplyFrame({
        replyTo: frame.message_id,
        sessionId: this.sessionId!,
        deliveryId: frame.body.delivery_id,
        eventId: outcome.eventId,
        epoch: frame.body.epoch,
        acknowledgedAt: outcome.acknowledgedAt,
        deduplicated: outcome.kind === 'duplicate',
      }),
    );
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
    if (resumed) this.deps.pool.markDirty(this.subscriptionId);
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
      if (this.sessionId !== null && this.room() > 0) this.deps.pool.wake();
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

  private touch(): void {
    this.active = true;
    clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => this.close(CLOSE.policy, 'no valid frame within the idle timeout'), this.deps.settings.idleTimeoutMs);
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
    this.deps.pool.remove(this);
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

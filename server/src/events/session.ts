/**
 * @module
 * One event connection (seed §5–§7): hello within the deadline, then ACKs and pings while the claim
 * pool feeds deliveries. Reads run at most 4 at a time (the socket pauses beyond that); at most 8
 * writes wait for the network, and a write that does not finish within the write timeout ends the
 * connection. A connection never holds more deliveries than its capacity.
 */
import type { WebSocket } from 'ws';
import { ERROR_TABLE, OrbitError, type ErrorCode } from '@orbit/spec/errors';
import type { Settings } from '../config.ts';
import { newId } from '../crypto.ts';
import type { Principal, Store } from '../store/store.ts';
import type { Log } from '../ops/log.ts';
import type { EngineHooks } from '../ops/metrics.ts';
import type { AckOutcome, AckRequest, ClaimOutcome, Claimed } from '../store/claims.ts';
import type { Batcher } from '../store/batcher.ts';
import type { Claimant, ClaimPool } from './scheduler.ts';
import { ackReplyFrame, deliverFrame, errorFrame, pingReplyFrame, welcomeFrame } from './frames.ts';
import { readClientFrame, type ClientFrame } from './envelope.ts';

const READ_QUEUE = 4;
const WRITE_QUEUE = 8;

export const CLOSE = { normal: 1000, goingAway: 1001, policy: 1008, tryAgain: 1013 } as const;

export interface SessionDeps {
  readonly store: Store;
  /** ACKs of all sessions on this node, committed in groups. */
  readonly acks: Batcher<AckRequest, AckOutcome>;
  readonly pool: ClaimPool;
  readonly settings: Settings;
  readonly log: Log;
  /** Metrics hooks (optional). */
  readonly hooks?: EngineHooks;
}

export class Session implements Claimant {
  sessionId: string | null = null;
  subscriptionId = '';
  readonly applicationId: string;
  private capacity = 0;
  private enabled = true;
  /** The last claim found max_pending reached with results still waiting. */
  private backlogFull = false;
  /** Deliveries this connection holds: id → lease deadline. */
  private readonly held = new Map<string, number>();
  private reading = 0;
  private writing = 0;
  private closing = false;
  private helloTimer: NodeJS.Timeout | undefined;
  private idleTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly ws: WebSocket,
    private readonly principal: Principal,
    private readonly deps: SessionDeps,
  ) {
    this.applicationId = principal.applicationId;
    this.helloTimer = setTimeout(() => this.close(CLOSE.policy, 'no events.hello in time'), deps.settings.helloTimeoutMs);
    this.touch();
    ws.on('message', (data, isBinary) => this.onMessage(data, isBinary));
    ws.on('close', () => this.onClosed());
    ws.on('error', () => this.onClosed());
  }

  // --- Claimant -------------------------------------------------------------------------------

  wants(): boolean {
    if (this.sessionId === null || this.closing || !this.enabled || this.writing >= WRITE_QUEUE) return false;
    return this.free() > 0;
  }

  async claim(group: readonly Claimant[]): Promise<boolean> {
    const sessions = [this, ...(group as Session[])].filter((s) => !s.closing && s.sessionId !== null);
    const free = sessions.map((s) => s.free());
    const max = free.reduce((a, b) => a + b, 0);
    if (max <= 0 || !sessions.includes(this)) return false;
    let outcome: ClaimOutcome;
    try {
      outcome = await this.deps.store.claim({
        subscriptionId: this.subscriptionId,
        session: this.sessionId!,
        max,
        leaseMs: this.deps.settings.leaseDurationMs,
        policy: { backoffMs: this.deps.settings.redeliveryBackoffMs, backoffMaxMs: this.deps.settings.redeliveryBackoffMaxMs },
      });
    } catch (error) {
      this.deps.log('error', 'claim failed', { session_id: this.sessionId, error: String(error) });
      this.deps.hooks?.claimed('error');
      for (const s of sessions) s.fail('UNAVAILABLE', 'the database is unavailable; reconnect later');
      return false;
    }
    this.deps.hooks?.claimed(outcome.kind === 'claimed' && outcome.items.length === 0 ? 'empty' : outcome.kind);
    if (outcome.kind !== 'claimed') {
      for (const s of sessions) s.settle(outcome);
      return false;
    }
    // Each session takes as many as it has room for, in turn.
    let next = 0;
    sessions.forEach((s, i) => {
      s.backlogFull = outcome.full;
      for (const item of outcome.items.slice(next, next + free[i]!)) s.deliver(item);
      next += free[i]!;
    });
    return outcome.more;
  }

  private deliver(item: Claimed): void {
    if (this.closing || this.sessionId === null) return; // the lease runs out and the delivery is offered again
    this.held.set(item.delivery.id, item.delivery.leaseUntil ?? 0);
    this.send(deliverFrame(this.sessionId, item));
    this.deps.hooks?.sent(item);
  }

  /** A claim that leased nothing for a reason every session of the subscription shares. */
  private settle(outcome: Exclude<ClaimOutcome, { kind: 'claimed' }>): void {
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

  /** Free capacity, forgetting deliveries whose lease has run out (the server will offer them again). */
  private free(): number {
    const now = Date.now();
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
    // A bad body keeps a bound connection open; a bad hello ends it (fail closes without a session).
    if (intake.kind === 'bad_body') return this.fail('INVALID_ARGUMENT', intake.message, intake.messageId);
    this.reading++;
    if (this.reading >= READ_QUEUE) this.ws.pause();
    this.handle(intake.frame)
      .catch((error: unknown) => {
        const orbitError =
          error instanceof OrbitError ? error : new OrbitError('UNAVAILABLE', 'temporary failure; reconnect and retry', { cause: error });
        if (!(error instanceof OrbitError)) this.deps.log('error', 'frame failed', { session_id: this.sessionId, error: String(error) });
        this.fail(orbitError.code, orbitError.message, intake.frame.message_id);
      })
      .finally(() => {
        this.reading--;
        if (this.reading < READ_QUEUE && !this.closing) this.ws.resume();
      });
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
    const subscription = await this.deps.store.bindSession(this.principal, frame.body.subscription_id, frame.body.capacity);
    if (this.closing) return;
    this.sessionId = newId();
    this.subscriptionId = subscription.id;
    this.capacity = frame.body.capacity;
    this.enabled = subscription.enabled;
    this.send(
      welcomeFrame({
        replyTo: frame.message_id,
        sessionId: this.sessionId,
        subscriptionId: subscription.id,
        capacity: this.capacity,
        leaseDurationMs: this.deps.settings.leaseDurationMs,
        heartbeatIntervalMs: this.deps.settings.heartbeatIntervalMs,
        enabled: subscription.enabled,
      }),
    );
    this.deps.pool.add(this);
  }

  private async ack(frame: Extract<ClientFrame, { type: 'event.ack' }>): Promise<void> {
    const outcome = await this.deps.acks.submit({
      subscriptionId: this.subscriptionId,
      deliveryId: frame.body.delivery_id,
      epoch: BigInt(frame.body.epoch),
      secret: frame.body.lease_secret,
    });
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
    if (outcome.kind === 'acknowledged' && this.backlogFull) this.deps.pool.markDirty(this.subscriptionId);
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

  /** A ping re-checks the credential and the subscription before answering (seed §7). */
  private async ping(frame: Extract<ClientFrame, { type: 'events.ping' }>): Promise<void> {
    const principal = await this.deps.store.principalById(this.principal.credentialId);
    if (!principal) throw new OrbitError('UNAUTHENTICATED', 'the credential was revoked');
    if (!principal.permissions.has('events:consume'))
      throw new OrbitError('PERMISSION_DENIED', 'the credential lost the events:consume permission');
    const subscription = await this.deps.store.ownedSubscription(principal, this.subscriptionId);
    if (subscription.retiredAt !== null) throw new OrbitError('NOT_FOUND', 'the subscription was retired');
    const resumed = subscription.enabled && !this.enabled;
    this.enabled = subscription.enabled;
    if (resumed) this.deps.pool.markDirty(this.subscriptionId);
    this.send(pingReplyFrame({ replyTo: frame.message_id, sessionId: this.sessionId!, enabled: subscription.enabled }));
  }

  // --- frames out and lifecycle ---------------------------------------------------------------

  private send(text: string): void {
    if (this.closing) return;
    this.writing++;
    const timer = setTimeout(() => {
      this.deps.log('warn', 'write timed out; closing', { session_id: this.sessionId });
      this.closing = true;
      this.ws.terminate();
    }, this.deps.settings.writeTimeoutMs);
    this.ws.send(text, (error) => {
      clearTimeout(timer);
      this.writing--;
      if (error) this.onClosed();
      else if (this.writing < WRITE_QUEUE && this.sessionId !== null) this.deps.pool.wake();
    });
  }

  /** Sends an error frame; closes when the code's reaction (seed §7) is to close. */
  fail(code: ErrorCode, message: string, replyTo?: string): void {
    this.send(errorFrame({ code, message, replyTo, sessionId: this.sessionId ?? undefined }));
    if (ERROR_TABLE[code].socket === 'close' || this.sessionId === null) this.close(CLOSE.policy, code);
  }

  private touch(): void {
    clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => this.close(CLOSE.policy, 'no valid frame within the idle timeout'), this.deps.settings.idleTimeoutMs);
  }

  close(code: number, reason: string): void {
    if (this.closing) return;
    this.closing = true;
    this.stopTimers();
    this.deps.pool.remove(this);
    this.ws.close(code, reason.slice(0, 120));
    // A peer that never answers the close handshake is cut off after the write timeout.
    setTimeout(() => this.ws.terminate(), this.deps.settings.writeTimeoutMs).unref();
  }

  private onClosed(): void {
    this.closing = true;
    this.stopTimers();
    this.deps.pool.remove(this);
  }

  private stopTimers(): void {
    clearTimeout(this.helloTimer);
    clearTimeout(this.idleTimer);
  }
}

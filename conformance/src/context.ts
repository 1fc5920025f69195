/**
 * @module
 * What a case works with (`CaseContext`): HTTP with raw bytes, WebSocket with raw frames, a result
 * publisher, credentials by role, fixtures (subscriptions that are retired again after the case),
 * checks that fail with a readable message, and fast-check properties that report their seed and
 * the request or frame they actually sent. Everything a case sends or receives lands in its evidence.
 *
 * It is built in three floors: `ContextBase` (context-base.ts: environment, timing, evidence,
 * checks), `HttpContext` (context-http.ts: requests, envelopes, fixtures) and, in this file, the
 * event connections with their frame checks, properties and teardown.
 */
import { createHash } from 'node:crypto';
import type { AckReplyFrame, AckRequestFrame, DeliverFrame, WelcomeFrame } from '@orbit/generated';
import type { ErrorCode } from '@orbit/spec/errors';
import fc from 'fast-check';
import type { Role } from './config.ts';
import { HttpContext } from './context-http.ts';
import { CheckFailure } from './errors.ts';
import { type Evidence, EvidenceLog } from './evidence.ts';
import { type AckReply, isDeliver, type Received, repliesTo } from './frames.ts';
import { EventConnection, type OpenOptions, type UpgradeOutcome } from './ws.ts';

export type { RunEnvironment } from './context-base.ts';

/** Fields of an event.ack body to send instead of the proof's own, with any value. */
export type AckOverride = { readonly [K in keyof AckRequestFrame['body']]?: unknown };

/** A 31-bit seed for one property, fixed by the run seed and the case id. */
export function propertySeed(runSeed: number, caseId: string): number {
  return createHash('sha256').update(`${runSeed}:${caseId}`).digest().readUInt32BE(0) & 0x7fffffff;
}

/** The last thing the client sent in `items` (an HTTP request or a frame), as text. */
export function lastSent(items: readonly Evidence[]): string {
  for (let i = items.length - 1; i >= 0; i--) {
    const e = items[i]!;
    if (e.kind === 'http') return `${e.method} ${e.target}${e.requestBody !== undefined ? ` ${e.requestBody}` : ''}`;
    if (e.kind === 'ws-frame' && e.direction === 'sent') return `${e.binary ? '(binary frame) ' : 'frame '}${e.text}`;
  }
  return '(nothing was sent)';
}

export class CaseContext extends HttpContext {
  private readonly connections: EventConnection[] = [];
  /** Every connection of the case, also closed ones: their deliveries are proofs for cleanup. */
  private readonly allConnections: EventConnection[] = [];

  /** An error frame with `code`. */
  expectFrameError(frame: Received, code: ErrorCode, what: string): void {
    if (frame.type !== 'error' || frame.error.code !== code)
      throw new CheckFailure(`${what}: expected an error frame ${code}, got ${frame.$text}`);
  }

  /**
   * The request `messageId` was refused: either an error frame (reply_to = messageId) with one of
   * `codes`, or the connection closed with 1008 (an invalid envelope). Returns which.
   */
  async expectRefused(conn: EventConnection, messageId: string, codes: readonly ErrorCode[], what: string): Promise<'error' | 'closed'> {
    const frame = await conn.poll(repliesTo(messageId), this.replyMs);
    if (frame) {
      if (frame.type !== 'error' || !codes.includes(frame.error.code))
        throw new CheckFailure(`${what}: expected an error frame ${codes.join(' or ')} or a 1008 close, got ${frame.$text}`);
      return 'error';
    }
    const closed = await conn.waitClose(this.replyMs);
    if (!closed)
      throw new CheckFailure(
        `${what}: expected an error frame ${codes.join(' or ')} or a 1008 close; got neither within ${this.replyMs} ms`,
      );
    if (closed.code !== 1008) throw new CheckFailure(`${what}: expected a 1008 close, got ${closed.code} ${closed.reason}`);
    return 'closed';
  }

  /** Waits until the server closes `conn`; fails with what arrived when it stays open. */
  async expectClosed(
    conn: EventConnection,
    timeoutMs: number,
    what: string,
    codes?: readonly number[],
  ): Promise<{ code: number; reason: string }> {
    const closed = await conn.waitClose(timeoutMs);
    if (!closed) throw new CheckFailure(`${what}: expected the server to close the connection within ${timeoutMs} ms; it stayed open`);
    if (codes && !codes.includes(closed.code))
      throw new CheckFailure(`${what}: expected close code ${codes.join(' or ')}, got ${closed.code} ${closed.reason}`);
    return closed;
  }

  // --- WebSocket ----------------------------------------------------------------------------

  /** Attempts an upgrade as `role` (null: no token); the connection, if any, is closed after the case. */
  async upgrade(role: Role | null, options: Omit<OpenOptions, 'token'> = {}): Promise<UpgradeOutcome> {
    const outcome = await EventConnection.open(
      this.config.baseUrl,
      { ...options, token: role === null ? null : this.token(role) },
      this.log,
    );
    if (outcome.kind === 'open') {
      this.connections.push(outcome.conn);
      this.allConnections.push(outcome.conn);
    }
    return outcome;
  }

  /** Opens an event connection as `role`; a refusal fails the case. */
  async connect(role: Role = 'full', options: Omit<OpenOptions, 'token'> = {}): Promise<EventConnection> {
    const outcome = await this.upgrade(role, options);
    if (outcome.kind !== 'open')
      throw new CheckFailure(`setup: the upgrade as ${role} was refused: HTTP ${outcome.status} ${outcome.body.slice(0, 300)}`);
    return outcome.conn;
  }

  /**
   * Connects and binds to `subscriptionId`; the welcome must come. Like a well-behaved client the
   * connection then pings at the announced heartbeat interval, unless `keepAlive` is false.
   */
  async bind(
    subscriptionId: string,
    capacity = 1,
    role: Role = 'full',
    options: { keepAlive?: boolean } = {},
  ): Promise<{ conn: EventConnection; welcome: Received<WelcomeFrame> }> {
    const conn = await this.connect(role);
    const welcome = await conn.hello(subscriptionId, capacity, this.replyMs);
    if (welcome.type !== 'events.welcome') throw new CheckFailure(`setup: expected events.welcome, got ${welcome.$text}`);
    if (options.keepAlive !== false)
      conn.startHeartbeat(
        Math.min(welcome.body.heartbeat_interval_ms || this.timing.heartbeatIntervalMs, Math.floor(this.timing.idleTimeoutMs / 3)),
      );
    return { conn, welcome };
  }

  /** The next event.deliver on `conn`. */
  deliver(conn: EventConnection, timeoutMs = this.deliverMs, what = 'an event.deliver'): Promise<Received<DeliverFrame>> {
    return conn.next(isDeliver, timeoutMs, what);
  }

  /** Sends event.ack with the proof of `deliver` (any field overridable, also by an invalid value); returns the message_id. */
  sendAck(conn: EventConnection, deliver: Received<DeliverFrame>, override: AckOverride = {}): string {
    const proof: AckRequestFrame['body'] = {
      delivery_id: deliver.body.delivery.id,
      epoch: deliver.body.delivery.lease_epoch,
      lease_secret: deliver.body.lease_secret,
    };
    return conn.send('event.ack', { ...proof, ...override });
  }

  /** ACKs `deliver` on `conn` and returns the reply frame (an ack or an error). */
  ack(conn: EventConnection, deliver: Received<DeliverFrame>, override: AckOverride = {}): Promise<AckReply> {
    return conn.ackReply(this.sendAck(conn, deliver, override), this.replyMs);
  }

  /** ACKs `deliver` and fails unless the reply is an ack; returns it. */
  async acked(conn: EventConnection, deliver: Received<DeliverFrame>, what = 'ACK'): Promise<Received<AckReplyFrame>> {
    const reply = await this.ack(conn, deliver);
    if (reply.type !== 'ack') throw new CheckFailure(`${what}: expected an ack reply, got ${reply.$text}`);
    return reply;
  }

  /**
   * The newest event.deliver of the same delivery seen on any connection of the case: where a
   * slow run let the lease run out and the delivery was sent again, this is the proof to use.
   */
  latest(deliver: Received<DeliverFrame>): Received<DeliverFrame> {
    let best = deliver;
    for (const c of this.allConnections) {
      for (const f of c.received) {
        if (
          isDeliver(f) &&
          f.body.delivery.id === deliver.body.delivery.id &&
          BigInt(f.body.delivery.lease_epoch) > BigInt(best.body.delivery.lease_epoch)
        )
          best = f;
      }
    }
    if (best !== deliver)
      this.log.note(
        `the lease of ${deliver.body.delivery.id} ran out during the case; using the newer proof of epoch ` +
          `${best.body.delivery.lease_epoch}`,
      );
    return best;
  }

  /** Every event.deliver received on any connection of the case (the proofs cleanup ACKs). */
  deliveries(): Array<Received<DeliverFrame>> {
    return this.allConnections.flatMap((c) => c.received.filter(isDeliver));
  }

  /** Every server-frame violation seen on this case's connections. */
  frameViolations(): string[] {
    return this.allConnections.flatMap((c) => c.violations.map((v) => `connection ${c.id}: ${v}`));
  }

  // --- properties ---------------------------------------------------------------------------

  /**
   * Runs a fast-check property; `predicate` throws (a CheckFailure) when the server misbehaves.
   * On failure the case fails with the request or frame the failing run sent last (after
   * shrinking), the seed and the replay line, and the evidence of that run only.
   */
  async property<T>(arbitrary: fc.Arbitrary<T>, predicate: (value: T) => Promise<void>, options: { numRuns?: number } = {}): Promise<void> {
    const seed = propertySeed(this.env.seed, this.caseId);
    const numRuns = options.numRuns ?? this.env.numRuns;
    const outer = this.currentLog;
    let lastFailure: EvidenceLog | null = null;
    let runs = 0;
    const details = await fc.check(
      fc.asyncProperty(arbitrary, async (value) => {
        runs++;
        const runLog = new EvidenceLog();
        this.redactInto(runLog);
        this.currentLog = runLog;
        const mark = this.connections.length;
        try {
          await predicate(value);
        } catch (error) {
          lastFailure = runLog;
          throw error;
        } finally {
          this.currentLog = outer;
          await Promise.all(this.connections.splice(mark).map((c) => c.close()));
        }
      }),
      { seed, numRuns, plugins: [fc.interruptAfterTimeLimit(45_000, { failOnInterrupt: true })] },
    );
    outer.note(`property: ${runs} runs (numRuns ${numRuns}, seed ${seed})`);
    const replay = `replay: --seed ${this.env.seed} --num-runs ${numRuns} --only ${this.caseId}`;
    if (!details.failed) return;
    if (details.counterexample === null)
      throw new CheckFailure(`property stopped after ${details.numRuns} run(s) without a counterexample (time limit of 45 s); ${replay}`);
    const failing = (lastFailure as EvidenceLog | null)?.items ?? [];
    const sent = lastSent(failing);
    const value = fc.stringify(details.counterexample);
    const failure = details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
    outer.note(`evidence of the shrunk counterexample (generated value ${value}):`);
    for (const item of failing) outer.add(item);
    throw new CheckFailure(
      `property failed after ${details.numRuns} run(s) and ${details.numShrinks} shrink(s); counterexample, as sent: ` +
        `${sent}\n${failure}\n` +
        `${replay} (property seed ${details.seed}, path ${details.counterexamplePath})`,
      'assert',
      { seed: details.seed, path: details.counterexamplePath, sent, value, numRuns: details.numRuns, numShrinks: details.numShrinks },
    );
  }

  // --- teardown -----------------------------------------------------------------------------

  async closeConnections(): Promise<void> {
    await Promise.all(this.connections.splice(0).map((c) => c.close()));
  }

  /** Closes connections and retires every subscription the case created (see `cleanup.ts`). */
  async teardown(
    retire: (ctx: CaseContext, role: Role, id: string, proofs: Array<Received<DeliverFrame>>) => Promise<string | null>,
  ): Promise<void> {
    const proofs = this.deliveries();
    await this.closeConnections();
    for (const { role, id } of this.owned.splice(0).reverse()) {
      try {
        const note = await retire(this, role, id, proofs);
        if (note) this.cleanupNotes.push(note);
      } catch (error) {
        this.cleanupNotes.push(`subscription ${id}: cleanup failed: ${(error as Error).message}`);
      }
    }
    await this.closeConnections();
  }
}

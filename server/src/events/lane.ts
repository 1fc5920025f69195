/**
 * @module
 * One subscription's lane on this node: its sessions, the ACKs they sent, and at most one turn of
 * the delivery engine at a time (spec/README.md, "The delivery engine"). ACKs that arrive while a
 * turn runs wait for the next one, so a busy subscription acknowledges in groups. A turn runs when
 * ACKs wait or when the claim pool gives the lane a claim; one that runs for ACKs leases too when
 * the pool has a place for it now, and only acknowledges otherwise, so an ACK never waits for the
 * pool. The engine returns what to send; the lane hands each session its part, which the session
 * writes in one fixed order (`Session.apply`).
 */
import type { ErrorCode } from '@orbit/spec/errors';
import type { AckAnswer, AckRequest, DeliveryEngine, Leased, SubscriptionState, TurnHints, TurnOutcome } from '../engine/engine.ts';
import type { RedeliveryPolicy } from '../domain/delivery.ts';
import type { Log } from '../ops/log.ts';
import type { EngineHooks } from '../ops/metrics.ts';
import type { AccessView } from './access.ts';
import type { ClaimPool, Slot, Subject } from './scheduler.ts';

/** An ACK frame as the lane carries it to the turn and back to its session. */
export interface AckEntry {
  readonly request: AckRequest;
  /** The frame's `message_id`, for the reply's `reply_to`. */
  readonly messageId: string;
  /** The epoch as the client sent it, echoed in the reply. */
  readonly epoch: string;
}

/** What one turn means for one session, in the order the session writes it. */
export interface TurnPart {
  /** Its ACKs of the turn, each with its answer, in arrival order. */
  readonly acks: readonly { readonly entry: AckEntry; readonly answer: AckAnswer }[];
  readonly leased: readonly Leased[];
  /** Set when the session asked for deliveries in the turn. */
  readonly state?: SubscriptionState;
  /** Its row in `sessions` is gone: its node was taken for dead. */
  readonly lost?: boolean;
}

/** What the lane needs of a session. */
export interface LaneMember {
  readonly sessionId: string | null;
  readonly subscriptionId: string;
  readonly tokenDigest: string | undefined;
  /** Bound and not closing. */
  open(): boolean;
  /** Whether it should take part in a claim now (the refill rule). */
  wants(): boolean;
  /** What it can take now, counting `releasing` of its leases whose ACKs are in the turn. */
  room(releasing: number): number;
  /** Whether it holds this delivery's lease, as this node knows. */
  holds(deliveryId: string): boolean;
  apply(part: TurnPart): void;
  fail(code: ErrorCode, message: string): void;
}

export interface LaneDeps {
  readonly engine: DeliveryEngine;
  readonly pool: ClaimPool;
  readonly access: AccessView;
  readonly settings: { readonly leaseDurationMs: number };
  readonly policy: RedeliveryPolicy;
  readonly log: Log;
  readonly hooks?: EngineHooks;
}

interface Waiting {
  readonly member: LaneMember;
  readonly entry: AckEntry;
  readonly done: () => void;
}

export class Lane implements Subject {
  private members: LaneMember[] = [];
  private acks: Waiting[] = [];
  private running = false;
  /** A turn is due after the event loop's I/O phase (`soon`). */
  private due = false;
  /** What the last turn saw, for the next one (`TurnHints`). */
  private hints: TurnHints;

  constructor(
    readonly applicationId: string,
    readonly subscriptionId: string,
    /** The subscription as its first session bound to it: its queue and types are fixed at its creation. */
    private readonly subscription: { readonly queueId: string; readonly types: readonly string[]; readonly cursorSequence: bigint },
    private readonly deps: LaneDeps,
  ) {
    // Nothing is known of PENDING deliveries or leases yet: look for the former, and the turn finds the latter.
    this.hints = { cursor: subscription.cursorSequence, waiting: true, checkAt: null };
  }

  get size(): number {
    return this.members.length;
  }

  join(member: LaneMember): void {
    this.members.push(member);
    this.deps.pool.add(this);
  }

  /** Removes a member; true when the lane is empty. */
  leave(member: LaneMember): boolean {
    this.members = this.members.filter((m) => m !== member);
    return this.members.length === 0;
  }

  /** Queues an ACK for the next turn; resolves once its answer was handed to its session. */
  ack(member: LaneMember, entry: AckEntry): Promise<void> {
    return new Promise((resolve) => {
      this.acks.push({ member, entry, done: resolve });
      this.soon();
    });
  }

  // --- Subject ---------------------------------------------------------------------------------

  wants(): boolean {
    return this.members.some((m) => m.wants());
  }

  busy(): boolean {
    return this.running || this.due;
  }

  async claim(slot: Slot): Promise<void> {
    await this.run(true, slot);
  }

  // --- turns -----------------------------------------------------------------------------------

  /**
   * The next turn starts once the event loop has read what arrived and written what the last turn
   * sent: the frames read meanwhile join it (a larger group, as the SQLite store's commit groups
   * form), and the write queues have their room back. Until then the lane is busy for the pool
   * too, so a claim does not take the lane ahead of the ACKs. Only efficiency rests on this; every
   * answer is decided in its turn's transaction.
   */
  private soon(): void {
    if (this.running || this.due) return;
    this.due = true;
    setImmediate(() => {
      this.due = false;
      this.kick();
      this.deps.pool.wake();
    });
  }

  /** Starts a turn for the waiting ACKs, leasing too when the pool has a place for it now. */
  private kick(): void {
    if (this.running || this.acks.length === 0) return;
    const slot = this.deps.pool.reserve(this);
    void this.run(slot !== null, slot);
  }

  /** One turn; a claim place it holds goes back to the pool before the next turn starts. */
  private async run(leasing: boolean, slot: Slot | null = null): Promise<void> {
    this.running = true;
    let more = false;
    try {
      more = await this.turn(leasing);
    } finally {
      this.running = false;
      slot?.end(more ? 'more' : 'done');
      if (!slot && more) this.deps.pool.markDirty(this.subscriptionId);
      this.soon();
    }
  }

  private async turn(leasing: boolean): Promise<boolean> {
    const acks = this.takeAcks();
    const targets = leasing ? await this.targets() : [];
    if (acks.length === 0 && targets.length === 0) return false;
    const releasing = (member: LaneMember) => acks.filter((a) => a.member === member && member.holds(a.entry.request.deliveryId)).length;
    const offers = targets.map((member) => ({ member, room: member.room(releasing(member)) })).filter((o) => o.room > 0);
    let outcome: TurnOutcome;
    try {
      outcome = await this.deps.engine.turn({
        subscriptionId: this.subscriptionId,
        queueId: this.subscription.queueId,
        types: this.subscription.types,
        acks: acks.map((a) => a.entry.request),
        sessions: offers.map((o) => ({ id: o.member.sessionId!, room: o.room })),
        leaseMs: this.deps.settings.leaseDurationMs,
        policy: this.deps.policy,
        hints: this.hints,
      });
    } catch (error) {
      this.failed([...new Set([...acks.map((a) => a.member), ...offers.map((o) => o.member)])], error, offers.length > 0);
      for (const a of acks) a.done();
      return false;
    }
    this.hints = outcome.hints;
    this.hand(
      outcome,
      acks,
      offers.map((o) => o.member),
    );
    for (const a of acks) a.done();
    // The next session to be served first is the one after this turn's first.
    if (this.members.length > 1) this.members.push(this.members.shift()!);
    return outcome.more;
  }

  /**
   * The waiting ACKs for this turn, in arrival order: at most one per delivery, so that each is
   * decided against the state the one before it left (a repeat waits for the next turn).
   */
  private takeAcks(): Waiting[] {
    const taken: Waiting[] = [];
    const kept: Waiting[] = [];
    const named = new Set<string>();
    for (const a of this.acks) {
      const id = a.entry.request.deliveryId;
      (named.has(id) ? kept : taken).push(a);
      named.add(id);
    }
    this.acks = kept;
    return taken;
  }

  /**
   * The members that may be leased to: open, with consume access at most 1 s old. A turn that runs
   * serves every one of them with room, not only those that asked: the round trips are paid already.
   */
  private async targets(): Promise<LaneMember[]> {
    const open = this.members.filter((m) => m.open());
    if (open.length === 0) return [];
    try {
      // Each session by its own token: one of them may have connected with a token since rotated out.
      const verdicts = await Promise.all(open.map((m) => this.deps.access.verdict(this.subscriptionId, m.tokenDigest)));
      return open.filter((m, i) => {
        const verdict = verdicts[i]!;
        if (!verdict.ok) m.fail(verdict.code, verdict.message);
        return verdict.ok;
      });
    } catch (error) {
      this.failed(open, error, true);
      return [];
    }
  }

  /** Gives every session its part of the turn: its ACKs' answers, its deliveries, and what ends it. */
  private hand(outcome: TurnOutcome, acks: readonly Waiting[], targets: readonly LaneMember[]): void {
    if (targets.length > 0)
      this.deps.hooks?.claimed(outcome.state.kind !== 'open' ? outcome.state.kind : outcome.leased.length === 0 ? 'empty' : 'claimed');
    const parts = new Map<LaneMember, { acks: TurnPart['acks'][number][]; leased: Leased[] }>();
    const part = (member: LaneMember) => {
      const found = parts.get(member) ?? { acks: [], leased: [] };
      parts.set(member, found);
      return found;
    };
    for (const [i, a] of acks.entries()) part(a.member).acks.push({ entry: a.entry, answer: outcome.acks[i]! });
    const bySession = new Map(targets.map((m) => [m.sessionId!, m]));
    for (const item of outcome.leased) {
      const member = bySession.get(item.session);
      if (member) part(member).leased.push(item);
    }
    for (const member of targets) part(member);
    const lost = new Set(outcome.lost);
    for (const [member, { acks: answered, leased }] of parts) {
      const target = targets.includes(member);
      member.apply({
        acks: answered,
        leased,
        ...(target ? { state: outcome.state } : {}),
        ...(member.sessionId !== null && lost.has(member.sessionId) ? { lost: true } : {}),
      });
    }
  }

  /** A turn's transaction failed: its sessions close with UNAVAILABLE and reconnect (their leases stay). */
  private failed(members: readonly LaneMember[], error: unknown, claimed: boolean): void {
    this.deps.log('error', 'turn failed', { subscription_id: this.subscriptionId, error: String(error) });
    if (claimed) this.deps.hooks?.claimed('error');
    for (const m of members) m.fail('UNAVAILABLE', 'the database is unavailable; reconnect later');
  }
}

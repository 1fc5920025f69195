/**
 * @module
 * The claim pool (spec/rules.md#s5-19 to #s5-21): claims are slow SQL and run apart from frame I/O.
 * At most 4 claims in flight per node and 1 per application; at most 128 waiting plus in flight;
 * each scan round queues at most 4; turns rotate across applications, then across subscriptions
 * within one. No I/O here: the claim itself is a function the caller supplies, so the policy is
 * testable alone.
 */

export interface PoolLimits {
  readonly inFlight: number;
  readonly perApplication: number;
  readonly queued: number;
  readonly perRound: number;
}

export const SEED_LIMITS: PoolLimits = { inFlight: 4, perApplication: 1, queued: 128, perRound: 4 };

/** Something that wants deliveries: one session of one subscription of one application. */
export interface Claimant {
  readonly applicationId: string;
  readonly subscriptionId: string;
  /** Whether the claimant can take deliveries now (free capacity, writable, bound, not closing). */
  wants(): boolean;
  /**
   * Runs one claim; resolves `true` when more may be ready at once. `group` holds the other
   * claimants of the same subscription on this node that want deliveries now: one transaction
   * serves them all, so many connections on one subscription do not split it into small claims.
   */
  claim(group: readonly Claimant[]): Promise<boolean>;
}

/** A claim turn taken outside the pool's queue (`ClaimPool.reserve`); `end` gives it back once. */
export interface Turn {
  /** The claimants the claim serves: the one that asked first, then its subscription's others on this node. */
  readonly members: readonly Claimant[];
  /** `more`: more may be ready at once; `done`: the claim found what there was; `not_run`: no claim ran. */
  end(result: 'more' | 'done' | 'not_run'): void;
}

export class ClaimPool {
  private readonly claimants = new Map<string, Map<string, Set<Claimant>>>();
  private readonly waiting: Claimant[] = [];
  private readonly queuedSet = new Set<Claimant>();
  private readonly running = new Set<Claimant>();
  private readonly runningApps = new Map<string, number>();
  /** Subscriptions that may have work: set by appends, ACKs, joins and sweeps; cleared by a dry claim. */
  private readonly dirty = new Set<string>();
  private appCursor = 0;
  private readonly subCursor = new Map<string, number>();
  private scheduled = false;
  private closed = false;

  constructor(
    private readonly limits: PoolLimits = SEED_LIMITS,
    private readonly onError: (error: unknown, claimant: Claimant) => void = () => {},
  ) {}

  get depth(): number {
    return this.waiting.length + this.running.size;
  }

  add(claimant: Claimant): void {
    let subs = this.claimants.get(claimant.applicationId);
    if (!subs) {
      subs = new Map();
      this.claimants.set(claimant.applicationId, subs);
    }
    let set = subs.get(claimant.subscriptionId);
    if (!set) {
      set = new Set();
      subs.set(claimant.subscriptionId, set);
    }
    set.add(claimant);
    this.markDirty(claimant.subscriptionId);
  }

  remove(claimant: Claimant): void {
    const subs = this.claimants.get(claimant.applicationId);
    const set = subs?.get(claimant.subscriptionId);
    set?.delete(claimant);
    if (set && set.size === 0) subs!.delete(claimant.subscriptionId);
    if (subs && subs.size === 0) this.claimants.delete(claimant.applicationId);
    const at = this.waiting.indexOf(claimant);
    if (at >= 0) this.waiting.splice(at, 1);
    this.queuedSet.delete(claimant);
  }

  markDirty(subscriptionId: string): void {
    this.dirty.add(subscriptionId);
    this.schedule();
  }

  /**
   * Runs a scan round without marking anything: for a claimant that can take more again (an ACK
   * freed capacity, a write finished). A subscription whose last claim found everything it had
   * stays clean, so no empty claim follows every ACK.
   */
  wake(): void {
    this.schedule();
  }

  markAllDirty(): void {
    for (const subs of this.claimants.values()) for (const id of subs.keys()) this.dirty.add(id);
    this.schedule();
  }

  /**
   * A claim turn for `first`'s subscription that does not wait in the queue: for the claim that
   * follows an ACK group in the group's transaction (store/acks.ts). It counts against the same
   * limits as a claim the pool runs (spec/rules.md#s5-19) and is taken only within them, and only
   * while none of the subscription's claimants on this node is in a claim; null otherwise. The
   * members need not want deliveries yet: their ACKs free the capacity the claim fills.
   */
  reserve(first: Claimant): Turn | null {
    if (this.closed || this.running.size >= this.limits.inFlight) return null;
    if ((this.runningApps.get(first.applicationId) ?? 0) >= this.limits.perApplication) return null;
    const set = this.claimants.get(first.applicationId)?.get(first.subscriptionId);
    if (!set?.has(first)) return null;
    for (const claimant of set) if (this.running.has(claimant)) return null;
    const members = [first, ...[...set].filter((c) => c !== first)];
    const wasDirty = this.dirty.has(first.subscriptionId);
    this.begin(members);
    let ended = false;
    return {
      members,
      end: (result) => {
        if (ended) return;
        ended = true;
        if (result === 'more' || (result === 'not_run' && wasDirty)) this.dirty.add(first.subscriptionId);
        this.finish(members, first.applicationId);
      },
    };
  }

  close(): void {
    this.closed = true;
    this.waiting.length = 0;
    this.queuedSet.clear();
  }

  /** Resolves when no claim is running (for shutdown). */
  async drain(): Promise<void> {
    while (this.running.size > 0) await new Promise((resolve) => setTimeout(resolve, 5));
  }

  private schedule(): void {
    if (this.scheduled || this.closed) return;
    this.scheduled = true;
    queueMicrotask(() => {
      this.scheduled = false;
      this.round();
      this.dispatch();
    });
  }

  /** One scan round: queue up to `perRound` claimants, rotating applications then subscriptions. */
  private round(): void {
    const apps = [...this.claimants.keys()];
    if (apps.length === 0) return;
    let queued = 0;
    let idle = 0;
    while (queued < this.limits.perRound && this.depth < this.limits.queued && idle < apps.length) {
      const app = apps[this.appCursor++ % apps.length]!;
      const candidate = this.nextOf(app);
      if (candidate) {
        this.waiting.push(candidate);
        this.queuedSet.add(candidate);
        queued++;
        idle = 0;
      } else {
        idle++;
      }
    }
  }

  /** The next claimant of an application whose subscription is dirty, in rotation. */
  private nextOf(app: string): Claimant | null {
    const subs = [...this.claimants.get(app)!.entries()];
    const start = this.subCursor.get(app) ?? 0;
    for (let i = 0; i < subs.length; i++) {
      const [subscriptionId, set] = subs[(start + i) % subs.length]!;
      if (!this.dirty.has(subscriptionId)) continue;
      for (const claimant of set) {
        if (this.queuedSet.has(claimant) || this.running.has(claimant) || !claimant.wants()) continue;
        this.subCursor.set(app, (start + i + 1) % subs.length);
        // Move it to the back of its set so sessions of one subscription take turns.
        set.delete(claimant);
        set.add(claimant);
        return claimant;
      }
    }
    return null;
  }

  private dispatch(): void {
    for (let i = 0; i < this.waiting.length && this.running.size < this.limits.inFlight; ) {
      const claimant = this.waiting[i]!;
      if ((this.runningApps.get(claimant.applicationId) ?? 0) >= this.limits.perApplication) {
        i++;
        continue;
      }
      this.waiting.splice(i, 1);
      this.queuedSet.delete(claimant);
      this.run(claimant);
    }
  }

  private run(claimant: Claimant): void {
    const siblings = [...(this.claimants.get(claimant.applicationId)?.get(claimant.subscriptionId) ?? [])].filter(
      (c) => c !== claimant && !this.running.has(c) && c.wants(),
    );
    const members = [claimant, ...siblings];
    this.begin(members);
    claimant
      .claim(siblings)
      .then(
        (more) => {
          if (more) this.dirty.add(claimant.subscriptionId);
        },
        (error: unknown) => this.onError(error, claimant),
      )
      .finally(() => this.finish(members, claimant.applicationId));
  }

  /** Marks a claim's members running; the subscription is clean unless the claim (or an event meanwhile) says otherwise. */
  private begin(members: readonly Claimant[]): void {
    const first = members[0]!;
    for (const member of members) {
      this.running.add(member);
      const at = this.waiting.indexOf(member);
      if (at >= 0) this.waiting.splice(at, 1);
      this.queuedSet.delete(member);
    }
    this.runningApps.set(first.applicationId, (this.runningApps.get(first.applicationId) ?? 0) + 1);
    this.dirty.delete(first.subscriptionId);
  }

  private finish(members: readonly Claimant[], applicationId: string): void {
    for (const member of members) this.running.delete(member);
    const left = (this.runningApps.get(applicationId) ?? 1) - 1;
    if (left === 0) this.runningApps.delete(applicationId);
    else this.runningApps.set(applicationId, left);
    this.schedule();
  }
}

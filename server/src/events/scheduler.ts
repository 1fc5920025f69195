/**
 * @module
 * The claim pool (spec/rules.md#s5-19 to #s5-21): claims are slow SQL and run apart from frame I/O.
 * At most 4 claims in flight per node and 1 per application; at most 128 waiting plus in flight;
 * each scan round queues at most 4; turns rotate across applications, then across subscriptions
 * within one. A claim here is a turn of the delivery engine that may lease (`lane.ts`); a turn that
 * only acknowledges takes no place in the pool. No I/O here: the turn is a function the subject
 * supplies, so the policy is testable alone.
 */

export interface PoolLimits {
  readonly inFlight: number;
  readonly perApplication: number;
  readonly queued: number;
  readonly perRound: number;
}

export const SEED_LIMITS: PoolLimits = { inFlight: 4, perApplication: 1, queued: 128, perRound: 4 };

/** Something that wants deliveries: one subscription of one application, with its sessions on this node. */
export interface Subject {
  readonly applicationId: string;
  readonly subscriptionId: string;
  /** Whether one of its sessions can take deliveries now. */
  wants(): boolean;
  /** Whether a turn of it is running now (one outside the pool, say): the pool leaves it until that ends. */
  busy(): boolean;
  /**
   * Runs a turn that leases, in the claim place `slot`, and ends the slot when the turn is done
   * (before it starts another one).
   */
  claim(slot: Slot): Promise<void>;
}

/** A claim place taken outside the pool's queue (`ClaimPool.reserve`); `end` gives it back once. */
export interface Slot {
  /** `more`: more may be ready at once; `done`: the turn found what there was. */
  end(result: 'more' | 'done'): void;
}

export class ClaimPool {
  private readonly subjects = new Map<string, Map<string, Subject>>();
  private readonly waiting: Subject[] = [];
  private readonly running = new Set<Subject>();
  private readonly runningApps = new Map<string, number>();
  /** Subscriptions that may have work: set by appends, ACKs, joins and sweeps; cleared as a claim starts. */
  private readonly dirty = new Set<string>();
  private appCursor = 0;
  private readonly subCursor = new Map<string, number>();
  private scheduled = false;
  private closed = false;

  constructor(
    private readonly limits: PoolLimits = SEED_LIMITS,
    private readonly onError: (error: unknown, subject: Subject) => void = () => {},
  ) {}

  /** Claims waiting plus in flight. */
  get depth(): number {
    return this.waiting.length + this.running.size;
  }

  add(subject: Subject): void {
    let subs = this.subjects.get(subject.applicationId);
    if (!subs) {
      subs = new Map();
      this.subjects.set(subject.applicationId, subs);
    }
    subs.set(subject.subscriptionId, subject);
    this.markDirty(subject.subscriptionId);
  }

  remove(subject: Subject): void {
    const subs = this.subjects.get(subject.applicationId);
    if (subs?.get(subject.subscriptionId) === subject) subs.delete(subject.subscriptionId);
    if (subs && subs.size === 0) this.subjects.delete(subject.applicationId);
    const at = this.waiting.indexOf(subject);
    if (at >= 0) this.waiting.splice(at, 1);
  }

  markDirty(subscriptionId: string): void {
    this.dirty.add(subscriptionId);
    this.schedule();
  }

  /**
   * Runs a scan round without marking anything: a subject that can take more again (a write
   * finished, a partial window waited long enough). A subscription whose last claim found all it
   * had stays clean, so no empty claim follows.
   */
  wake(): void {
    this.schedule();
  }

  markAllDirty(): void {
    for (const subs of this.subjects.values()) for (const id of subs.keys()) this.dirty.add(id);
    this.schedule();
  }

  /**
   * A claim place for `subject`'s turn now, without waiting in the queue: for a turn that runs
   * because ACKs are waiting, which then also leases the room they free. Within the same limits as
   * the pool's own claims (spec/rules.md#s5-19); null when they leave no place now.
   */
  reserve(subject: Subject): Slot | null {
    if (this.closed || this.running.size >= this.limits.inFlight || this.running.has(subject)) return null;
    if ((this.runningApps.get(subject.applicationId) ?? 0) >= this.limits.perApplication) return null;
    return this.slot(subject);
  }

  /** Marks `subject`'s claim running and returns the place it holds until `end`. */
  private slot(subject: Subject): Slot {
    this.begin(subject);
    let ended = false;
    return {
      end: (result) => {
        if (ended) return;
        ended = true;
        if (result === 'more') this.dirty.add(subject.subscriptionId);
        this.finish(subject);
      },
    };
  }

  close(): void {
    this.closed = true;
    this.waiting.length = 0;
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

  /** One scan round: queue up to `perRound` subjects, rotating applications then subscriptions. */
  private round(): void {
    const apps = [...this.subjects.keys()];
    if (apps.length === 0) return;
    let queued = 0;
    let idle = 0;
    while (queued < this.limits.perRound && this.depth < this.limits.queued && idle < apps.length) {
      const app = apps[this.appCursor++ % apps.length]!;
      const candidate = this.nextOf(app);
      if (candidate) {
        this.waiting.push(candidate);
        queued++;
        idle = 0;
      } else {
        idle++;
      }
    }
  }

  /** The next subject of an application that is dirty and wants deliveries, in rotation. */
  private nextOf(app: string): Subject | null {
    const subs = [...this.subjects.get(app)!.values()];
    const start = this.subCursor.get(app) ?? 0;
    for (let i = 0; i < subs.length; i++) {
      const subject = subs[(start + i) % subs.length]!;
      if (!this.dirty.has(subject.subscriptionId) || this.waiting.includes(subject) || this.running.has(subject)) continue;
      if (!subject.wants()) continue;
      this.subCursor.set(app, (start + i + 1) % subs.length);
      return subject;
    }
    return null;
  }

  private dispatch(): void {
    for (let i = 0; i < this.waiting.length && this.running.size < this.limits.inFlight; ) {
      const subject = this.waiting[i]!;
      if ((this.runningApps.get(subject.applicationId) ?? 0) >= this.limits.perApplication || subject.busy()) {
        i++;
        continue;
      }
      this.waiting.splice(i, 1);
      this.run(subject);
    }
  }

  private run(subject: Subject): void {
    const slot = this.slot(subject);
    subject.claim(slot).catch((error: unknown) => {
      this.onError(error, subject);
      slot.end('done');
    });
  }

  /** Marks a claim running; the subscription is clean unless the claim (or an event meanwhile) says otherwise. */
  private begin(subject: Subject): void {
    this.running.add(subject);
    const at = this.waiting.indexOf(subject);
    if (at >= 0) this.waiting.splice(at, 1);
    this.runningApps.set(subject.applicationId, (this.runningApps.get(subject.applicationId) ?? 0) + 1);
    this.dirty.delete(subject.subscriptionId);
  }

  private finish(subject: Subject): void {
    this.running.delete(subject);
    const left = (this.runningApps.get(subject.applicationId) ?? 1) - 1;
    if (left === 0) this.runningApps.delete(subject.applicationId);
    else this.runningApps.set(subject.applicationId, left);
    this.schedule();
  }
}

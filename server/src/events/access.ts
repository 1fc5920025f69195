/**
 * @module
 * Consume access of this node's sessions, at most `maxStalenessMs` stale (spec/README.md
 * "Authorization while connected"). Every claim and every ACK asks here first; one query serves all
 * subscriptions of the node, at most once per staleness interval, and a timer re-checks at that
 * interval so that a revoked credential's connections close within about that time even when they
 * neither claim nor ACK. Staleness counts from when a query was sent, not when it answered.
 */
import { type AccessState, type AccessVerdict, decideConsumeAccess } from '../domain/access.ts';

/** The staleness bound: authorization a claim or ACK acts on is at most this old. */
export const ACCESS_MAX_STALENESS_MS = 1000;

export class AccessView {
  private verdicts = new Map<string, AccessVerdict>();
  /** performance.now() when the query behind `verdicts` was sent. */
  private checkedAt = Number.NEGATIVE_INFINITY;
  private inFlight: Promise<void> | null = null;

  constructor(
    private readonly load: (subscriptionIds: readonly string[]) => Promise<Map<string, AccessState>>,
    /** The subscriptions this node's sessions consume now. */
    private readonly subscriptions: () => Iterable<string>,
    private readonly maxStalenessMs = ACCESS_MAX_STALENESS_MS,
  ) {}

  /** The verdict for a subscription, refreshed first when the cached one is too old or absent. */
  async verdict(subscriptionId: string): Promise<AccessVerdict> {
    for (let attempt = 0; attempt < 3; attempt++) {
      const cached = this.verdicts.get(subscriptionId);
      if (cached && performance.now() - this.checkedAt <= this.maxStalenessMs) return cached;
      await this.refresh(subscriptionId);
    }
    return this.verdicts.get(subscriptionId) ?? { ok: false, code: 'NOT_FOUND', message: 'the subscription is no longer in scope' };
  }

  /**
   * Loads every subscription of the node (and `extra`) in one query. A refresh already running is
   * joined unless it cannot answer for `extra`.
   */
  async refresh(extra?: string): Promise<Map<string, AccessVerdict>> {
    while (this.inFlight) {
      await this.inFlight.catch(() => undefined);
      if (extra === undefined || this.verdicts.has(extra)) return this.verdicts;
    }
    const sentAt = performance.now();
    const ids = new Set(this.subscriptions());
    if (extra !== undefined) ids.add(extra);
    const run = this.load([...ids]).then((states) => {
      const next = new Map<string, AccessVerdict>();
      for (const [id, state] of states) next.set(id, decideConsumeAccess(state));
      this.verdicts = next;
      this.checkedAt = sentAt;
    });
    this.inFlight = run;
    try {
      await run;
    } finally {
      if (this.inFlight === run) this.inFlight = null;
    }
    return this.verdicts;
  }
}

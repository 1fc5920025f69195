/**
 * @module
 * Consume access of this node's sessions (spec/README.md "Authorization while connected"). Every
 * claim and every ACK asks here first. An allowing answer may be up to `maxStalenessMs` old; a
 * refusing one is confirmed by a query sent after the question was asked, so a cache that predates
 * a rotation never refuses the new token. One query serves every subscription of the node, and a
 * timer re-checks at the staleness interval so that a revoked credential's connections close within
 * about that time even when they neither claim nor ACK. Staleness counts from when a query was
 * sent, not from when it answered.
 */
import { ACCESS_MAX_STALENESS_MS, type AccessState, type AccessVerdict, decideConsumeAccess } from '../domain/access.ts';

export { ACCESS_MAX_STALENESS_MS };

const GONE: AccessVerdict = { ok: false, code: 'NOT_FOUND', message: 'the subscription is no longer in scope' };

export class AccessView {
  private states = new Map<string, AccessState>();
  /** performance.now() when the query behind `states` was sent. */
  private checkedAt = Number.NEGATIVE_INFINITY;
  private inFlight: { readonly sentAt: number; readonly ids: ReadonlySet<string>; readonly done: Promise<void> } | null = null;

  constructor(
    private readonly load: (subscriptionIds: readonly string[]) => Promise<Map<string, AccessState>>,
    /** The subscriptions this node's sessions consume now. */
    private readonly subscriptions: () => Iterable<string>,
    private readonly maxStalenessMs = ACCESS_MAX_STALENESS_MS,
  ) {}

  /**
   * The verdict for a session of a subscription, by the digest of the token it connected with:
   * from the cache when it allows and is fresh enough, else from a query sent after this call.
   */
  async verdict(subscriptionId: string, tokenDigest?: string): Promise<AccessVerdict> {
    const asked = performance.now();
    if (this.states.has(subscriptionId) && asked - this.checkedAt <= this.maxStalenessMs) {
      const cached = this.decide(subscriptionId, tokenDigest);
      if (cached.ok) return cached;
    }
    await this.refresh(asked, subscriptionId);
    return this.decide(subscriptionId, tokenDigest);
  }

  /** The verdict from the state in hand (no I/O); a subscription never loaded is out of scope. */
  decide(subscriptionId: string, tokenDigest?: string): AccessVerdict {
    const state = this.states.get(subscriptionId);
    if (!state) return GONE;
    return decideConsumeAccess(state, tokenDigest === undefined ? undefined : { digest: tokenDigest, now: Date.now() });
  }

  /**
   * Makes `states` the answer of a query sent at or after `notBefore` that covers `extra` and
   * every subscription of the node: joins the running one when it qualifies, else sends one.
   */
  async refresh(notBefore = performance.now(), extra?: string): Promise<void> {
    for (;;) {
      const running = this.inFlight;
      if (!running) break;
      await running.done.catch(() => undefined);
      if (running.sentAt >= notBefore && (extra === undefined || running.ids.has(extra))) return;
    }
    if (this.checkedAt >= notBefore && (extra === undefined || this.states.has(extra))) return;
    const ids = new Set(this.subscriptions());
    if (extra !== undefined) ids.add(extra);
    const sentAt = performance.now();
    const done = this.load([...ids]).then((states) => {
      if (sentAt >= this.checkedAt) {
        this.states = states;
        this.checkedAt = sentAt;
      }
    });
    const run = { sentAt, ids, done };
    this.inFlight = run;
    try {
      await done;
    } finally {
      if (this.inFlight === run) this.inFlight = null;
    }
  }
}

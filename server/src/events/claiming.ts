/**
 * @module
 * One claim as the engine runs it for the sessions of a subscription on this node (spec/rules.md#s5-11,
 * #s5-19 to #s5-21, #s6-1): each session's access checked by its own token, each offered what its
 * write queue and capacity can take now, and the committed outcome handed to the sessions. A claim
 * runs either on its own (`Store.claim`, from the pool) or right after an ACK group in the group's
 * transaction (`Store.acknowledge` with a follow-up; store/acks.ts). Either way the lease commits
 * before `event.deliver` is written.
 */
import type { ErrorCode } from '@orbit/spec/errors';
import type { Log } from '../ops/log.ts';
import type { EngineHooks } from '../ops/metrics.ts';
import type { ClaimOutcome, ClaimRequest, Claimed, FollowUpClaim, Store } from '../store/store.ts';
import type { AccessView } from './access.ts';
import type { Claimant, ClaimPool } from './scheduler.ts';

/** What a claim needs of a session. */
export interface ClaimMember {
  readonly sessionId: string | null;
  readonly subscriptionId: string;
  readonly tokenDigest: string | undefined;
  /** The last claim found max_pending reached with results still waiting. */
  backlogFull: boolean;
  /** Bound and not closing. */
  open(): boolean;
  /** What it can take now; `fused`: in the transaction of its ACKs, which free capacity. */
  room(fused: boolean): number;
  fail(code: ErrorCode, message: string): void;
  deliver(item: Claimed): void;
  /** A claim that leased nothing for a reason every session of the subscription shares. */
  settle(outcome: Exclude<ClaimOutcome, { kind: 'claimed' }>): void;
}

export interface ClaimDeps {
  readonly store: Store;
  readonly access: AccessView;
  readonly settings: { readonly leaseDurationMs: number };
  readonly policy: ClaimRequest['policy'];
  readonly log: Log;
  readonly hooks?: EngineHooks;
}

export interface ClaimPlan<M extends ClaimMember> {
  readonly sessions: readonly M[];
  readonly request: ClaimRequest;
}

/**
 * Checks each member's access (at most 1 s stale, spec/README.md "Authorization while connected")
 * and what it can take; null when `first` is gone or no member can take anything.
 */
export async function planClaim<M extends ClaimMember>(
  deps: ClaimDeps,
  first: M,
  members: readonly M[],
  fused: boolean,
): Promise<ClaimPlan<M> | null> {
  let sessions = members.filter((s) => s.open());
  if (!sessions.includes(first)) return null;
  try {
    // Each session by its own token: one of them may have connected with a token since rotated out.
    const verdicts = await Promise.all(sessions.map((s) => deps.access.verdict(s.subscriptionId, s.tokenDigest)));
    sessions = sessions.filter((s, i) => {
      const verdict = verdicts[i]!;
      if (!verdict.ok) s.fail(verdict.code, verdict.message);
      return verdict.ok;
    });
  } catch (error) {
    claimFailed(deps, sessions, error);
    return null;
  }
  const offers = sessions.map((s) => ({ id: s.sessionId!, room: s.room(fused) })).filter((r) => r.room > 0);
  if (offers.length === 0) return null;
  return {
    sessions,
    request: { subscriptionId: first.subscriptionId, sessions: offers, leaseMs: deps.settings.leaseDurationMs, policy: deps.policy },
  };
}

/** A claim's transaction failed: its sessions close with UNAVAILABLE and reconnect (their leases stay). */
export function claimFailed(deps: ClaimDeps, sessions: readonly ClaimMember[], error: unknown): void {
  deps.log('error', 'claim failed', { session_id: sessions[0]?.sessionId, error: String(error) });
  deps.hooks?.claimed('error');
  for (const s of sessions) s.fail('UNAVAILABLE', 'the database is unavailable; reconnect later');
}

/** Hands a committed claim's deliveries to their sessions; true when more may be ready at once. */
export function settleClaim(deps: ClaimDeps, sessions: readonly ClaimMember[], outcome: ClaimOutcome): boolean {
  deps.hooks?.claimed(outcome.kind === 'claimed' && outcome.items.length === 0 ? 'empty' : outcome.kind);
  if (outcome.kind !== 'claimed') {
    for (const s of sessions) s.settle(outcome);
    return false;
  }
  const bySession = new Map(sessions.map((s) => [s.sessionId!, s]));
  for (const s of sessions) s.backlogFull = outcome.full;
  for (const item of outcome.items) bySession.get(item.session)?.deliver(item);
  for (const id of outcome.lost) bySession.get(id)?.fail('UNAVAILABLE', 'this node lost track of the session; reconnect');
  return outcome.more;
}

/**
 * The claim to run after `first`'s ACK in the ACK group's transaction (store/acks.ts), when the
 * pool has a turn for its subscription now: it serves every session of the subscription on this
 * node, each with the capacity its ACKs in the group free.
 */
export async function followUpClaim<M extends ClaimMember & Claimant>(
  deps: ClaimDeps & { readonly pool: ClaimPool },
  first: M,
): Promise<FollowUpClaim | null> {
  const turn = deps.pool.reserve(first);
  if (turn === null) return null;
  const plan = await planClaim(deps, first, turn.members as M[], true);
  if (plan === null) {
    turn.end('not_run');
    return null;
  }
  // The turn waits for the group's ACKs at most FOLLOW_UP_WAIT_MS; then the pool has it back.
  let state: 'waiting' | 'started' | 'given_up' = 'waiting';
  const timer = setTimeout(() => {
    if (state !== 'waiting') return;
    state = 'given_up';
    turn.end('not_run');
  }, FOLLOW_UP_WAIT_MS);
  timer.unref();
  return {
    request: plan.request,
    start: () => {
      if (state === 'waiting') {
        state = 'started';
        clearTimeout(timer);
      }
      return state === 'started';
    },
    settle: (result) => {
      clearTimeout(timer);
      if (state === 'given_up') return;
      if (result.kind === 'skipped') return turn.end('not_run');
      if (result.kind === 'failed') {
        claimFailed(deps, plan.sessions, result.error);
        return turn.end('done');
      }
      if (result.kind !== 'claimed') {
        // An outcome that ends the sessions (history expired, retired) reaches them after the
        // replies to their group's ACKs, which committed: an ACK is never left without its reply.
        setImmediate(() => settleClaim(deps, plan.sessions, result));
        return turn.end('done');
      }
      turn.end(settleClaim(deps, plan.sessions, result) ? 'more' : 'done');
    },
  };
}

/**
 * How long a claim turn taken for an ACK group waits for the group's ACKs before the pool has it
 * back: a group held up by a row lock must not hold its sessions' claims with it.
 */
export const FOLLOW_UP_WAIT_MS = 200;

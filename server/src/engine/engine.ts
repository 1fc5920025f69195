/**
 * @module
 * The delivery engine (spec/README.md, "The delivery engine"): the units of work of delivery, each
 * one transaction planned from the decisions in `domain/` and run through the statements in
 * `store/turns.ts`, each returning a plain value of what to send. It calls nothing above it: the
 * WebSocket gateway (`events/`) decides when to run a unit and writes what it returns, in order.
 *
 * - `bind`: a session's hello (`bind.ts`);
 * - `turn`: a subscription's ACKs, the leases they free and recovery (`turn.ts`);
 * - `sweep`: expired leases of every subscription (`recover.ts`).
 */
import type { RedeliveryPolicy } from '../domain/delivery.ts';
import type { SubscriptionRecord } from '../domain/subscription.ts';
import type { DatabaseClock } from '../store/clock.ts';
import type { Principal } from '../store/principal.ts';
import type { Database } from '../store/sql.ts';
import { bindSession, type SessionToBind } from './bind.ts';
import { sweepExpiredLeases, type SweepReport } from './recover.ts';
import { tracingOn } from '../tracing.ts';
import { tracedTurn } from './traced-turn.ts';
import { runTurn, type TurnOutcome, type TurnRequest } from './turn.ts';

export type { AckAnswer } from '../domain/turn.ts';
export type { SessionToBind } from './bind.ts';
export type { SweepReport } from './recover.ts';
export type { AckRequest, Leased, SubscriptionState, TurnHints, TurnOutcome, TurnRequest } from './turn.ts';

export class DeliveryEngine {
  constructor(
    private readonly db: Database,
    /** The database's clock as this node last saw it; every turn reads it. */
    readonly clock: DatabaseClock,
  ) {}

  /** Checks a hello and records its session (capacity checked in the transaction). */
  bind(principal: Principal, session: SessionToBind): Promise<SubscriptionRecord> {
    return bindSession(this.db, principal, session);
  }

  /** One turn of a subscription on this node; its span when tracing (docs/operations.md, Tracing). */
  turn(request: TurnRequest): Promise<TurnOutcome> {
    if (tracingOn()) return tracedTurn(request, () => runTurn(this.db, this.clock, request));
    return runTurn(this.db, this.clock, request);
  }

  /** Recovers the expired leases of at most `batch` subscriptions that are due. */
  sweep(policy: RedeliveryPolicy, batch: number): Promise<SweepReport> {
    return sweepExpiredLeases(this.db, { policy, batch });
  }
}

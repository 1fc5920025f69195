import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decideAck, isClaimable, lease, newDelivery, recoverExpiredLease, redeliveryDelay, retry, type Delivery } from './delivery.ts';

const eq = (a: string, b: string) => a === b;
const policy = { backoffMs: 0, backoffMaxMs: 0 };

function fresh(budget = 3): Delivery {
  return newDelivery({
    id: 'd'.repeat(32),
    subscriptionId: 's'.repeat(32),
    sequence: 7n,
    eventId: 'e'.repeat(32),
    attemptBudget: budget,
    now: 1000,
  });
}

/** A random walk of the operations the engine can apply, with the invariants checked after each. */
type Step = { op: 'claim' | 'expire' | 'ack-newest' | 'ack-stale' | 'retry'; dt: number; extra: number };

const steps = fc.array(
  fc.record({
    op: fc.constantFrom('claim', 'expire', 'ack-newest', 'ack-stale', 'retry'),
    dt: fc.integer({ min: 0, max: 2000 }),
    extra: fc.integer({ min: 1, max: 100 }),
  }) as fc.Arbitrary<Step>,
  { maxLength: 40 },
);

describe('delivery state machine', () => {
  it('a new delivery is PENDING with epoch 0 and no attempts', () => {
    const d = fresh();
    expect(d).toMatchObject({ state: 'PENDING', leaseEpoch: 0n, attempts: 0, revision: 1n });
    expect(isClaimable(d, 1000)).toBe(true);
  });

  it('lease: epoch + 1, attempts + 1, revision + 1, a deadline and the digest', () => {
    const d = lease(fresh(), { now: 2000, leaseMs: 30_000, digest: 'x', session: 'y' });
    expect(d).toMatchObject({ state: 'LEASED', leaseEpoch: 1n, attempts: 1, revision: 2n, leaseUntil: 32_000, leaseDigest: 'x' });
  });

  it('an ACK with a never-sent epoch 0 loses', () => {
    expect(decideAck(fresh(), { epoch: 0n, digest: 'x' }, 0, eq).kind).toBe('lease_lost');
  });

  it('recovery goes to PENDING within budget and EXPIRED at budget; backoff doubles and is capped', () => {
    let d = lease(fresh(2), { now: 1000, leaseMs: 10, digest: 'a', session: 's' });
    d = recoverExpiredLease(d, 1010, policy);
    expect(d.state).toBe('PENDING');
    d = lease(d, { now: 1010, leaseMs: 10, digest: 'b', session: 's' });
    d = recoverExpiredLease(d, 1020, policy);
    expect(d.state).toBe('EXPIRED');
    expect([1, 2, 3, 4, 10].map((a) => redeliveryDelay(a, { backoffMs: 100, backoffMaxMs: 500 }))).toEqual([100, 200, 400, 500, 500]);
  });

  it('retry: only EXPIRED, keeps attempts and epoch, caps the budget', () => {
    const d = recoverExpiredLease(lease(fresh(1), { now: 1000, leaseMs: 1, digest: 'a', session: 's' }), 1005, policy);
    expect(d.state).toBe('EXPIRED');
    const r = retry(d, 2, 9, 1_000_000);
    expect(r).toMatchObject({ state: 'PENDING', attemptBudget: 3, attempts: 1, leaseEpoch: 1n });
    expect(retry(fresh(), 1, 0, 1_000_000)).toHaveProperty('conflict');
    expect(retry({ ...d, attemptBudget: 999_999 }, 2, 0, 1_000_000)).toHaveProperty('conflict');
  });

  it('invariants hold over random operation sequences (property)', () => {
    fc.assert(
      fc.property(steps, fc.integer({ min: 1, max: 5 }), (ops, budget) => {
        let d = fresh(budget);
        let now = 1000;
        let digest = '';
        let ackedAt: number | null = null;
        let acks = 0;
        for (const step of ops) {
          now += step.dt;
          const before = d;
          if (step.op === 'claim' && isClaimable(d, now)) {
            digest = `secret-${d.leaseEpoch + 1n}`;
            d = lease(d, { now, leaseMs: 500, digest, session: 's' });
            expect(d.leaseEpoch).toBe(before.leaseEpoch + 1n);
          } else if (step.op === 'expire') {
            d = recoverExpiredLease(d, now, policy);
          } else if (step.op === 'ack-newest' && d.leaseEpoch > 0n) {
            const verdict = decideAck(d, { epoch: d.leaseEpoch, digest }, now, eq);
            if (ackedAt === null) {
              expect(verdict.kind).toBe('acknowledged');
              if (verdict.kind === 'acknowledged') {
                d = verdict.delivery;
                ackedAt = now;
                acks++;
              }
            } else {
              // A repeat answers with the first acknowledgement time and changes nothing.
              expect(verdict).toEqual({ kind: 'duplicate', acknowledgedAt: ackedAt });
            }
          } else if (step.op === 'ack-stale' && d.leaseEpoch > 1n) {
            expect(decideAck(d, { epoch: d.leaseEpoch - 1n, digest: `secret-${d.leaseEpoch - 1n}` }, now, eq).kind).toBe('lease_lost');
          } else if (step.op === 'retry') {
            const r = retry(d, step.extra, now, 1_000_000);
            if ('conflict' in r) expect(before.state).not.toBe('EXPIRED');
            else d = r;
          }
          // Invariants after every step.
          expect(d.attempts).toBeLessThanOrEqual(d.attemptBudget);
          expect(d.revision >= before.revision).toBe(true);
          if (d !== before) expect(d.revision).toBe(before.revision + 1n);
          expect(d.leaseUntil !== null).toBe(d.state === 'LEASED');
          if (before.state === 'ACKED') expect(d).toBe(before);
          expect(acks).toBeLessThanOrEqual(1);
        }
      }),
      { numRuns: 1000 },
    );
  });
});

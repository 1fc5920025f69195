import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CAPACITY } from '@orbit/spec/protocol';
import { isRefused } from './decision.ts';
import {
  claimRoom,
  REFILL_WAIT_MS,
  refillRoom,
  wantsClaim,
  countsAsPending,
  decideAck,
  decideCapacity,
  decideRetry,
  DELIVERY_STATES,
  isClaimable,
  isValidCapacity,
  lease,
  newDelivery,
  PENDING_STATES,
  recoverExpiredLease,
  redeliveryDelay,
  redeliveryPolicy,
  retry,
  type Delivery,
} from './delivery.ts';
import { MAX_ATTEMPT_BUDGET } from './subscription.ts';

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

const UINT64_MAX = 2n ** 64n - 1n;

/** Any delivery the store could load, in any state. */
const delivery: fc.Arbitrary<Delivery> = fc
  .record({
    state: fc.constantFrom(...DELIVERY_STATES),
    revision: fc.bigInt({ min: 1n, max: 100n }),
    attempts: fc.integer({ min: 0, max: 100 }),
    extraBudget: fc.integer({ min: 0, max: MAX_ATTEMPT_BUDGET }),
    leaseEpoch: fc.bigInt({ min: 0n, max: 100n }),
    availableAt: fc.integer({ min: 0, max: 1e12 }),
  })
  .map(({ extraBudget, ...fields }) => ({
    ...fresh(),
    ...fields,
    attemptBudget: Math.min(fields.attempts + extraBudget, MAX_ATTEMPT_BUDGET),
  }));

describe('decideRetry', () => {
  it('is accepted iff the subscription is live, the delivery exists at that revision, is EXPIRED and the budget stays within the cap (property)', () => {
    fc.assert(
      fc.property(
        fc
          .option(delivery, { nil: null })
          .chain((d) =>
            fc.tuple(fc.constant(d), fc.oneof(fc.constant(d?.revision ?? 1n), fc.bigInt({ min: 0n, max: UINT64_MAX })).map(String)),
          ),
        fc.option(fc.integer({ min: 0, max: 1e12 }), { nil: null }),
        fc.integer({ min: 1, max: 100 }),
        fc.integer({ min: 0, max: 1e12 }),
        ([current, expected], retiredAt, additional, now) => {
          const before = structuredClone(current);
          const decision = decideRetry(
            { subscription: { retiredAt }, delivery: current, now },
            { expected_revision: expected, reason: 'r', additional_attempts: additional },
          );
          expect(current).toEqual(before);
          const accepted =
            retiredAt === null &&
            current !== null &&
            current.revision === BigInt(expected) &&
            current.state === 'EXPIRED' &&
            current.attemptBudget + additional <= MAX_ATTEMPT_BUDGET;
          expect(isRefused(decision)).toBe(!accepted);
          if (isRefused(decision)) {
            expect(decision.conflict.code).toBe(retiredAt === null && current === null ? 'NOT_FOUND' : 'STATE_CONFLICT');
          } else {
            expect(decision.attemptBudget).toBeLessThanOrEqual(MAX_ATTEMPT_BUDGET);
            expect(decision).toEqual({
              ...current,
              state: 'PENDING',
              attemptBudget: current!.attemptBudget + additional,
              availableAt: now,
              revision: current!.revision + 1n,
            });
          }
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('says why it refuses, in the order the store used to check', () => {
    const expired = { ...fresh(), state: 'EXPIRED' as const, revision: 4n };
    const command = { expected_revision: '4', reason: 'r', additional_attempts: 1 };
    expect(decideRetry({ subscription: { retiredAt: 1 }, delivery: null, now: 0 }, command)).toEqual({
      conflict: { code: 'STATE_CONFLICT', message: 'the subscription is retired' },
    });
    expect(decideRetry({ subscription: { retiredAt: null }, delivery: null, now: 0 }, command)).toEqual({
      conflict: { code: 'NOT_FOUND', message: 'delivery not found' },
    });
    expect(decideRetry({ subscription: { retiredAt: null }, delivery: expired, now: 0 }, { ...command, expected_revision: '3' })).toEqual({
      conflict: { code: 'STATE_CONFLICT', message: 'delivery revision is 4, not 3' },
    });
    expect(decideRetry({ subscription: { retiredAt: null }, delivery: { ...expired, state: 'LEASED' }, now: 0 }, command)).toEqual({
      conflict: { code: 'STATE_CONFLICT', message: 'delivery is LEASED; only EXPIRED deliveries can be retried' },
    });
    expect(
      decideRetry({ subscription: { retiredAt: null }, delivery: { ...expired, attemptBudget: MAX_ATTEMPT_BUDGET }, now: 0 }, command),
    ).toEqual({ conflict: { code: 'STATE_CONFLICT', message: 'the attempt budget would be 1000001, above 1000000' } });
  });
});

describe('what counts as pending', () => {
  it('every state but ACKED, EXPIRED included (spec/rules.md#s2-17)', () => {
    expect([...PENDING_STATES].sort()).toEqual(['EXPIRED', 'LEASED', 'PENDING']);
    for (const state of DELIVERY_STATES) expect(countsAsPending(state)).toBe(state !== 'ACKED');
  });
});

describe('capacity', () => {
  it('is valid iff an integer within CAPACITY; decideCapacity refuses the rest as INVALID_ARGUMENT (property)', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.integer({ min: -5, max: 40 }), fc.double({ min: -5, max: 40 }), fc.constantFrom(Number.NaN, Infinity)),
        (n) => {
          const valid = Number.isInteger(n) && n >= 1 && n <= 32;
          expect(isValidCapacity(n)).toBe(valid);
          expect(decideCapacity(n)).toEqual(
            valid ? n : { conflict: { code: 'INVALID_ARGUMENT', message: 'capacity must be an integer from 1 to 32' } },
          );
        },
      ),
    );
    expect([CAPACITY.min, CAPACITY.max].map(isValidCapacity)).toEqual([true, true]);
  });
});

describe('claimRoom', () => {
  it('never passes the write queue, nor the capacity less the leases that stay held (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: -2, max: 10 }),
        fc.integer({ min: CAPACITY.min, max: CAPACITY.max }),
        fc.integer({ min: 0, max: 40 }),
        fc.integer({ min: -2, max: 40 }),
        (writable, capacity, held, releasing) => {
          const room = claimRoom({ writable, capacity, held, releasing });
          const staying = held - Math.min(Math.max(0, releasing), held);
          expect(room).toBeGreaterThanOrEqual(0);
          expect(room).toBeLessThanOrEqual(Math.max(0, writable));
          expect(room).toBeLessThanOrEqual(Math.max(0, capacity - staying));
          // It is exactly the smaller bound: nothing that fits is held back.
          expect(room).toBe(Math.max(0, Math.min(writable, capacity - staying)));
        },
      ),
    );
  });

  it('counts an ACK that commits before the claim as free: at capacity 1 the next delivery fits', () => {
    expect(claimRoom({ writable: 7, capacity: 1, held: 1, releasing: 0 })).toBe(0);
    expect(claimRoom({ writable: 7, capacity: 1, held: 1, releasing: 1 })).toBe(1);
    // An ACK of a delivery this node does not hold frees nothing here.
    expect(claimRoom({ writable: 7, capacity: 1, held: 1, releasing: 3 })).toBe(1);
  });
});

describe('redeliveryPolicy', () => {
  it('is made of the two backoff settings', () => {
    expect(redeliveryPolicy({ redeliveryBackoffMs: 100, redeliveryBackoffMaxMs: 5000 })).toEqual({ backoffMs: 100, backoffMaxMs: 5000 });
  });
});

describe('when a connection claims again', () => {
  const connection = fc.record({
    capacity: fc.integer({ min: CAPACITY.min, max: CAPACITY.max }),
    held: fc.integer({ min: 0, max: CAPACITY.max }),
    room: fc.integer({ min: 0, max: 8 }),
    partialForMs: fc.option(fc.double({ min: 0, max: 100, noNaN: true }), { nil: null }),
  });

  it('never without room; at any room when it holds nothing; at a refill of half its capacity (at most 4) otherwise (property)', () => {
    fc.assert(
      fc.property(connection, (c) => {
        const wants = wantsClaim(c);
        if (c.room === 0) expect(wants).toBe(false);
        else if (c.held === 0 || c.room >= Math.min(4, Math.ceil(c.capacity / 2))) expect(wants).toBe(true);
        else expect(wants).toBe(c.partialForMs !== null && c.partialForMs >= REFILL_WAIT_MS);
      }),
    );
  });

  it('claims any partial window once it has waited REFILL_WAIT_MS: no consumer waits longer for room it has (property)', () => {
    fc.assert(
      fc.property(connection, (c) => {
        fc.pre(c.room > 0);
        expect(wantsClaim({ ...c, partialForMs: REFILL_WAIT_MS })).toBe(true);
      }),
    );
  });

  it('keeps capacity 1 and 2 as before: any free slot is a refill', () => {
    expect(refillRoom(1)).toBe(1);
    expect(refillRoom(2)).toBe(1);
    expect(refillRoom(32)).toBe(4);
  });
});

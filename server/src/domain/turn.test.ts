import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { lease, newDelivery, recoverExpiredLease, type Delivery } from './delivery.ts';
import { assignOwners, decideAckGroup, nextCounters, planLeases, planRecovery, sessionSlots, type AckProof } from './turn.ts';

const SUB = 's'.repeat(32);
const same = (a: string, b: string) => a === b;
const policy = { backoffMs: 0, backoffMaxMs: 0 };

function delivery(n: number, overrides: Partial<Delivery> = {}): Delivery {
  return {
    ...newDelivery({ id: `d${n}`, subscriptionId: SUB, sequence: BigInt(n), eventId: `e${n}`, attemptBudget: 3, now: 0 }),
    ...overrides,
  };
}

function leased(n: number, session: string, until: number): Delivery {
  return lease(delivery(n), { now: 0, leaseMs: until, digest: `digest-${n}`, session });
}

describe('decideAckGroup', () => {
  it('acknowledges the newest proof, answers a repeat as a duplicate and anything else as lost', () => {
    const rows = new Map([
      ['d1', leased(1, 'a', 5000)],
      ['d2', { ...leased(2, 'b', 5000), state: 'ACKED' as const, acknowledgedAt: 40 }],
      ['d3', { ...leased(3, 'a', 5000), subscriptionId: 'other' }],
    ]);
    const proof = (id: string, epoch = 1n, digest = `digest-${id.slice(1)}`): AckProof => ({
      subscriptionId: SUB,
      deliveryId: id,
      epoch,
      digest,
    });
    const group = decideAckGroup(rows, [proof('d1'), proof('d2'), proof('d3'), proof('d9'), proof('d1', 2n)], 100, same);
    expect(group.answers).toEqual([
      { kind: 'acknowledged', eventId: 'e1', acknowledgedAt: 100 },
      { kind: 'duplicate', eventId: 'e2', acknowledgedAt: 40 },
      { kind: 'lease_lost' },
      { kind: 'lease_lost' },
      { kind: 'lease_lost' },
    ]);
    expect(group.acknowledged.map((d) => d.id)).toEqual(['d1']);
    expect([...group.released]).toEqual([['a', 1]]);
    expect(group.unwaited).toBe(0);
  });

  it('releases only leases that were LEASED, and counts a late ACK of a recovered lease as unwaited', () => {
    const recovered = recoverExpiredLease(leased(4, 'a', 50), 60, policy);
    expect(recovered.state).toBe('PENDING');
    const group = decideAckGroup(
      new Map([['d4', recovered]]),
      [{ subscriptionId: SUB, deliveryId: 'd4', epoch: 1n, digest: 'digest-4' }],
      70,
      same,
    );
    expect(group.answers[0]).toMatchObject({ kind: 'acknowledged' });
    expect(group.released.size).toBe(0);
    expect(group.unwaited).toBe(1);
  });

  it('answers every proof, and acknowledges a delivery at most once (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ n: fc.integer({ min: 1, max: 6 }), state: fc.constantFrom('LEASED', 'PENDING', 'EXPIRED', 'ACKED') }), {
          maxLength: 6,
        }),
        fc.array(fc.record({ n: fc.integer({ min: 1, max: 8 }), good: fc.boolean() }), { maxLength: 12 }),
        (stored, proofs) => {
          const rows = new Map<string, Delivery>();
          for (const { n, state } of stored)
            rows.set(`d${n}`, {
              ...leased(n, `s${n % 3}`, 5000),
              state: state as Delivery['state'],
              acknowledgedAt: state === 'ACKED' ? 1 : null,
            });
          const group = decideAckGroup(
            rows,
            proofs.map(({ n, good }) => ({ subscriptionId: SUB, deliveryId: `d${n}`, epoch: 1n, digest: good ? `digest-${n}` : 'wrong' })),
            100,
            same,
          );
          expect(group.answers).toHaveLength(proofs.length);
          const ids = group.acknowledged.map((d) => d.id);
          expect(new Set(ids).size).toBe(ids.length);
          for (const d of group.acknowledged) expect(rows.get(d.id)!.state).not.toBe('ACKED');
          const wasLeased = group.acknowledged.filter((d) => rows.get(d.id)!.state === 'LEASED').length;
          expect([...group.released.values()].reduce((a, b) => a + b, 0)).toBe(wasLeased);
          expect(group.unwaited).toBe(group.acknowledged.filter((d) => rows.get(d.id)!.state === 'PENDING').length);
        },
      ),
    );
  });
});

describe('planRecovery', () => {
  it('recovers the expired prefix within the batch and says when the first lease left ends', () => {
    const rows = [leased(1, 'a', 10), leased(2, 'a', 20), leased(3, 'b', 500)];
    const plan = planRecovery(rows, 64, 100, policy);
    expect(plan.recovered.map((d) => [d.id, d.state])).toEqual([
      ['d1', 'PENDING'],
      ['d2', 'PENDING'],
    ]);
    expect(plan.checkAt).toBe(500);
    expect(planRecovery(rows.slice(0, 2), 64, 100, policy).checkAt).toBeNull();
    // A full batch of expired leases leaves the next one due at once.
    expect(planRecovery(rows, 1, 100, policy)).toMatchObject({ checkAt: 20 });
  });
});

describe('sessionSlots and assignOwners', () => {
  it('caps each session by its room and by its capacity less what it holds after the ACKs', () => {
    const stored = new Map([
      ['a', { capacity: 4, held: 4 }],
      ['b', { capacity: 32, held: 0 }],
    ]);
    expect(
      sessionSlots(
        [
          { id: 'a', room: 8 },
          { id: 'b', room: 3 },
          { id: 'c', room: 5 },
        ],
        stored,
        new Map([['a', 2]]),
      ),
    ).toEqual({
      slots: [
        { id: 'a', free: 2 },
        { id: 'b', free: 3 },
        { id: 'c', free: 0 },
      ],
      lost: ['c'],
    });
  });

  it('spreads a short supply over the sessions, one at a time, and never gives a session more than its slots (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 8 }), { minLength: 1, maxLength: 6 }),
        fc.integer({ min: 0, max: 60 }),
        (frees, count) => {
          const slots = frees.map((free, i) => ({ id: `s${i}`, free }));
          const owners = assignOwners(slots, count);
          const total = frees.reduce((a, b) => a + b, 0);
          expect(owners).toHaveLength(Math.min(count, total));
          const given = slots.map((s) => owners.filter((o) => o === s.id).length);
          for (const [i, g] of given.entries()) {
            expect(g).toBeLessThanOrEqual(frees[i]!);
            // Round robin: a session gets fewer than another only once its own slots ran out.
            for (const h of given) expect(g >= h - 1 || g === frees[i]).toBe(true);
          }
        },
      ),
    );
  });
});

describe('planLeases', () => {
  const base = { waitingMore: false, now: 100, cursor: 10n, head: 50n, limit: 8, pendingRoom: 100 };

  it('leases PENDING deliveries first, then materializes from the log what the slots and max_pending allow', () => {
    const waiting = [delivery(3), delivery(5, { availableAt: 1000 })];
    const plan = planLeases({ ...base, slots: 4, waiting, candidates: [12n, 14n, 20n, 21n] });
    expect(plan.fromWaiting.map((d) => d.id)).toEqual(['d3']);
    expect(plan.fromLog).toBe(3);
    expect(plan.cursor).toBe(20n);
    expect(plan.more).toBe(true);
  });

  it('passes over non-matching results to the head when it took all it read and the read was short', () => {
    expect(planLeases({ ...base, slots: 10, waiting: [], candidates: [12n, 14n] })).toMatchObject({ fromLog: 2, cursor: 50n, more: false });
  });

  it('never exceeds the slots or max_pending, never moves the cursor back or past a match it did not take (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 20 }),
        fc.integer({ min: 0, max: 5 }),
        fc.uniqueArray(fc.integer({ min: 1, max: 100 }), { maxLength: 20 }),
        fc.integer({ min: 1, max: 20 }),
        fc.integer({ min: -3, max: 30 }),
        (slots, waitingCount, offsets, limit, pendingRoom) => {
          const sorted = offsets.map((o) => 10n + BigInt(o)).sort((a, b) => (a < b ? -1 : 1));
          const candidates = sorted.slice(0, limit);
          const waiting = Array.from({ length: waitingCount }, (_, i) => delivery(i + 1));
          const plan = planLeases({ ...base, head: 200n, slots, waiting, candidates, limit, pendingRoom });
          expect(plan.fromWaiting.length + plan.fromLog).toBeLessThanOrEqual(slots);
          expect(plan.fromLog).toBeLessThanOrEqual(Math.max(0, pendingRoom));
          expect(plan.cursor).toBeGreaterThanOrEqual(10n);
          expect(plan.cursor).toBeLessThanOrEqual(200n);
          const untaken = candidates[plan.fromLog];
          if (untaken !== undefined) expect(plan.cursor).toBeLessThan(untaken);
          if (plan.fromLog > 0) expect(plan.cursor).toBeGreaterThanOrEqual(candidates[plan.fromLog - 1]!);
        },
      ),
    );
  });
});

describe('nextCounters', () => {
  it('moves each counter by what the turn did and keeps the earliest lease end', () => {
    const before = { pendingCount: 10, waitingCount: 2, leaseCheckAt: 500 };
    expect(
      nextCounters(before, { acknowledged: 3, unwaited: 1, requeued: 2, leasedWaiting: 2, materialized: 4, checkAt: 900, leaseUntil: 700 }),
    ).toEqual({ pendingCount: 11, waitingCount: 1, leaseCheckAt: 700 });
    expect(nextCounters(before, { acknowledged: 0, unwaited: 0, requeued: 0, leasedWaiting: 0, materialized: 0, leaseUntil: 900 })).toEqual(
      before,
    );
    expect(
      nextCounters(before, { acknowledged: 0, unwaited: 0, requeued: 0, leasedWaiting: 0, materialized: 0, checkAt: null }),
    ).toMatchObject({
      leaseCheckAt: null,
    });
  });
});

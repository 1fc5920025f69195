import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { materializationReadLimit, planMaterialization } from './materialize.ts';

describe('planMaterialization', () => {
  it('takes what fits and stops the cursor before the first match that did not fit', () => {
    expect(planMaterialization({ cursor: 0n, head: 20n, pendingCount: 8, maxPending: 10, candidates: [3n, 5n, 9n], limit: 10 })).toEqual({
      take: 2,
      cursor: 8n,
    });
  });

  it('passes over non-matching results to the head when everything was read and taken', () => {
    expect(planMaterialization({ cursor: 4n, head: 50n, pendingCount: 0, maxPending: 10, candidates: [7n], limit: 10 })).toEqual({
      take: 1,
      cursor: 50n,
    });
  });

  it('stops at the last candidate when the read was full (more may follow)', () => {
    expect(planMaterialization({ cursor: 0n, head: 50n, pendingCount: 0, maxPending: 100, candidates: [1n, 2n], limit: 2 })).toEqual({
      take: 2,
      cursor: 2n,
    });
  });

  it('never exceeds max_pending, never moves backwards, never passes an untaken match (property)', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 0n, max: 1000n }),
        fc.uniqueArray(fc.integer({ min: 1, max: 500 }), { maxLength: 30 }),
        fc.integer({ min: 0, max: 40 }),
        fc.integer({ min: 1, max: 40 }),
        fc.integer({ min: 1, max: 40 }),
        (cursor, offsets, pending, maxPending, limit) => {
          const all = offsets.map((o) => cursor + BigInt(o)).sort((a, b) => (a < b ? -1 : 1));
          const candidates = all.slice(0, limit);
          const head = cursor + 600n;
          const plan = planMaterialization({ cursor, head, pendingCount: pending, maxPending, candidates, limit });
          expect(plan.take).toBeLessThanOrEqual(Math.max(0, maxPending - pending));
          expect(plan.cursor >= cursor).toBe(true);
          expect(plan.cursor <= head).toBe(true);
          // Every candidate at or below the new cursor was taken.
          candidates.forEach((c, i) => {
            if (c <= plan.cursor) expect(i).toBeLessThan(plan.take);
          });
        },
      ),
      { numRuns: 1000 },
    );
  });
});

describe('materializationReadLimit', () => {
  it('reads the room, at most a batch, and one when there is no room, which then takes nothing (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 1200 }),
        fc.integer({ min: 1, max: 1000 }),
        fc.integer({ min: 1, max: 300 }),
        fc.bigInt({ min: 0n, max: 100n }),
        (pendingCount, maxPending, batch, cursor) => {
          const limit = materializationReadLimit({ pendingCount, maxPending }, batch);
          const room = Math.max(0, maxPending - pendingCount);
          expect(limit).toBe(room === 0 ? 1 : Math.min(room, batch));
          const plan = planMaterialization({ cursor, head: cursor + 10n, pendingCount, maxPending, candidates: [cursor + 3n], limit });
          expect(plan.take).toBe(room === 0 ? 0 : 1);
          // No room: the cursor passes the non-matching results up to the next match, not beyond.
          if (room === 0) expect(plan.cursor).toBe(cursor + 2n);
        },
      ),
    );
  });
});

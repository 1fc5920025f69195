import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { aheadCount, aheadOf, covered, keptAhead, type ReadAhead } from './read-ahead.ts';

interface Entry {
  readonly sequence: bigint;
  readonly size: number;
}

/** A log of sequences 1..n, each matching the subscription or not, with a size. */
const log = fc.array(fc.record({ matching: fc.boolean(), size: fc.integer({ min: 0, max: 40 }) }), { minLength: 0, maxLength: 40 });

const matchingIn = (entries: readonly { matching: boolean; size: number }[], after: bigint, through: bigint): Entry[] =>
  entries
    .map((e, i) => ({ ...e, sequence: BigInt(i + 1) }))
    .filter((e) => e.matching && e.sequence > after && e.sequence <= through)
    .map(({ sequence, size }) => ({ sequence, size }));

/** Every cursor in the range `ahead` claims to cover gets exactly the log's matching results up to its end. */
function expectCovers(entries: readonly { matching: boolean; size: number }[], ahead: ReadAhead<Entry>): void {
  for (let c = ahead.after; c <= ahead.through; c++)
    expect(aheadOf(ahead, c)?.map((e) => e.sequence)).toEqual(matchingIn(entries, c, ahead.through).map((e) => e.sequence));
}

describe('read ahead', () => {
  it('covers, after any cursor inside it, exactly the matching results a read from that cursor would return (property)', () => {
    fc.assert(
      fc.property(log, fc.nat(), fc.nat(), fc.nat(), fc.integer({ min: 1, max: 12 }), (entries, a, h, s, limit) => {
        const n = entries.length;
        const after = BigInt(a % (n + 1));
        const head = after + BigInt(h % (n - Number(after) + 1));
        // The statement reads the head itself: it may be newer than the turn's.
        const statementHead = head + BigInt(s % (n - Number(head) + 1));
        const read = matchingIn(entries, after, statementHead).slice(0, limit);
        const ahead = covered(read, limit, head, after);
        expect(ahead.through).toBeLessThanOrEqual(head);
        expect(ahead.through).toBeGreaterThanOrEqual(after);
        expectCovers(entries, ahead);
      }),
    );
  });

  it('keeps, after the cursor a turn left, a covering range within its bounds (property)', () => {
    fc.assert(
      fc.property(
        log,
        fc.nat(),
        fc.nat(),
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 0, max: 100 }),
        (entries, a, c, count, size) => {
          const n = entries.length;
          const after = BigInt(a % (n + 1));
          const ahead = covered(matchingIn(entries, after, BigInt(n)), Number.MAX_SAFE_INTEGER, BigInt(n), after);
          const cursor = after + BigInt(c % (n - Number(after) + 1));
          const kept = keptAhead(ahead, cursor, { count, size, sizeOf: (e: Entry) => e.size });
          const left = matchingIn(entries, cursor, BigInt(n));
          if (kept === null) {
            // Nothing kept: nothing was left, or the first result left alone is over the bounds.
            expect(left.length === 0 || left[0]!.size > size).toBe(true);
            return;
          }
          expect(kept.after).toBe(cursor);
          expect(kept.results.length).toBeLessThanOrEqual(count);
          expect(kept.results.reduce((sum, e) => sum + e.size, 0)).toBeLessThanOrEqual(size);
          expect(kept.results[0]).toEqual(left[0]);
          expectCovers(entries, kept);
        },
      ),
    );
  });

  it('reads ahead as many results as the bounds could keep, judged by the largest it read (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 100 }), { maxLength: 10 }),
        fc.integer({ min: 1, max: 40 }),
        fc.integer({ min: 0, max: 400 }),
        fc.nat(40),
        (sizes, count, size, previous) => {
          const n = aheadCount(sizes, { count, size, sizeOf: (s: number) => s }, previous);
          if (sizes.length === 0) {
            expect(n).toBe(previous);
            return;
          }
          const largest = Math.max(...sizes);
          expect(n).toBeGreaterThanOrEqual(0);
          expect(n).toBeLessThanOrEqual(count);
          // n of the largest fit; one more would not, unless the count stops it first.
          expect(n * largest).toBeLessThanOrEqual(size);
          if (n < count) expect((n + 1) * largest).toBeGreaterThan(size);
        },
      ),
    );
  });

  it('does not answer for a cursor outside the range it read', () => {
    const ahead = { after: 4n, through: 9n, results: [{ sequence: 6n }, { sequence: 9n }] };
    expect(aheadOf(ahead, 3n)).toBeNull();
    expect(aheadOf(ahead, 10n)).toBeNull();
    expect(aheadOf(ahead, 6n)).toEqual([{ sequence: 9n }]);
    expect(keptAhead(ahead, 3n, { count: 8, size: 8, sizeOf: () => 1 })).toBeNull();
    expect(keptAhead(ahead, 9n, { count: 8, size: 8, sizeOf: () => 1 })).toBeNull();
  });
});

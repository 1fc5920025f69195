import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Batcher } from './batcher.ts';

describe('Batcher (group commit)', () => {
  it('sends a lone request at once, groups what arrives meanwhile, and answers each caller with its own result', async () => {
    const groups: number[][] = [];
    const batcher = new Batcher<number, number>(
      async (requests) => {
        groups.push([...requests]);
        await new Promise((resolve) => setTimeout(resolve, 5));
        return requests.map((r) => r * 10);
      },
      { maxGroup: 3 },
    );
    const results = await Promise.all([1, 2, 3, 4, 5, 6, 7].map((n) => batcher.submit(n)));
    expect(results).toEqual([10, 20, 30, 40, 50, 60, 70]);
    expect(groups).toEqual([[1], [2, 3, 4], [5, 6, 7]]);
  });

  it('fails only the group whose commit failed', async () => {
    let calls = 0;
    const batcher = new Batcher<number, number>(async (requests) => {
      calls++;
      if (calls === 1) throw new Error('commit failed');
      return [...requests];
    });
    const first = batcher.submit(1);
    const second = batcher.submit(2);
    await expect(first).rejects.toThrow('commit failed');
    await expect(second).resolves.toBe(2);
  });

  it('keeps a group within the weight bound, but always takes at least one request', async () => {
    const groups: number[][] = [];
    const batcher = new Batcher<number, number>(
      async (requests) => {
        groups.push([...requests]);
        await new Promise((resolve) => setTimeout(resolve, 5));
        return [...requests];
      },
      { maxGroup: 10, weigh: (n) => n, maxWeight: 10 },
    );
    await Promise.all([1, 4, 5, 2, 20, 3, 3, 3, 3].map((n) => batcher.submit(n)));
    expect(groups).toEqual([[1], [4, 5], [2], [20], [3, 3, 3], [3]]);
  });

  it('every request is answered exactly once with its own result, and groups keep both limits, in any arrival pattern (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 1, maxLength: 40 }),
        fc.integer({ min: 1, max: 8 }),
        fc.option(fc.integer({ min: 1, max: 30 }), { nil: undefined }),
        async (delays, max, maxWeight) => {
          // Request i weighs (i mod 7) + 1.
          const weigh = (i: number): number => (i % 7) + 1;
          let seen = 0;
          const batcher = new Batcher<number, number>(
            async (requests) => {
              expect(requests.length).toBeLessThanOrEqual(max);
              if (maxWeight !== undefined && requests.length > 1)
                expect(requests.reduce((sum, r) => sum + weigh(r), 0)).toBeLessThanOrEqual(maxWeight);
              seen += requests.length;
              await new Promise((resolve) => setTimeout(resolve, 1));
              return requests.map((r) => -r);
            },
            { maxGroup: max, ...(maxWeight !== undefined ? { weigh, maxWeight } : {}) },
          );
          const pending = delays.map(async (delay, i) => {
            await new Promise((resolve) => setTimeout(resolve, delay));
            return batcher.submit(i);
          });
          const results = await Promise.all(pending);
          expect(results).toEqual(delays.map((_, i) => -i));
          expect(seen).toBe(delays.length);
        },
      ),
      { numRuns: 200 },
    );
  });
});

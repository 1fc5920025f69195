import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ReadQueue } from './read-queue.ts';

/** Lets every pending microtask and timer of 0 ms run. */
const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('ReadQueue', () => {
  it('keeps at most 4 frames in processing and starts them in arrival order (property)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 1, maxLength: 400 }), async (delays) => {
        let inProcessing = 0;
        let most = 0;
        const started: number[] = [];
        const finished: number[] = [];
        const queue = new ReadQueue<number>(4, async (i) => {
          inProcessing++;
          most = Math.max(most, inProcessing);
          started.push(i);
          for (let t = 0; t < delays[i]!; t++) await tick();
          inProcessing--;
          finished.push(i);
        });
        // All frames of one TCP chunk arrive in the same turn, as `ws` emits them.
        for (const i of delays.keys()) queue.push(i);
        while (finished.length < delays.length) await tick();
        expect(most).toBeLessThanOrEqual(4);
        expect(started).toEqual(delays.map((_, i) => i));
      }),
      { numRuns: 200 },
    );
  });

  it('starts nothing while canStart says no, and resumes on pump()', async () => {
    let room = false;
    const seen: number[] = [];
    const queue = new ReadQueue<number>(
      4,
      async (i) => {
        seen.push(i);
      },
      () => room,
    );
    queue.push(1);
    queue.push(2);
    await tick();
    expect(seen).toEqual([]);
    expect(queue.queued).toBe(2);
    room = true;
    queue.pump();
    await tick();
    expect(seen).toEqual([1, 2]);
  });

  it('reports a backlog while frames wait, and drops them when stopped', async () => {
    const backlog: boolean[] = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const queue = new ReadQueue<number>(
      1,
      () => gate,
      undefined,
      (waiting) => backlog.push(waiting),
    );
    queue.push(1);
    queue.push(2);
    expect(backlog.at(-1)).toBe(true);
    queue.stop();
    release();
    // The handler settles, then the next pump runs after pending I/O (setImmediate).
    await tick();
    await tick();
    expect(queue.queued).toBe(0);
    expect(backlog.at(-1)).toBe(false);
  });
});

import { describe, expect, it } from 'vitest';
import { AcksInFlight, FOLLOW_UP_WAIT_MS } from './claiming.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('AcksInFlight', () => {
  it('holds the pool off for FOLLOW_UP_WAIT_MS after an ACK goes out, then wakes it once', async () => {
    let wakes = 0;
    const acks = new AcksInFlight(() => wakes++);
    expect(acks.holding()).toBe(false);
    acks.add('a');
    acks.add('b');
    expect(acks.holding()).toBe(true);
    expect(acks.size).toBe(2);
    await sleep(FOLLOW_UP_WAIT_MS * 3);
    expect(acks.holding()).toBe(false);
    // One wake for the stuck oldest, not one per millisecond while it stays stuck.
    expect(wakes).toBe(1);
    acks.stop();
  });

  it('counts from the oldest ACK still in flight; no wake once every ACK is answered', async () => {
    let wakes = 0;
    const acks = new AcksInFlight(() => wakes++);
    acks.add('a');
    acks.delete('a');
    expect(acks.holding()).toBe(false);
    await sleep(FOLLOW_UP_WAIT_MS * 2);
    expect(wakes).toBe(0);
    acks.add('b');
    await sleep(FOLLOW_UP_WAIT_MS / 2);
    acks.add('c');
    acks.delete('b');
    // 'c' is now the oldest, and younger than the wait.
    expect(acks.holding()).toBe(true);
    await sleep(FOLLOW_UP_WAIT_MS * 2);
    expect(acks.holding()).toBe(false);
    expect(wakes).toBe(1);
    acks.stop();
  });
});

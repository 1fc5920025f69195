import { describe, expect, it } from 'vitest';
import { ClaimPool, type Slot, type Subject } from './scheduler.ts';

function tick(ms = 0): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

type TestSubject = Subject & { wanted: boolean; running: number; busyNow: boolean };

/** A subscription whose claims stay open until the test releases them. */
function subject(app: string, sub: string, log: string[], gate: { open: boolean }): TestSubject {
  const s: TestSubject = {
    applicationId: app,
    subscriptionId: sub,
    wanted: true,
    running: 0,
    busyNow: false,
    wants: () => s.wanted,
    busy: () => s.busyNow,
    async claim(slot: Slot) {
      s.running++;
      log.push(`${app}/${sub}`);
      while (!gate.open) await tick(1);
      s.running--;
      s.wanted = false;
      slot.end('done');
    },
  };
  return s;
}

describe('claim pool', () => {
  it('runs at most 4 claims at once and at most 1 per application', async () => {
    const log: string[] = [];
    const gate = { open: false };
    const pool = new ClaimPool();
    const all = [];
    for (const app of ['a', 'b', 'c', 'd', 'e', 'f']) for (const sub of ['1', '2']) all.push(subject(app, `${app}${sub}`, log, gate));
    for (const s of all) pool.add(s);
    await tick(5);
    const running = all.filter((s) => s.running > 0);
    expect(running).toHaveLength(4);
    expect(new Set(running.map((s) => s.applicationId)).size).toBe(4);
    expect(pool.depth).toBeGreaterThanOrEqual(4);
    gate.open = true;
    for (let i = 0; i < 100 && all.some((s) => s.wanted); i++) await tick(2);
    expect(all.every((s) => !s.wanted)).toBe(true);
    await pool.drain();
  });

  it('rotates across applications before serving a second subscription of one application', async () => {
    const log: string[] = [];
    const gate = { open: true };
    const pool = new ClaimPool({ inFlight: 1, perApplication: 1, queued: 128, perRound: 4 });
    for (const [app, sub] of [
      ['a', 'a1'],
      ['a', 'a2'],
      ['a', 'a3'],
      ['b', 'b1'],
    ] as const)
      pool.add(subject(app, sub, log, gate));
    for (let i = 0; i < 50 && log.length < 4; i++) await tick(2);
    expect(
      log
        .slice(0, 2)
        .map((l) => l[0])
        .sort(),
    ).toEqual(['a', 'b']);
  });

  it('never claims for a subscription that is not dirty, and claims again once marked', async () => {
    const log: string[] = [];
    const pool = new ClaimPool();
    const s = subject('a', '1', log, { open: true });
    pool.add(s);
    await tick(5);
    expect(log).toEqual(['a/1']);
    s.wanted = true;
    pool.wake();
    await tick(5);
    expect(log).toEqual(['a/1']);
    pool.markDirty('1');
    await tick(5);
    expect(log).toEqual(['a/1', 'a/1']);
  });

  it('leaves a busy subscription (a turn outside the pool runs) until it is free, then claims', async () => {
    const log: string[] = [];
    const pool = new ClaimPool();
    const s = subject('a', '1', log, { open: true });
    s.busyNow = true;
    pool.add(s);
    await tick(5);
    expect(log).toEqual([]);
    s.busyNow = false;
    pool.wake();
    await tick(5);
    expect(log).toEqual(['a/1']);
  });
});

describe('claim pool reservations', () => {
  it('reserve: a turn for waiting ACKs takes a place within the same limits, and excludes a running claim of the subscription', async () => {
    const log: string[] = [];
    const gate = { open: false };
    const pool = new ClaimPool({ inFlight: 4, perApplication: 1, queued: 128, perRound: 4 });
    const a = subject('a', 's', log, gate);
    const a2 = subject('a', 't', log, gate);
    const b = subject('b', 'u', log, gate);
    a2.wanted = false;
    pool.add(a);
    pool.add(a2);
    pool.add(b);
    await tick(5);
    expect(log.sort()).toEqual(['a/s', 'b/u']);
    // a's claim runs: no second place for it, nor for another subscription of its application.
    expect(pool.reserve(a)).toBeNull();
    expect(pool.reserve(a2)).toBeNull();
    gate.open = true;
    for (let i = 0; i < 50 && (a.running > 0 || b.running > 0); i++) await tick(2);
    const slot = pool.reserve(a2);
    expect(slot).not.toBeNull();
    // While the place is held, the application has its one claim: the pool runs none of a's.
    a.wanted = true;
    pool.markDirty('s');
    await tick(5);
    expect(log.filter((l) => l === 'a/s')).toHaveLength(1);
    slot!.end('done');
    slot!.end('done'); // a second end is ignored
    await tick(5);
    expect(log.filter((l) => l === 'a/s')).toHaveLength(2);
    await pool.drain();
  });

  it('reserve: at most inFlight places', () => {
    const pool = new ClaimPool({ inFlight: 1, perApplication: 1, queued: 128, perRound: 4 });
    const log: string[] = [];
    const a = subject('a', 's', log, { open: true });
    const b = subject('b', 't', log, { open: true });
    a.wanted = false;
    b.wanted = false;
    pool.add(a);
    pool.add(b);
    const slot = pool.reserve(a);
    expect(slot).not.toBeNull();
    expect(pool.reserve(b)).toBeNull();
    slot!.end('done');
    expect(pool.reserve(b)).not.toBeNull();
  });

  it("reserve: a place that ends with 'more' leaves the subscription dirty, one that ends 'done' clears it", async () => {
    const log: string[] = [];
    const pool = new ClaimPool();
    const s = subject('a', 's', log, { open: true });
    s.wanted = false;
    pool.add(s); // dirty, but nobody wants
    await tick(5);
    pool.reserve(s)!.end('done');
    s.wanted = true;
    pool.wake();
    await tick(5);
    expect(log).toEqual([]);
    pool.reserve(s)!.end('more');
    pool.wake();
    await tick(5);
    expect(log).toEqual(['a/s']);
  });
});

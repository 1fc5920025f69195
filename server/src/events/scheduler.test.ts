import { describe, expect, it } from 'vitest';
import { ClaimPool, type Claimant } from './scheduler.ts';

function tick(ms = 0): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A claimant whose claims stay open until the test releases them. */
function claimant(app: string, sub: string, log: string[], gate: { open: boolean }): Claimant & { wanted: boolean; running: number } {
  const c = {
    applicationId: app,
    subscriptionId: sub,
    wanted: true,
    running: 0,
    wants: () => c.wanted,
    async claim() {
      c.running++;
      log.push(`${app}/${sub}`);
      while (!gate.open) await tick(1);
      c.running--;
      c.wanted = false;
      return false;
    },
  };
  return c;
}

describe('claim pool', () => {
  it('runs at most 4 claims at once and at most 1 per application', async () => {
    const log: string[] = [];
    const gate = { open: false };
    const pool = new ClaimPool();
    const all = [];
    for (const app of ['a', 'b', 'c', 'd', 'e', 'f']) for (const sub of ['1', '2']) all.push(claimant(app, `${app}${sub}`, log, gate));
    for (const c of all) pool.add(c);
    await tick(5);
    const running = all.filter((c) => c.running > 0);
    expect(running).toHaveLength(4);
    expect(new Set(running.map((c) => c.applicationId)).size).toBe(4);
    gate.open = true;
    for (let i = 0; i < 100 && all.some((c) => c.wanted); i++) await tick(2);
    expect(all.every((c) => !c.wanted)).toBe(true);
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
      pool.add(claimant(app, sub, log, gate));
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
    const c = claimant('a', '1', log, { open: true });
    pool.add(c);
    await tick(5);
    expect(log).toEqual(['a/1']);
    c.wanted = true;
    await tick(5);
    expect(log).toEqual(['a/1']);
    pool.markDirty('1');
    await tick(5);
    expect(log).toEqual(['a/1', 'a/1']);
  });
});

describe('claim pool groups', () => {
  it('serves every wanting claimant of one subscription with one claim', async () => {
    const calls: number[] = [];
    const pool = new ClaimPool();
    const make = () => {
      const c = {
        applicationId: 'a',
        subscriptionId: 's',
        wanted: true,
        wants: () => c.wanted,
        async claim(group: readonly unknown[]) {
          calls.push(group.length + 1);
          for (const member of [c, ...(group as (typeof c)[])]) member.wanted = false;
          return false;
        },
      };
      return c;
    };
    const members = [make(), make(), make()];
    for (const m of members) pool.add(m);
    await tick(5);
    expect(calls).toEqual([3]);
    expect(members.every((m) => !m.wanted)).toBe(true);
  });

  it('reserve: a turn for an ACK group counts against the same limits and excludes a running claim of the subscription', async () => {
    const log: string[] = [];
    const gate = { open: false };
    const pool = new ClaimPool({ inFlight: 4, perApplication: 1, queued: 128, perRound: 4 });
    const a1 = claimant('a', 's', log, gate);
    const a2 = claimant('a', 's', log, gate);
    const b = claimant('b', 't', log, gate);
    pool.add(a1);
    pool.add(a2);
    pool.add(b);
    await tick(5);
    // a's claim runs (with a2 as its sibling) and b's: no turn for either subscription now.
    expect(log.sort()).toEqual(['a/s', 'b/t']);
    expect(pool.reserve(a1)).toBeNull();
    expect(pool.reserve(a2)).toBeNull();
    gate.open = true;
    for (let i = 0; i < 50 && (a1.running > 0 || b.running > 0); i++) await tick(2);
    await tick(5);
    const turn = pool.reserve(a2);
    expect(turn?.members).toEqual([a2, a1]);
    // While the turn is held, the application has its one claim: the pool runs none of a's.
    a1.wanted = true;
    pool.markDirty('s');
    await tick(5);
    expect(log.filter((l) => l === 'a/s')).toHaveLength(1);
    expect(pool.reserve(a1)).toBeNull();
    turn!.end('more');
    turn!.end('more'); // a second end is ignored
    await tick(5);
    expect(log.filter((l) => l === 'a/s')).toHaveLength(2);
    await pool.drain();
  });

  it('reserve: at most inFlight running, and none for a claimant the pool does not know', () => {
    const pool = new ClaimPool({ inFlight: 1, perApplication: 1, queued: 128, perRound: 4 });
    const log: string[] = [];
    const a = claimant('a', 's', log, { open: true });
    const b = claimant('b', 't', log, { open: true });
    expect(pool.reserve(a)).toBeNull();
    a.wanted = false;
    b.wanted = false;
    pool.add(a);
    pool.add(b);
    const turn = pool.reserve(a);
    expect(turn).not.toBeNull();
    expect(pool.reserve(b)).toBeNull();
    turn!.end('done');
    expect(pool.reserve(b)).not.toBeNull();
  });

  it('reserve: a turn that ran no claim leaves the subscription as dirty as it was; one that ran clears it', async () => {
    const log: string[] = [];
    const pool = new ClaimPool();
    const c = claimant('a', 's', log, { open: true });
    c.wanted = false;
    pool.add(c); // dirty, but nobody wants
    await tick(5);
    pool.reserve(c)!.end('not_run');
    c.wanted = true;
    pool.wake();
    await tick(5);
    expect(log).toEqual(['a/s']);
    c.wanted = true;
    pool.markDirty('s');
    c.wanted = false;
    await tick(5);
    pool.reserve(c)!.end('done');
    c.wanted = true;
    pool.wake();
    await tick(5);
    expect(log).toEqual(['a/s']);
  });
});

/**
 * The delivery engine's cost model (spec/README.md, "The delivery engine"): fixed scenarios, run on
 * both stores through the engine itself, each counted in statements, round trips, commits and
 * characters sent (statement text and values) per delivered (or published) event. The counts are
 * deterministic: a turn's inputs are chosen here, as a consumer that ACKs everything at once and a
 * lane would give them, so timing plays no part.
 *
 * The figures live in one reviewed file, engine-cost.json. A count above its figure fails: a change
 * that adds a statement or a round trip to the hot path shows up in review, not in the next
 * benchmark. A count well below its figure is reported, so that the file can follow it down.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORES, type StoreKind } from '@orbit/testing';
import type { Leased } from '../src/engine/engine.ts';
import type { DatabaseCounts } from '../src/store/tracked.ts';
import { type Consumer, type EngineWorld, openWorld, POLICY, proofOf, Tenant } from './engine-harness.ts';

/** A session's write queue (spec/rules.md#s5-20): a turn leases it at most this less its ACKs' replies. */
const WRITE_QUEUE = 8;

interface Figures {
  readonly statements: number;
  readonly round_trips: number;
  readonly commits: number;
  readonly sent: number;
}

const RECORDED = JSON.parse(readFileSync(new URL('./engine-cost.json', import.meta.url), 'utf8')) as {
  figures: Record<string, Record<StoreKind, Figures>>;
};

const measured: Record<string, Partial<Record<StoreKind, Figures>>> = {};

function snapshot(world: EngineWorld): DatabaseCounts {
  return { ...world.store.db.counts };
}

function perEvent(world: EngineWorld, before: DatabaseCounts, events: number): Figures {
  const after = world.store.db.counts;
  const round = (n: number) => Math.round((n / events) * 1000) / 1000;
  return {
    statements: round(after.statements - before.statements),
    round_trips: round(after.roundTrips - before.roundTrips),
    commits: round(after.commits - before.commits),
    sent: Math.round((after.sent - before.sent) / events),
  };
}

interface Reader {
  readonly consumer: Consumer;
  readonly sessions: readonly { readonly id: string; readonly capacity: number }[];
  /** What each session holds and has not ACKed yet. */
  readonly holding: Map<string, Leased[]>;
}

async function reader(consumer: Consumer, capacities: readonly number[]): Promise<Reader> {
  const sessions = [];
  for (const capacity of capacities) sessions.push({ id: await consumer.bind(capacity), capacity });
  return { consumer, sessions, holding: new Map(sessions.map((s) => [s.id, []])) };
}

/**
 * Turns until `events` deliveries are acknowledged: each turn of each subscription carries the ACKs
 * of everything its sessions hold, and offers each session what its capacity and write queue leave
 * once those ACKs' replies are counted (as `Session.room` does).
 */
async function consume(readers: readonly Reader[], events: number, leaseMs = 60_000): Promise<void> {
  let acked = 0;
  for (let round = 0; acked < events; round++) {
    if (round > 10 * events) throw new Error(`no progress: ${acked} of ${events} acknowledged`);
    for (const r of readers) {
      const acks = r.sessions.flatMap((s) => r.holding.get(s.id)!.map(proofOf));
      const rooms = r.sessions
        .map((s) => {
          const releasing = r.holding.get(s.id)!.length;
          return { id: s.id, room: Math.max(0, Math.min(WRITE_QUEUE - releasing, s.capacity)) };
        })
        .filter((s) => s.room > 0);
      const outcome = await r.consumer.turn(acks, rooms, leaseMs);
      acked += outcome.acks.filter((a) => a.kind === 'acknowledged').length;
      for (const s of r.sessions) r.holding.set(s.id, []);
      for (const item of outcome.leased) r.holding.get(item.session)!.push(item);
    }
  }
}

describe.each(STORES)('engine cost on %s', (kind) => {
  let world: EngineWorld;
  beforeAll(async () => {
    world = await openWorld(kind);
  });
  afterAll(async () => {
    await world?.close();
  });

  const record = (scenario: string, figures: Figures) => {
    measured[scenario] = { ...measured[scenario], [kind]: figures };
    const recorded = RECORDED.figures[scenario]?.[kind];
    expect(recorded, `engine-cost.json has no figures for "${scenario}" on ${kind}; measured ${JSON.stringify(figures)}`).toBeDefined();
    for (const name of ['statements', 'round_trips', 'commits', 'sent'] as const)
      expect(figures[name], `${scenario} on ${kind}: ${name} per event rose above engine-cost.json`).toBeLessThanOrEqual(recorded![name]);
  };

  it('capacity 1: one subscription, one session', async () => {
    const tenant = await Tenant.create(world);
    const r = await reader(await tenant.subscribe(), [1]);
    await tenant.publish(50);
    const before = snapshot(world);
    await consume([r], 50);
    record('capacity 1', perEvent(world, before, 50));
  });

  it('4 × 32: one subscription, four sessions of capacity 32', async () => {
    const tenant = await Tenant.create(world);
    const r = await reader(await tenant.subscribe(), [32, 32, 32, 32]);
    await tenant.publish(512);
    const before = snapshot(world);
    await consume([r], 512);
    record('4 × 32', perEvent(world, before, 512));
  });

  it('16 subscriptions of one queue, one session of capacity 32 each', async () => {
    const tenant = await Tenant.create(world);
    const readers = [];
    for (let i = 0; i < 16; i++) readers.push(await reader(await tenant.subscribe(), [32]));
    await tenant.publish(64);
    const before = snapshot(world);
    await consume(readers, 64 * 16);
    record('16 subscriptions', perEvent(world, before, 64 * 16));
  });

  it('a backlog of PENDING deliveries (leases that ran out)', async () => {
    const tenant = await Tenant.create(world);
    const r = await reader(await tenant.subscribe(), [32, 32]);
    await tenant.publish(64);
    // Lease all 64 with leases that end at once, then let the sweep put them back to PENDING.
    const all = await r.consumer.turn(
      [],
      r.sessions.map((s) => ({ id: s.id, room: 32 })),
      1,
    );
    expect(all.leased).toHaveLength(64);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect((await world.engine.sweep(POLICY, 100)).pending).toBe(64);
    const before = snapshot(world);
    await consume([r], 64);
    record('PENDING backlog', perEvent(world, before, 64));
  });

  it('appends of 64 results in one transaction (the in-process seam)', async () => {
    const tenant = await Tenant.create(world);
    const before = snapshot(world);
    for (let i = 0; i < 4; i++) await tenant.publish(64);
    record('append 64', perEvent(world, before, 256));
  });

  it('batch publishes of 100 results (the HTTP seam, each item with its key)', async () => {
    const tenant = await Tenant.create(world);
    const before = snapshot(world);
    for (let i = 0; i < 4; i++) await tenant.publishBatch(100);
    record('batch publish 100', perEvent(world, before, 400));
  });
});

afterAll(() => {
  const lines = ['scenario | store | statements | round trips | commits | characters sent (per event; recorded in parentheses)'];
  for (const [scenario, byStore] of Object.entries(measured))
    for (const [kind, f] of Object.entries(byStore) as [StoreKind, Figures][]) {
      const r = RECORDED.figures[scenario]?.[kind];
      const cell = (name: keyof Figures) => `${f[name]}${r ? ` (${r[name]})` : ''}${r && f[name] < r[name] * 0.9 ? ' ↓' : ''}`;
      lines.push(`${scenario} | ${kind} | ${cell('statements')} | ${cell('round_trips')} | ${cell('commits')} | ${cell('sent')}`);
    }
  console.log(`engine cost model (↓: well below the recorded figure; lower it in engine-cost.json)\n${lines.join('\n')}`);
});

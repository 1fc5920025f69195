/**
 * The delivery engine keeps counters instead of counting rows (spec/README.md, "The delivery
 * engine"): a subscription's pending_count and PENDING count, the time before which none of its
 * leases ends, and each session's leases held. Random sequences of publishes, turns (ACKs good,
 * forged and repeated; leases that run out at once), sweeps, manual retries and pauses, on both
 * stores, with turns on two nodes that each keep their own hints and results read ahead: after
 * every step each counter equals what it counts, no session holds more than its capacity, no
 * subscription more than max_pending, and the matching results up to the cursor, and only those,
 * have one delivery each.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORES } from '@orbit/testing';
import type { Leased } from '../src/engine/engine.ts';
import { Consumer, type EngineWorld, openWorld, POLICY, proofOf } from './engine-harness.ts';

const op = fc.oneof(
  fc.record({ kind: fc.constant('publish' as const), n: fc.integer({ min: 1, max: 6 }), requeued: fc.boolean() }),
  fc.record({
    kind: fc.constant('turn' as const),
    sessions: fc.uniqueArray(fc.nat(2), { maxLength: 3 }),
    room: fc.integer({ min: 0, max: 8 }),
    acks: fc.array(fc.record({ pick: fc.nat(60), forged: fc.boolean() }), { maxLength: 6 }),
    short: fc.boolean(),
    /** Which of two nodes runs the turn, each with its own hints and results read ahead. */
    node: fc.nat(1),
  }),
  fc.record({ kind: fc.constant('sweep' as const) }),
  fc.record({ kind: fc.constant('retry' as const), pick: fc.nat(60) }),
  fc.record({ kind: fc.constant('configure' as const), enabled: fc.boolean() }),
  fc.record({ kind: fc.constant('wait' as const) }),
);

async function checkCounters(world: EngineWorld, consumer: Consumer, maxPending: number): Promise<void> {
  const [row] = await world.store.db.all(
    `SELECT s.pending_count, s.waiting_count, s.lease_check_at,
            (SELECT COUNT(*) FROM deliveries d WHERE d.subscription_id = s.id AND d.state <> 'ACKED') AS open,
            (SELECT COUNT(*) FROM deliveries d WHERE d.subscription_id = s.id AND d.state = 'PENDING') AS waiting,
            (SELECT MIN(d.lease_until) FROM deliveries d WHERE d.subscription_id = s.id AND d.state = 'LEASED') AS earliest
       FROM subscriptions s WHERE s.id = ?`,
    [consumer.subscriptionId],
  );
  expect(Number(row!.pending_count)).toBe(Number(row!.open));
  expect(Number(row!.waiting_count)).toBe(Number(row!.waiting));
  expect(Number(row!.open)).toBeLessThanOrEqual(maxPending);
  if (row!.earliest !== null) {
    expect(row!.lease_check_at).not.toBeNull();
    expect(Number(row!.lease_check_at)).toBeLessThanOrEqual(Number(row!.earliest));
  }
  const sessions = await world.store.db.all(
    `SELECT s.id, s.capacity, s.held, (SELECT COUNT(*) FROM deliveries d WHERE d.lease_session = s.id AND d.state = 'LEASED') AS leased
       FROM sessions s WHERE s.subscription_id = ?`,
    [consumer.subscriptionId],
  );
  for (const s of sessions) {
    expect(Number(s.held)).toBe(Number(s.leased));
    expect(Number(s.leased)).toBeLessThanOrEqual(Number(s.capacity));
  }
  // The cursor: every matching result up to it has exactly one delivery, and none after it has one.
  const [{ cursor_sequence: cursor }] = (await world.store.db.all('SELECT cursor_sequence FROM subscriptions WHERE id = ?', [
    consumer.subscriptionId,
  ])) as [{ cursor_sequence: unknown }];
  const marks = consumer.types.map(() => '?').join(', ');
  const results = await world.store.db.all(
    `SELECT sequence FROM results WHERE queue_id = ? AND type IN (${marks}) AND sequence <= ? ORDER BY sequence`,
    [consumer.queueId, ...consumer.types, String(cursor)],
  );
  const delivered = await world.store.db.all('SELECT sequence FROM deliveries WHERE subscription_id = ? ORDER BY sequence', [
    consumer.subscriptionId,
  ]);
  expect(delivered.map((d) => String(d.sequence))).toEqual(results.map((r) => String(r.sequence)));
}

describe.each(STORES)('engine counters on %s', (kind) => {
  let world: EngineWorld;
  beforeAll(async () => {
    world = await openWorld(kind);
  });
  afterAll(async () => {
    await world?.close();
  });

  it('keeps every counter equal to what it counts, through random operations (property)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 2, max: 12 }), fc.array(op, { minLength: 1, maxLength: 25 }), async (maxPending, ops) => {
        const consumer = await Consumer.create(world, { maxPending, maxAttempts: 2 });
        const capacities = [1, 3, 8];
        const sessions: string[] = [];
        for (const capacity of capacities) sessions.push(await consumer.bind(capacity));
        const handed: Leased[] = [];
        const hints = [consumer.hints, consumer.hints];
        for (const o of ops) {
          switch (o.kind) {
            case 'publish':
              await consumer.publish(o.n, o.requeued ? 'task.requeued' : 'task.succeeded');
              break;
            case 'turn': {
              const seen = new Set<string>();
              const acks = [];
              for (const { pick, forged } of o.acks) {
                const item = handed[pick % Math.max(1, handed.length)];
                if (!item || seen.has(item.delivery.id)) continue;
                seen.add(item.delivery.id);
                acks.push(forged ? { ...proofOf(item), secret: 'A'.repeat(43) } : proofOf(item));
              }
              const rooms = o.sessions.map((i) => ({ id: sessions[i]!, room: o.room }));
              consumer.hints = hints[o.node]!;
              const outcome = await consumer.turn(acks, rooms, o.short ? 1 : 60_000);
              hints[o.node] = consumer.hints;
              expect(outcome.acks).toHaveLength(acks.length);
              handed.push(...outcome.leased);
              break;
            }
            case 'sweep':
              await world.engine.sweep(POLICY, 10);
              break;
            case 'retry': {
              const expired = await world.store.db.all(
                "SELECT id FROM deliveries WHERE subscription_id = ? AND state = 'EXPIRED' ORDER BY id",
                [consumer.subscriptionId],
              );
              const pick = expired[o.pick % Math.max(1, expired.length)];
              if (pick) await consumer.retry(String(pick.id));
              break;
            }
            case 'configure':
              await consumer.configure(o.enabled);
              break;
            case 'wait':
              await new Promise((resolve) => setTimeout(resolve, 3));
              break;
          }
          await checkCounters(world, consumer, maxPending);
        }
      }),
      { numRuns: kind === 'mysql' ? 30 : 100 },
    );
  });
});

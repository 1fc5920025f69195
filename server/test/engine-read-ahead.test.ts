/**
 * Results read ahead (spec/README.md, "The delivery engine"): a turn that reads the log keeps what
 * it read beyond its sessions' room, and the subscription's next turns on this node lease from it
 * without reading the log. Two nodes' turns of one subscription, each with its own hints, show
 * that what a node kept answers only for the cursor it finds locked.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RawJson } from '@orbit/spec/codec';
import { STORES } from '@orbit/testing';
import type { AckRequest, TurnHints } from '../src/engine/engine.ts';
import { READ_AHEAD } from '../src/engine/turn.ts';
import { Consumer, type EngineWorld, openWorld, proofOf } from './engine-harness.ts';

describe.each(STORES)('results read ahead on %s', (kind) => {
  let world: EngineWorld;
  beforeAll(async () => {
    world = await openWorld(kind);
  });
  afterAll(async () => {
    await world?.close();
  });

  /** Sequences of the log, counted from the first result a test publishes. */
  let base = 0n;
  const at = (n: number) => base + BigInt(n);
  const head = async () =>
    BigInt(String((await world.store.db.all('SELECT head_sequence FROM result_head WHERE id = 1'))[0]!.head_sequence));

  /** One turn of `consumer` on a node whose hints are `node.hints`, counted in round trips and statements. */
  async function turnOn(
    node: { hints: TurnHints },
    consumer: Consumer,
    rooms: readonly { id: string; room: number }[],
    acks: readonly AckRequest[] = [],
  ) {
    consumer.hints = node.hints;
    const before = { ...world.store.db.counts };
    const outcome = await consumer.turn(acks, rooms);
    node.hints = consumer.hints;
    const after = world.store.db.counts;
    return {
      sequences: outcome.leased.map((l) => l.delivery.sequence),
      leased: outcome.leased,
      roundTrips: after.roundTrips - before.roundTrips,
      statements: after.statements - before.statements,
    };
  }

  it('leases the next results from what an earlier turn read, after the cursor another node moved', async () => {
    const consumer = await Consumer.create(world);
    base = await head();
    const session = await consumer.bind(32);
    await consumer.publish(10);
    const a = { hints: consumer.hints };
    const b = { hints: consumer.hints };

    const first = await turnOn(a, consumer, [{ id: session, room: 1 }]);
    expect(first.sequences).toEqual([at(1)]);
    expect(a.hints.ahead?.results.map((r) => r.sequence)).toEqual([2, 3, 4, 5, 6, 7, 8, 9, 10].map(at));

    // The next turn on the same node reads no results: the lock and the context, then the new
    // delivery, the cursor and the session's held count.
    const second = await turnOn(a, consumer, [{ id: session, room: 1 }]);
    expect(second.sequences).toEqual([at(2)]);
    expect(second.roundTrips).toBe(2);
    expect(second.statements).toBe(5);

    // Another node moves the cursor to 5; this node's next turn leases 6, not what it kept after 2.
    const other = await turnOn(b, consumer, [{ id: session, room: 3 }]);
    expect(other.sequences).toEqual([3, 4, 5].map(at));
    const third = await turnOn(a, consumer, [{ id: session, room: 1 }]);
    expect(third.sequences).toEqual([at(6)]);
    expect(third.roundTrips).toBe(2);
  });

  it('reads the log in a second round trip when another node moved the cursor past what it kept', async () => {
    const consumer = await Consumer.create(world);
    base = await head();
    const mine = await consumer.bind(1);
    const others = [await consumer.bind(32), await consumer.bind(32)];
    const total = READ_AHEAD + 10;
    await consumer.publish(total);
    const a = { hints: consumer.hints };
    const b = { hints: consumer.hints };

    const first = await turnOn(a, consumer, [{ id: mine, room: 1 }]);
    expect(first.sequences).toEqual([at(1)]);
    const kept = a.hints.ahead!;
    expect(kept.results).toHaveLength(READ_AHEAD);
    expect(kept.through).toBe(at(READ_AHEAD + 1));

    const past = await turnOn(b, consumer, [
      { id: others[0]!, room: 32 },
      { id: others[1]!, room: 2 },
    ]);
    expect(past.sequences.at(-1)).toBe(at(READ_AHEAD + 3));
    const late = await turnOn(a, consumer, [{ id: mine, room: 1 }], first.leased.map(proofOf));
    expect(late.sequences).toEqual([at(READ_AHEAD + 4)]);
    expect(late.roundTrips).toBe(3);
  });

  /** A subscription with one session and 4 results of about `chars` characters each, and a node's hints. */
  async function largeResults(chars: number) {
    const consumer = await Consumer.create(world);
    base = await head();
    const session = await consumer.bind(10);
    await world.store.appendResults(
      Array.from({ length: 4 }, () => ({ ...consumer.tenant.result(), result: new RawJson(JSON.stringify({ text: 'x'.repeat(chars) })) })),
    );
    return { consumer, session, node: { hints: consumer.hints } };
  }

  it('keeps results ahead only within their count and size', async () => {
    // Results of about 20 KB each: the turn keeps the first one after the one it leased, not two.
    const { consumer, session, node } = await largeResults(20_000);
    expect((await turnOn(node, consumer, [{ id: session, room: 1 }])).sequences).toEqual([at(1)]);
    expect(node.hints.ahead?.results.map((r) => r.sequence)).toEqual([at(2)]);
    expect(node.hints.ahead?.through).toBe(at(2));
    // And the next read of the log takes one result beyond its need, not 32 it could not keep.
    expect(node.hints.readAhead).toBe(1);
  });

  it('reads no more than it needs from a log of results too large to keep, and still leases them in order', async () => {
    const { consumer, session, node } = await largeResults(40_000);
    const leased: bigint[] = [];
    for (let i = 0; i < 4; i++) leased.push(...(await turnOn(node, consumer, [{ id: session, room: 1 }])).sequences);
    expect(leased).toEqual([1, 2, 3, 4].map(at));
    expect(node.hints.ahead ?? null).toBeNull();
    expect(node.hints.readAhead).toBe(0);
  });

  it('reads the log again, not past it, when a hint names a cursor ahead of the one it locks', async () => {
    const consumer = await Consumer.create(world);
    base = await head();
    const session = await consumer.bind(10);
    await consumer.publish(10);
    // No turn leaves such a hint (a cursor only moves forward); a replica that lost commits could.
    const node = { hints: { ...consumer.hints, cursor: at(5), ahead: null } };
    const turn = await turnOn(node, consumer, [{ id: session, room: 1 }]);
    expect(turn.sequences).toEqual([at(1)]);
    expect(turn.roundTrips).toBe(3);
  });
});

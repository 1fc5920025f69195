/**
 * @module
 * What reaches a connection (spec/rules.md §2, §5, §6; area `ack`, after ack.ts): no more
 * deliveries than the capacity or max_pending allow, only the subscribed types, never
 * task.requeued, a later result of the same task as its own event, every one of many concurrent
 * results, and a lease that outlives its connection.
 */
import { CAPACITY } from '@orbit/spec/protocol';
import { type ConformanceCase, defineCase } from '../case.ts';
import type { CaseContext } from '../context.ts';
import { isDeliver } from '../frames.ts';
import { randomId } from '../ids.ts';
import { describeEvents, leased } from './helpers.ts';

/** Whether `got` holds exactly the events of `expected`, in any order. */
function sameEvents(got: ReadonlyArray<{ readonly id: string }>, expected: ReadonlyArray<{ readonly id: string }>): boolean {
  const ids = (events: ReadonlyArray<{ readonly id: string }>) =>
    events
      .map((e) => e.id)
      .sort()
      .join();
  return ids(got) === ids(expected);
}

export const ackFlowCases: ConformanceCase[] = [
  defineCase({
    id: 'ack.capacity-respected',
    area: 'ack',
    level: 'MUST',
    title: 'MUST NOT let a connection hold more unacknowledged deliveries than its capacity',
    seed: ['s5-11', 's4-11'],
    async run(ctx: CaseContext) {
      const sub = await ctx.createSubscription();
      const { conn } = await ctx.bind(sub.id, 2);
      for (let i = 0; i < 3; i++) await ctx.publish({ type: 'task.succeeded' });
      const a = await ctx.deliver(conn);
      await ctx.deliver(conn);
      const third = await conn.poll((f) => f.type === 'event.deliver', ctx.quietWithinLease(a));
      ctx.check(!third, `a third delivery arrived on a connection of capacity 2: ${third?.$text}`);
      for (const p of (await ctx.listDeliveries(sub.id, 'state=PENDING')).items) {
        if (p.attempts === 0)
          ctx.check(
            p.lease_epoch === '0' && p.lease_until === undefined,
            `a never-sent PENDING delivery: ${JSON.stringify(p)}; expected lease_epoch "0" and no lease_until`,
          );
      }
      ctx.equal((await ctx.ack(conn, ctx.latest(a))).type, 'ack', 'ACK of the first');
      await conn.next(
        (f) => f.type === 'event.deliver' && f.body.delivery.id !== a.body.delivery.id && f.body.delivery.lease_epoch === '1',
        ctx.deliverMs,
        'the third delivery after one ACK',
      );
    },
  }),
  defineCase({
    id: 'ack.max-pending-respected',
    area: 'ack',
    level: 'MUST',
    title: 'MUST NOT materialize more than max_pending unfinished deliveries for a subscription',
    seed: ['s2-6', 's2-17'],
    async run(ctx: CaseContext) {
      const sub = await ctx.createSubscription({ max_pending: 1 });
      const { conn } = await ctx.bind(sub.id, 3);
      await ctx.publish({ type: 'task.succeeded' });
      await ctx.publish({ type: 'task.succeeded' });
      const first = await ctx.deliver(conn);
      const second = await conn.poll((f) => f.type === 'event.deliver', ctx.quietWithinLease(first));
      ctx.check(!second, `a second delivery arrived with max_pending 1: ${second?.$text}`);
      const now = await ctx.getSubscription(sub.id);
      ctx.check(now.pending_count <= 1, `pending_count ${now.pending_count} exceeds max_pending 1`);
      ctx.equal((await ctx.ack(conn, ctx.latest(first))).type, 'ack', 'ACK of the first');
      await conn.next(
        (f) => f.type === 'event.deliver' && f.body.delivery.id !== first.body.delivery.id,
        ctx.deliverMs,
        'the second delivery after the ACK',
      );
    },
  }),
  defineCase({
    id: 'ack.types-filter',
    area: 'ack',
    level: 'MUST',
    title: 'MUST deliver only results of the subscribed types',
    seed: ['s2-4'],
    async run(ctx: CaseContext) {
      const sub = await ctx.createSubscription({ types: ['task.failed', 'task.needs_review'] });
      const { conn } = await ctx.bind(sub.id, 8);
      await ctx.publish({ type: 'task.succeeded' });
      await ctx.publish({ type: 'task.cancelled' });
      const failed = await ctx.publish({ type: 'task.failed' });
      const review = await ctx.publish({ type: 'task.needs_review' });
      const frames = [await ctx.deliver(conn), await ctx.deliver(conn)];
      const got = frames.map((f) => f.body.event);
      ctx.check(
        sameEvents(got, [failed, review]),
        `delivered ${describeEvents(got)}; expected ${describeEvents([failed, review])} (subscribed to task.failed and task.needs_review)`,
      );
      const extra = await conn.poll((f) => isDeliver(f) && !frames.some((g) => g.body.delivery.id === f.body.delivery.id), ctx.quietMs);
      ctx.check(
        !extra,
        `a result of an unsubscribed type was delivered: ${extra && isDeliver(extra) ? describeEvents([extra.body.event]) : extra?.$text}`,
      );
    },
  }),
  defineCase({
    id: 'ack.requeued-never-delivered',
    area: 'ack',
    level: 'MUST',
    title: 'MUST never deliver task.requeued, even to a subscription of all types',
    seed: ['s2-9'],
    async run(ctx: CaseContext) {
      const sub = await ctx.createSubscription({ types: [] });
      const { conn } = await ctx.bind(sub.id, 4);
      const requeued = await ctx.publish({ type: 'task.requeued' });
      const done = await ctx.publish({ type: 'task.succeeded' });
      const delivered = await ctx.deliver(conn);
      ctx.equal(delivered.body.event.id, done.id, 'the delivered event');
      const extra = await conn.poll((f) => f.type === 'event.deliver' && f.body.delivery.id !== delivered.body.delivery.id, ctx.quietMs);
      ctx.check(!extra, `task.requeued was delivered: ${extra?.$text}`);
      const list = await ctx.listDeliveries(sub.id);
      ctx.check(!list.items.some((d) => d.event_id === requeued.id), 'a delivery exists for the task.requeued event');
    },
  }),
  defineCase({
    id: 'ack.needs-review-distinct-events',
    area: 'ack',
    level: 'MUST',
    title: 'MUST deliver a later authoritative result of the same task as a separate event',
    seed: ['s2-10'],
    async run(ctx: CaseContext) {
      const sub = await ctx.createSubscription();
      const { conn } = await ctx.bind(sub.id, 2);
      const task = randomId();
      const review = await ctx.publish({ type: 'task.needs_review', task_id: task, task_revision: '1' });
      const done = await ctx.publish({ type: 'task.succeeded', task_id: task, task_revision: '2' });
      const frames = [await ctx.deliver(conn), await ctx.deliver(conn)];
      const got = frames.map((f) => f.body.event);
      ctx.check(
        sameEvents(got, [review, done]),
        `delivered ${describeEvents(got)}; expected both results of task ${task}: ${describeEvents([review, done])}`,
      );
      ctx.check(frames[0]!.body.delivery.id !== frames[1]!.body.delivery.id, 'both results share one delivery');
      ctx.check(
        frames.every((f) => f.body.event.aggregate_id === task),
        'aggregate_id differs from the task',
      );
    },
  }),
  defineCase({
    id: 'ack.concurrent-results-all-delivered',
    area: 'ack',
    level: 'MUST',
    title: 'MUST deliver every one of many results published concurrently, each once, without skipping late commits',
    seed: ['s6-18'],
    timeoutMs: 60_000,
    async run(ctx: CaseContext) {
      const sub = await ctx.createSubscription({ types: ['task.failed'] });
      const { conn } = await ctx.bind(sub.id, CAPACITY.max);
      const published = await Promise.all(Array.from({ length: 24 }, () => ctx.publish({ type: 'task.failed' })));
      const wanted = new Set(published.map((e) => e.id));
      const seen = new Map<string, number>();
      while ([...wanted].some((id) => !seen.has(id))) {
        const f = await conn.next(
          (x) => x.type === 'event.deliver',
          ctx.deliverMs,
          `the remaining ${[...wanted].filter((id) => !seen.has(id)).length} of ${wanted.size} events`,
        );
        seen.set(f.body.event.id, (seen.get(f.body.event.id) ?? 0) + 1);
        ctx.check(wanted.has(f.body.event.id), `an event that was not published in this case arrived: ${describeEvents([f.body.event])}`);
        const reply = await ctx.ack(conn, f);
        ctx.check(reply.type === 'ack', `ACK failed: ${reply.$text}`);
      }
      const twice = [...seen].filter(([, n]) => n > 1);
      ctx.check(twice.length === 0, `events delivered more than once within their lease: ${JSON.stringify(twice)}`);
      ctx.equal((await ctx.getSubscription(sub.id)).pending_count, 0, 'pending_count after all ACKs');
    },
  }),
  defineCase({
    id: 'ack.lease-survives-disconnect',
    area: 'ack',
    level: 'MUST',
    title: 'MUST keep a lease when its connection closes: it is not offered again before expiry and its proof still acknowledges',
    seed: ['s5-17', 's7-22'],
    async run(ctx: CaseContext) {
      const { sub, conn, deliver } = await leased(ctx);
      await conn.close();
      const { conn: next } = await ctx.bind(sub.id);
      const early = await next.poll(
        (f) => f.type === 'event.deliver' && f.body.delivery.id === deliver.body.delivery.id,
        ctx.quietWithinLease(deliver),
      );
      ctx.check(!early, `the leased delivery was offered again before its lease ran out: ${early?.$text}`);
      const reply = await ctx.ack(next, ctx.latest(deliver));
      ctx.check(reply.type === 'ack' && reply.body.deduplicated === false, `ACK on the new connection: ${reply.$text}`);
    },
  }),
];

/**
 * @module
 * Retirement (spec/rules.md §9; the request and its effects are Orbit's, spec/README.md#subscription-choices):
 * retire adds retired_at and retired_sequence, is idempotent, is refused while work is open (a
 * PENDING, LEASED or EXPIRED delivery, or a matching result not yet materialized: one case each),
 * keeps history readable, and ends configuration and consumption for good.
 */
import { validateSubscriptionList, validateSubscriptionResult } from '@orbit/generated';
import { type ConformanceCase, defineCase } from '../case.ts';
import type { CaseContext } from '../context.ts';
import { deliveryOf, repliesTo } from '../frames.ts';
import { expiredDelivery, expiryTimeout, leased, postRetire, retryOnce } from './helpers.ts';

/** Expects the retire of `id` at `revision` to be refused because of `what`. */
async function expectRetireBlocked(ctx: CaseContext, id: string, revision: string, what: string): Promise<void> {
  ctx.expectError(await postRetire(ctx, id, revision), 'STATE_CONFLICT', `retire with ${what}`);
  ctx.check(!(await ctx.getSubscription(id)).retired_at, `the refused retire (${what}) retired the subscription`);
}

export const retireCases: ConformanceCase[] = [
  defineCase({
    id: 'retire.success',
    area: 'retire',
    level: 'MUST',
    title: 'MUST retire an idle subscription (200, retired_at and retired_sequence) and keep it readable',
    seed: ['s9-2', 's1-13'],
    async run(ctx: CaseContext) {
      const sub = await ctx.createSubscription();
      const data = ctx.expectData(
        await postRetire(ctx, sub.id, '1', { reason: 'no longer needed' }),
        200,
        'retire',
        validateSubscriptionResult,
      );
      ctx.equal(data.deduplicated, false, 'deduplicated');
      ctx.check(
        typeof data.subscription.retired_at === 'string' && typeof data.subscription.retired_sequence === 'string',
        `retired_at/retired_sequence missing: ${JSON.stringify(data.subscription)}`,
      );
      const now = await ctx.getSubscription(sub.id);
      ctx.equal(
        [now.retired_at, now.retired_sequence],
        [data.subscription.retired_at, data.subscription.retired_sequence],
        'GET after retire',
      );
      const page = ctx.expectData(
        await ctx.get('full', `/v1/subscriptions?queue_id=${ctx.queue}&limit=100`),
        200,
        'list',
        validateSubscriptionList,
      );
      ctx.check(
        page.items.some((s) => s.id === sub.id),
        'the retired subscription is missing from the list',
      );
      await ctx.listDeliveries(sub.id);
    },
  }),
  defineCase({
    id: 'retire.replay-deduplicated',
    area: 'retire',
    level: 'MUST',
    title: 'MUST answer a replayed retire with its original receipt and deduplicated=true, and a changed one with IDEMPOTENCY_CONFLICT',
    seed: ['s1-1'],
    async run(ctx: CaseContext) {
      const sub = await ctx.createSubscription();
      const key = ctx.key();
      const first = ctx.expectData(await postRetire(ctx, sub.id, '1', { key, reason: 'done' }), 200, 'retire', validateSubscriptionResult);
      const replay = ctx.expectData(
        await postRetire(ctx, sub.id, '1', { key, reason: 'done' }),
        200,
        'replayed retire',
        validateSubscriptionResult,
      );
      ctx.equal(replay.deduplicated, true, 'deduplicated of the replay');
      ctx.equal(replay.subscription, first.subscription, 'the replayed receipt');
      ctx.expectError(
        await postRetire(ctx, sub.id, '1', { key, reason: 'other' }),
        'IDEMPOTENCY_CONFLICT',
        'retire with the same key and another reason',
      );
    },
  }),
  defineCase({
    id: 'retire.stale-revision-conflict',
    area: 'retire',
    level: 'MUST',
    title: 'MUST refuse a retire whose expected_revision is not current (409 STATE_CONFLICT)',
    orbit: {
      anchor: 'subscription-choices',
      text: 'retire takes {expected_revision, reason}; a revision that is not current is STATE_CONFLICT',
    },
    async run(ctx: CaseContext) {
      const sub = await ctx.createSubscription();
      await expectRetireBlocked(ctx, sub.id, '2', 'expected_revision 2 at revision 1');
    },
  }),
  defineCase({
    id: 'retire.blocked-by-pending-delivery',
    area: 'retire',
    level: 'MUST',
    title: 'MUST refuse to retire while a delivery is PENDING, and retire once it is ACKED',
    seed: ['s9-3', 's4-23'],
    timeoutMs: expiryTimeout,
    async run(ctx: CaseContext) {
      // A retried EXPIRED delivery is PENDING (spec/rules.md#s4-23); while paused nothing claims it.
      const { sub, conn, expired } = await expiredDelivery(ctx);
      const paused = await ctx.configure(sub.id, false);
      await retryOnce(ctx, sub.id, expired, 'make it PENDING');
      const pending = (await ctx.deliveryDetail(sub.id, expired.id)).delivery;
      ctx.check(
        pending.state === 'PENDING',
        `setup: after the retry of a paused subscription the delivery is ${pending.state}, expected PENDING`,
      );
      await expectRetireBlocked(ctx, sub.id, paused.revision, 'a PENDING delivery');
      const resumed = await ctx.configure(sub.id, true);
      const again = await conn.next(deliveryOf(expired.id), ctx.redeliveryMs, 'the PENDING delivery to be sent after resume');
      await ctx.acked(conn, again);
      ctx.expectData(await postRetire(ctx, sub.id, resumed.revision), 200, 'retire after the ACK', validateSubscriptionResult);
    },
  }),
  defineCase({
    id: 'retire.blocked-by-open-delivery',
    area: 'retire',
    level: 'MUST',
    title: 'MUST refuse to retire while a delivery is LEASED, and retire once it is ACKED',
    seed: ['s9-3'],
    async run(ctx: CaseContext) {
      const { sub, conn, deliver } = await leased(ctx);
      await expectRetireBlocked(ctx, sub.id, '1', 'a LEASED delivery');
      await ctx.acked(conn, ctx.latest(deliver));
      ctx.expectData(await postRetire(ctx, sub.id, '1'), 200, 'retire after the ACK', validateSubscriptionResult);
      ctx.equal(
        (await ctx.deliveryDetail(sub.id, deliver.body.delivery.id)).delivery.state,
        'ACKED',
        'the delivery of a retired subscription stays readable',
      );
    },
  }),
  defineCase({
    id: 'retire.blocked-by-expired-delivery',
    area: 'retire',
    level: 'MUST',
    title: 'MUST refuse to retire while a delivery is EXPIRED, and retire once it was retried and ACKED',
    seed: ['s9-3', 's2-17'],
    timeoutMs: expiryTimeout,
    async run(ctx: CaseContext) {
      const { sub, conn, expired } = await expiredDelivery(ctx);
      await expectRetireBlocked(ctx, sub.id, '1', 'an EXPIRED delivery');
      await retryOnce(ctx, sub.id, expired, 'drain before retiring');
      const again = await conn.next(deliveryOf(expired.id), ctx.redeliveryMs, 'the retried delivery to be sent again');
      await ctx.acked(conn, again);
      ctx.expectData(await postRetire(ctx, sub.id, '1'), 200, 'retire after the retried delivery was ACKED', validateSubscriptionResult);
    },
  }),
  defineCase({
    id: 'retire.blocked-by-unmaterialized-result',
    area: 'retire',
    level: 'MUST',
    title: 'MUST refuse to retire while a matching result is not yet materialized',
    seed: ['s9-3'],
    async run(ctx: CaseContext) {
      const sub = await ctx.createSubscription();
      await ctx.publish({ type: 'task.succeeded' });
      await expectRetireBlocked(ctx, sub.id, '1', 'a matching result and no consumer');
      const { conn } = await ctx.bind(sub.id);
      await ctx.acked(conn, await ctx.deliver(conn));
      ctx.expectData(await postRetire(ctx, sub.id, '1'), 200, 'retire after consuming', validateSubscriptionResult);
    },
  }),
  defineCase({
    id: 'retire.nonmatching-results-do-not-block',
    area: 'retire',
    level: 'MUST',
    title: 'MUST NOT let results outside the type filter (or task.requeued) block retirement',
    seed: ['s9-3'],
    async run(ctx: CaseContext) {
      const sub = await ctx.createSubscription({ types: ['task.failed'] });
      await ctx.publish({ type: 'task.succeeded' });
      await ctx.publish({ type: 'task.requeued' });
      ctx.expectData(await postRetire(ctx, sub.id, '1'), 200, 'retire with only non-matching results', validateSubscriptionResult);
    },
  }),
  defineCase({
    id: 'retire.no-configure-after',
    area: 'retire',
    level: 'MUST',
    title: 'MUST refuse to configure a retired subscription (409 STATE_CONFLICT)',
    seed: ['s9-2'],
    async run(ctx: CaseContext) {
      const sub = await ctx.createSubscription();
      const retired = ctx.expectData(await postRetire(ctx, sub.id, '1'), 200, 'retire', validateSubscriptionResult);
      for (const enabled of [true, false]) {
        ctx.expectError(
          await ctx.post('full', `/v1/subscriptions/${sub.id}:configure`, {
            expected_revision: retired.subscription.revision,
            enabled,
            reason: 'x',
          }),
          'STATE_CONFLICT',
          `configure enabled=${enabled} after retire`,
        );
      }
    },
  }),
  defineCase({
    id: 'retire.no-consume-after',
    area: 'retire',
    level: 'MUST',
    title: 'MUST refuse a hello for a retired subscription (an error without session_id, then close)',
    orbit: {
      anchor: 'subscription-choices',
      text: 'a retired subscription can never be consumed again: its hello is refused and the connection closed',
    },
    async run(ctx: CaseContext) {
      const sub = await ctx.createSubscription();
      ctx.expectData(await postRetire(ctx, sub.id, '1'), 200, 'retire', validateSubscriptionResult);
      const conn = await ctx.connect();
      const reply = await conn.poll(repliesTo(conn.send('events.hello', { subscription_id: sub.id, capacity: 1 })), ctx.replyMs);
      ctx.check(
        !reply || (reply.type === 'error' && reply.session_id === undefined),
        `hello for a retired subscription answered ${reply?.$text}`,
      );
      await ctx.expectClosed(conn, ctx.replyMs, 'hello for a retired subscription');
    },
  }),
];

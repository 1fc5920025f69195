/**
 * @module
 * Retirement (brief decision 4, seed "退役与资源名额"): retire adds retired_at and
 * retired_sequence, is idempotent, is refused while work is open, keeps history readable, and ends
 * configuration and consumption for good.
 */
import { defineCase, type ConformanceCase } from '../case.ts';
import { leased, randomHex } from './helpers.ts';

export const retireCases: ConformanceCase[] = [
  defineCase({
    id: 'retire.success',
    area: 'retire',
    level: 'MUST',
    title: 'MUST retire an idle subscription (200, retired_at and retired_sequence) and keep it readable',
    clause: {
      section: 'brief 4',
      text: 'retire returns {subscription, deduplicated} with retired_at and retired_sequence; a retired subscription stays readable',
    },
    async run(ctx) {
      const sub = await ctx.createSubscription();
      const data = ctx.expectData(
        await ctx.post('full', `/v1/subscriptions/${sub.id}:retire`, { expected_revision: '1', reason: 'no longer needed' }),
        200,
        'retire',
        'validateSubscriptionResult',
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
      const page = ctx.expectData(await ctx.get('full', `/v1/subscriptions?queue_id=${ctx.queue}&limit=100`), 200, 'list');
      ctx.check(
        page.items.some((s: { id: string }) => s.id === sub.id),
        'the retired subscription is missing from the list',
      );
      ctx.expectData(await ctx.get('full', `/v1/subscriptions/${sub.id}/deliveries`), 200, 'deliveries of a retired subscription');
    },
  }),
  defineCase({
    id: 'retire.replay-deduplicated',
    area: 'retire',
    level: 'MUST',
    title: 'MUST answer a replayed retire with its original receipt and deduplicated=true, and a changed one with IDEMPOTENCY_CONFLICT',
    clause: { section: 'brief 4', text: 'retire uses an Idempotency-Key' },
    async run(ctx) {
      const sub = await ctx.createSubscription();
      const key = `cf-${randomHex()}`;
      const body = { expected_revision: '1', reason: 'done' };
      const first = ctx.expectData(await ctx.post('full', `/v1/subscriptions/${sub.id}:retire`, body, { key }), 200, 'retire');
      const replay = ctx.expectData(
        await ctx.post('full', `/v1/subscriptions/${sub.id}:retire`, body, { key }),
        200,
        'replayed retire',
        'validateSubscriptionResult',
      );
      ctx.equal(replay.deduplicated, true, 'deduplicated of the replay');
      ctx.equal(replay.subscription, first.subscription, 'the replayed receipt');
      ctx.expectError(
        await ctx.post('full', `/v1/subscriptions/${sub.id}:retire`, { ...body, reason: 'other' }, { key }),
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
    clause: { section: 'brief 4', text: 'retire carries expected_revision' },
    async run(ctx) {
      const sub = await ctx.createSubscription();
      ctx.expectError(
        await ctx.post('full', `/v1/subscriptions/${sub.id}:retire`, { expected_revision: '2', reason: 'x' }),
        'STATE_CONFLICT',
        'retire with expected_revision 2 at revision 1',
      );
      ctx.check(!(await ctx.getSubscription(sub.id)).retired_at, 'the refused retire retired the subscription');
    },
  }),
  defineCase({
    id: 'retire.blocked-by-open-delivery',
    area: 'retire',
    level: 'MUST',
    title: 'MUST refuse to retire while a delivery is unfinished, and retire once it is ACKED',
    clause: { section: 'brief 4', text: 'STATE_CONFLICT while any PENDING, LEASED or EXPIRED delivery exists' },
    async run(ctx) {
      const { sub, conn, deliver } = await leased(ctx);
      ctx.expectError(
        await ctx.post('full', `/v1/subscriptions/${sub.id}:retire`, { expected_revision: '1', reason: 'x' }),
        'STATE_CONFLICT',
        'retire with a LEASED delivery',
      );
      ctx.equal((await ctx.ack(conn, ctx.latest(deliver))).type, 'ack', 'ACK');
      ctx.expectData(
        await ctx.post('full', `/v1/subscriptions/${sub.id}:retire`, { expected_revision: '1', reason: 'x' }),
        200,
        'retire after the ACK',
      );
      ctx.equal(
        (await ctx.deliveryDetail(sub.id, deliver.body.delivery.id)).delivery.state,
        'ACKED',
        'the delivery of a retired subscription stays readable',
      );
    },
  }),
  defineCase({
    id: 'retire.blocked-by-unmaterialized-result',
    area: 'retire',
    level: 'MUST',
    title: 'MUST refuse to retire while a matching result is not yet materialized',
    clause: { section: '退役', text: 'unacknowledged, expired or not yet materialized matching results block retirement' },
    async run(ctx) {
      const sub = await ctx.createSubscription();
      await ctx.publish({ type: 'task.succeeded' });
      ctx.expectError(
        await ctx.post('full', `/v1/subscriptions/${sub.id}:retire`, { expected_revision: '1', reason: 'x' }),
        'STATE_CONFLICT',
        'retire with a matching result and no consumer',
      );
      const { conn } = await ctx.bind(sub.id);
      const deliver = await ctx.deliver(conn);
      ctx.equal((await ctx.ack(conn, deliver)).type, 'ack', 'ACK');
      ctx.expectData(
        await ctx.post('full', `/v1/subscriptions/${sub.id}:retire`, { expected_revision: '1', reason: 'x' }),
        200,
        'retire after consuming',
      );
    },
  }),
  defineCase({
    id: 'retire.nonmatching-results-do-not-block',
    area: 'retire',
    level: 'MUST',
    title: 'MUST NOT let results outside the type filter (or task.requeued) block retirement',
    clause: { section: 'brief 4', text: 'only matching results that are not yet materialized block retirement' },
    async run(ctx) {
      const sub = await ctx.createSubscription({ types: ['task.failed'] });
      await ctx.publish({ type: 'task.succeeded' });
      await ctx.publish({ type: 'task.requeued' });
      ctx.expectData(
        await ctx.post('full', `/v1/subscriptions/${sub.id}:retire`, { expected_revision: '1', reason: 'x' }),
        200,
        'retire with only non-matching results',
      );
    },
  }),
  defineCase({
    id: 'retire.no-configure-after',
    area: 'retire',
    level: 'MUST',
    title: 'MUST refuse to configure a retired subscription (409 STATE_CONFLICT)',
    clause: { section: 'brief 4', text: 'a retired subscription can never be enabled or configured again' },
    async run(ctx) {
      const sub = await ctx.createSubscription();
      const retired = ctx.expectData(
        await ctx.post('full', `/v1/subscriptions/${sub.id}:retire`, { expected_revision: '1', reason: 'x' }),
        200,
        'retire',
      );
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
    clause: { section: 'brief 4', text: 'a retired subscription can never be consumed again' },
    async run(ctx) {
      const sub = await ctx.createSubscription();
      ctx.expectData(await ctx.post('full', `/v1/subscriptions/${sub.id}:retire`, { expected_revision: '1', reason: 'x' }), 200, 'retire');
      const conn = await ctx.connect();
      const id = conn.send('events.hello', { subscription_id: sub.id, capacity: 1 });
      const reply = await conn.poll((f) => f.reply_to === id, ctx.replyMs);
      ctx.check(
        !reply || (reply.type === 'error' && reply.session_id === undefined),
        `hello for a retired subscription answered ${reply?.$text}`,
      );
      await ctx.expectClosed(conn, ctx.replyMs, 'hello for a retired subscription');
    },
  }),
];

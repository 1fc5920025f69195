/**
 * @module
 * Retention (spec/rules.md §2, §7; spec/README.md#retention-choices; only with the `retention` feature): a from_sequence below the
 * retention boundary is EVENT_HISTORY_EXPIRED (410); a subscription whose cursor fell behind the
 * boundary gets EVENT_HISTORY_EXPIRED and a close on its next claim, never a silent jump; pruning
 * never loses the event of an unacknowledged delivery.
 */
import { validateSubscriptionResult } from '@orbit/generated';
import { defineCase, type ConformanceCase } from '../case.ts';
import type { CaseContext } from '../context.ts';
import { postCreate } from './helpers.ts';

export const retentionCases: ConformanceCase[] = [
  defineCase({
    id: 'retention.from-sequence-expired',
    area: 'retention',
    level: 'MUST',
    title: 'MUST refuse a from_sequence below the retention boundary with 410 EVENT_HISTORY_EXPIRED and accept one at it',
    seed: ['s2-20'],
    features: ['retention'],
    async run(ctx: CaseContext) {
      const r1 = await ctx.publish({ type: 'task.succeeded' });
      await ctx.publish({ type: 'task.succeeded' });
      const r3 = await ctx.publish({ type: 'task.succeeded' });
      await ctx.prune(r3.sequence);
      const boundary = (BigInt(r3.sequence) - 1n).toString();
      ctx.expectError(
        await postCreate(ctx, ctx.subscriptionBody({ from_sequence: r1.sequence })),
        'EVENT_HISTORY_EXPIRED',
        `create with from_sequence ${r1.sequence} below the boundary ${boundary}`,
      );
      const sub = ctx.expectData(
        await postCreate(ctx, ctx.subscriptionBody({ from_sequence: boundary })),
        201,
        `create with from_sequence at the boundary ${boundary}`,
        validateSubscriptionResult,
      ).subscription;
      const { conn } = await ctx.bind(sub.id);
      ctx.equal((await ctx.deliver(conn)).body.event.id, r3.id, 'the first event after the boundary');
    },
  }),
  defineCase({
    id: 'retention.cursor-gap-closes',
    area: 'retention',
    level: 'MUST',
    title: 'MUST end the session of a subscription whose cursor fell behind the boundary with EVENT_HISTORY_EXPIRED, never skipping ahead',
    seed: ['s7-17'],
    features: ['retention'],
    async run(ctx: CaseContext) {
      const sub = await ctx.createSubscription({ types: ['task.failed'] });
      await ctx.publish({ type: 'task.failed' });
      await ctx.publish({ type: 'task.failed' });
      // A non-matching marker: after pruning below it, no matching result is left, so the
      // subscription can still be retired afterwards.
      const marker = await ctx.publish({ type: 'task.succeeded' });
      await ctx.prune(marker.sequence);
      const conn = await ctx.connect();
      conn.send('events.hello', { subscription_id: sub.id, capacity: 4 });
      const error = await conn.next((f) => f.type === 'error', ctx.deliverMs, 'an EVENT_HISTORY_EXPIRED error');
      ctx.expectFrameError(error, 'EVENT_HISTORY_EXPIRED', 'the claim behind the boundary');
      await ctx.expectClosed(conn, ctx.replyMs, 'after EVENT_HISTORY_EXPIRED');
      ctx.check(!conn.received.some((f) => f.type === 'event.deliver'), 'a delivery was sent although the history has a gap');
      const now = await ctx.getSubscription(sub.id);
      ctx.equal(now.cursor_sequence, sub.cursor_sequence, 'cursor_sequence (no silent jump across the gap)');
    },
  }),
  defineCase({
    id: 'retention.unacked-event-kept',
    area: 'retention',
    level: 'MUST',
    title: 'MUST keep the event of an unacknowledged delivery when results are pruned',
    orbit: { anchor: 'retention-choices', text: 'pruning never deletes the event of a delivery that is not ACKED' },
    features: ['retention'],
    async run(ctx: CaseContext) {
      const sub = await ctx.createSubscription({ types: ['task.cancelled'] });
      const { conn } = await ctx.bind(sub.id);
      const event = await ctx.publish({ type: 'task.cancelled' });
      const deliver = await ctx.deliver(conn);
      // Paused: no redelivery replaces the proof while the (possibly slow) retention command runs.
      await ctx.configure(sub.id, false);
      const marker = await ctx.publish({ type: 'task.succeeded' });
      await ctx.prune(marker.sequence);
      const detail = await ctx.deliveryDetail(sub.id, deliver.body.delivery.id);
      ctx.equal(detail.event, deliver.body.event, `the event ${event.id} after pruning`);
      ctx.equal((await ctx.ack(conn, deliver)).type, 'ack', 'ACK after pruning');
    },
  }),
];

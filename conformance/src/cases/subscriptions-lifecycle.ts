/**
 * @module
 * A subscription's life (spec/rules.md §2, §3; from_sequence as an exclusive cursor is Orbit's
 * reading; area `subscriptions`, after subscriptions.ts): configure revisions, where delivery
 * starts, usage versus revision, the 64-subscription limit and the absence of a hard delete.
 */
import { type Subscription, validateSubscriptionResult } from '@orbit/generated';
import { type ConformanceCase, defineCase } from '../case.ts';
import type { CaseContext } from '../context.ts';
import { CheckFailure } from '../errors.ts';
import type { HttpResponse } from '../http.ts';
import { randomId } from '../ids.ts';
import { postCreate, postRetire } from './helpers.ts';

export const subscriptionLifecycleCases: ConformanceCase[] = [
  defineCase({
    id: 'subscriptions.pause-resume-revision',
    area: 'subscriptions',
    level: 'MUST',
    title: 'MUST pause and resume through configure, each success incrementing the revision',
    seed: ['s3-7', 's3-10'],
    async run(ctx: CaseContext) {
      const sub = await ctx.createSubscription();
      const paused = await ctx.configure(sub.id, false);
      ctx.check(paused.enabled === false && paused.revision === '2', `after pause: ${JSON.stringify(paused)}`);
      const resumed = await ctx.configure(sub.id, true);
      ctx.check(resumed.enabled === true && resumed.revision === '3', `after resume: ${JSON.stringify(resumed)}`);
      ctx.equal(
        [resumed.name, resumed.types, resumed.max_pending, resumed.max_attempts, resumed.queue_id],
        [sub.name, sub.types, sub.max_pending, sub.max_attempts, sub.queue_id],
        'fields configure must not change',
      );
    },
  }),
  defineCase({
    id: 'subscriptions.same-value-bumps-revision',
    area: 'subscriptions',
    level: 'MUST',
    title: 'MUST treat a configure with the current enabled value as a new audited operation (revision increments)',
    seed: ['s3-15'],
    async run(ctx: CaseContext) {
      const sub = await ctx.createSubscription();
      ctx.equal((await ctx.configure(sub.id, true)).revision, '2', 'revision after enabled=true on an enabled subscription');
      ctx.equal((await ctx.configure(sub.id, true)).revision, '3', 'revision after a second enabled=true');
    },
  }),
  defineCase({
    id: 'subscriptions.stale-revision-conflict',
    area: 'subscriptions',
    level: 'MUST',
    title: 'MUST refuse a configure whose expected_revision is not current (409 STATE_CONFLICT)',
    seed: ['s3-9', 's7-14'],
    async run(ctx: CaseContext) {
      const sub = await ctx.createSubscription();
      await ctx.configure(sub.id, false);
      for (const expected_revision of ['1', '3', '0']) {
        ctx.expectError(
          await ctx.post('full', `/v1/subscriptions/${sub.id}:configure`, { expected_revision, enabled: true, reason: 'x' }),
          'STATE_CONFLICT',
          `configure with expected_revision ${expected_revision} at revision 2`,
        );
      }
      ctx.equal((await ctx.getSubscription(sub.id)).enabled, false, 'enabled after the refused configures');
    },
  }),
  defineCase({
    id: 'subscriptions.from-sequence-exclusive',
    area: 'subscriptions',
    level: 'MUST',
    title: 'MUST start delivery after from_sequence (exclusive) and set cursor_sequence to it',
    orbit: {
      anchor: 'subscription-choices',
      text: 'from_sequence is an exclusive cursor: cursor_sequence starts there and results with a larger sequence are delivered',
    },
    async run(ctx: CaseContext) {
      const first = await ctx.publish({ type: 'task.succeeded' });
      const second = await ctx.publish({ type: 'task.succeeded' });
      const sub = await ctx.createSubscription({ from_sequence: first.sequence });
      ctx.equal(sub.cursor_sequence, first.sequence, 'cursor_sequence');
      const { conn } = await ctx.bind(sub.id, 4);
      await conn.next(
        (f) => f.type === 'event.deliver' && f.body.event.id === second.id,
        ctx.deliverMs,
        `the event ${second.id} after from_sequence`,
      );
      await conn.poll((f) => f.type === 'event.deliver' && f.body.event.id === first.id, ctx.quietMs);
      const early = conn.received.find((f) => f.type === 'event.deliver' && f.body.event.id === first.id);
      ctx.check(!early, `the event at from_sequence itself (${first.id}, sequence ${first.sequence}) was delivered`);
    },
  }),
  defineCase({
    id: 'subscriptions.default-starts-at-head',
    area: 'subscriptions',
    level: 'MUST',
    title: 'MUST start a subscription without from_sequence after the committed head at creation',
    seed: ['s2-5'],
    async run(ctx: CaseContext) {
      const before = await ctx.publish({ type: 'task.succeeded' });
      const sub = await ctx.createSubscription({ from_sequence: null });
      ctx.check(
        BigInt(sub.cursor_sequence) >= BigInt(before.sequence),
        `cursor_sequence ${sub.cursor_sequence} is below the sequence ${before.sequence} committed before creation`,
      );
      const { conn } = await ctx.bind(sub.id, 4);
      const after = await ctx.publish({ type: 'task.succeeded' });
      const deliver = await ctx.deliver(conn);
      ctx.equal(deliver.body.event.id, after.id, 'the first delivered event');
      ctx.check(
        !(await conn.poll((f) => f.type === 'event.deliver' && f.body.event.id === before.id, ctx.quietMs)),
        'a result committed before creation was delivered',
      );
    },
  }),
  defineCase({
    id: 'subscriptions.usage-does-not-change-revision',
    area: 'subscriptions',
    level: 'MUST',
    title: 'MUST keep the configuration revision unchanged by materialization and ACKs while pending_count follows the backlog',
    seed: ['s2-18', 's2-17', 's2-16'],
    async run(ctx: CaseContext) {
      const sub = await ctx.createSubscription();
      const { conn } = await ctx.bind(sub.id);
      const event = await ctx.publish({ type: 'task.cancelled' });
      const deliver = await ctx.deliver(conn);
      const leasedNow = await ctx.getSubscription(sub.id);
      ctx.check(
        leasedNow.revision === '1' && leasedNow.pending_count === 1,
        `while leased: revision ${leasedNow.revision}, pending_count ${leasedNow.pending_count}; expected "1" and 1`,
      );
      ctx.check(
        BigInt(leasedNow.cursor_sequence) >= BigInt(event.sequence),
        `cursor_sequence ${leasedNow.cursor_sequence} is below the materialized sequence ${event.sequence}`,
      );
      const reply = await ctx.ack(conn, ctx.latest(deliver));
      ctx.check(reply.type === 'ack', `ACK failed: ${reply.$text}`);
      const acked = await ctx.getSubscription(sub.id);
      ctx.check(
        acked.revision === '1' && acked.pending_count === 0,
        `after ACK: revision ${acked.revision}, pending_count ${acked.pending_count}; expected "1" and 0`,
      );
    },
  }),
  defineCase({
    id: 'subscriptions.limit-64',
    area: 'subscriptions',
    level: 'MUST',
    title:
      'MUST allow 64 non-retired subscriptions per namespace (paused ones count, retired ones do not), then answer 409 SUBSCRIPTION_LIMIT',
    seed: ['s2-19', 's7-16'],
    features: ['subscription-limit'],
    timeoutMs: 120_000,
    async run(ctx: CaseContext) {
      const created: Subscription[] = [];
      let limited: HttpResponse | null = null;
      for (let i = 0; i < 65; i++) {
        const res = await postCreate(ctx, ctx.subscriptionBody());
        if (res.status === 201) {
          created.push(ctx.expectData(res, 201, `create number ${created.length + 1}`, validateSubscriptionResult).subscription);
          continue;
        }
        limited = res;
        break;
      }
      if (!limited) throw new CheckFailure('the 65th non-retired subscription of the namespace was created');
      ctx.expectError(limited, 'SUBSCRIPTION_LIMIT', `create number ${created.length + 1}`);
      ctx.equal(created.length, 64, 'subscriptions created before the limit (the namespace must hold no others)');
      await ctx.configure(created[0]!.id, false);
      ctx.expectError(await postCreate(ctx, ctx.subscriptionBody()), 'SUBSCRIPTION_LIMIT', 'create after pausing one');
      const victim = created[1]!;
      ctx.expectData(
        await postRetire(ctx, victim.id, victim.revision, { reason: 'free a slot' }),
        200,
        'retire one',
        validateSubscriptionResult,
      );
      ctx.expectData(await postCreate(ctx, ctx.subscriptionBody()), 201, 'create after retiring one', validateSubscriptionResult);
    },
  }),
  defineCase({
    id: 'subscriptions.no-hard-delete',
    area: 'subscriptions',
    level: 'MUST',
    title: 'MUST offer no hard delete and no way to change the filter, the history start or the owner',
    seed: ['s1-23'],
    async run(ctx: CaseContext) {
      const sub = await ctx.createSubscription();
      for (const method of ['DELETE', 'PUT', 'PATCH']) {
        const res = await ctx.request(
          'full',
          method,
          `/v1/subscriptions/${sub.id}`,
          method === 'DELETE' ? { key: ctx.key() } : { key: ctx.key(), body: { enabled: false } },
        );
        ctx.check(res.status >= 400, `${method} /v1/subscriptions/{id} answered ${res.status}`);
      }
      for (const action of ['delete', 'rebind', 'reset']) {
        const res = await ctx.post('full', `/v1/subscriptions/${sub.id}:${action}`, { expected_revision: '1', reason: 'x' });
        ctx.check(res.status >= 400, `POST :${action} answered ${res.status}`);
      }
      for (const [field, value] of [
        ['types', ['task.failed']],
        ['from_sequence', '0'],
        ['queue_id', ctx.queue],
        ['credential_id', randomId()],
      ] as const) {
        const res = await ctx.post('full', `/v1/subscriptions/${sub.id}:configure`, {
          expected_revision: '1',
          enabled: true,
          reason: 'x',
          [field]: value,
        });
        ctx.expectError(res, 'INVALID_ARGUMENT', `configure with "${field}"`);
      }
      const after = await ctx.getSubscription(sub.id);
      ctx.equal(after, sub, 'the subscription after the refused requests');
    },
  }),
];

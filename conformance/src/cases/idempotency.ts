/**
 * @module
 * Idempotency of management writes (spec/rules.md §1-§3; the result seam and the key format are
 * Orbit's, spec/README.md#idempotency-keys): a replay with the same key and
 * content returns the original receipt with deduplicated=true; the same key with other content is
 * IDEMPOTENCY_CONFLICT; a replayed configure never applies twice.
 */
import { validatePublishResultResponse, validateSubscriptionResult } from '@orbit/generated';
import { defineCase, type ConformanceCase } from '../case.ts';
import type { CaseContext } from '../context.ts';
import { randomId } from '../ids.ts';

export const idempotencyCases: ConformanceCase[] = [
  defineCase({
    id: 'idempotency.create-replay-deduplicated',
    area: 'idempotency',
    level: 'MUST',
    title: 'MUST answer a replayed create (same key, same body) with 200, deduplicated=true and the same subscription',
    seed: ['s2-12'],
    async run(ctx: CaseContext) {
      const key = ctx.key();
      const body = ctx.subscriptionBody({ max_pending: 7 });
      const original = await ctx.post('full', '/v1/subscriptions', body, { key });
      ctx.ownCreated('full', original);
      const created = ctx.expectData(original, 201, 'create', validateSubscriptionResult);
      ctx.equal(created.deduplicated, false, 'deduplicated of the first create');
      const replay = ctx.expectData(
        await ctx.post('full', '/v1/subscriptions', body, { key }),
        200,
        'replayed create',
        validateSubscriptionResult,
      );
      ctx.equal(replay.deduplicated, true, 'deduplicated of the replay');
      ctx.equal(replay.subscription, created.subscription, 'the subscription of the replay');
    },
  }),
  defineCase({
    id: 'idempotency.create-key-conflict',
    area: 'idempotency',
    level: 'MUST',
    title: 'MUST answer a create that reuses a key with different content with 409 IDEMPOTENCY_CONFLICT',
    seed: ['s7-15'],
    async run(ctx: CaseContext) {
      const key = ctx.key();
      const body = ctx.subscriptionBody();
      const first = await ctx.post('full', '/v1/subscriptions', body, { key });
      ctx.ownCreated('full', first);
      ctx.expectData(first, 201, 'create', validateSubscriptionResult);
      const res = await ctx.post('full', '/v1/subscriptions', { ...body, max_attempts: 3 }, { key });
      ctx.expectError(res, 'IDEMPOTENCY_CONFLICT', 'create with the same key and max_attempts added');
    },
  }),
  defineCase({
    id: 'idempotency.create-replay-original-snapshot',
    area: 'idempotency',
    level: 'MUST',
    title: 'MUST return the original snapshot on a replayed create, even after the subscription changed',
    seed: ['s3-2', 's2-12'],
    async run(ctx: CaseContext) {
      const key = ctx.key();
      const body = ctx.subscriptionBody();
      const first = await ctx.post('full', '/v1/subscriptions', body, { key });
      ctx.ownCreated('full', first);
      const created = ctx.expectData(first, 201, 'create', validateSubscriptionResult);
      await ctx.configure(created.subscription.id, false);
      const replay = ctx.expectData(
        await ctx.post('full', '/v1/subscriptions', body, { key }),
        200,
        'replayed create',
        validateSubscriptionResult,
      );
      ctx.equal(replay.subscription.revision, '1', 'revision in the replayed receipt');
      ctx.equal(replay.subscription.enabled, true, 'enabled in the replayed receipt');
      ctx.equal((await ctx.getSubscription(created.subscription.id)).enabled, false, 'enabled read with GET');
    },
  }),
  defineCase({
    id: 'idempotency.configure-replay-original-receipt',
    area: 'idempotency',
    level: 'MUST',
    title: 'MUST answer a replayed configure with its original receipt and never apply it again',
    seed: ['s3-12', 's3-2'],
    async run(ctx: CaseContext) {
      const sub = await ctx.createSubscription();
      const k1 = ctx.key();
      const pause = { expected_revision: '1', enabled: false, reason: 'maintenance' };
      const first = ctx.expectData(
        await ctx.post('full', `/v1/subscriptions/${sub.id}:configure`, pause, { key: k1 }),
        200,
        'pause',
        validateSubscriptionResult,
      );
      ctx.check(
        first.subscription.revision === '2' && first.subscription.enabled === false && first.deduplicated === false,
        `pause receipt: ${JSON.stringify(first)}`,
      );
      const replay = ctx.expectData(
        await ctx.post('full', `/v1/subscriptions/${sub.id}:configure`, pause, { key: k1 }),
        200,
        'replayed pause',
        validateSubscriptionResult,
      );
      ctx.equal(replay.deduplicated, true, 'deduplicated of the replay');
      ctx.equal(replay.subscription, first.subscription, 'the replayed receipt');
      const resume = ctx.expectData(
        await ctx.post('full', `/v1/subscriptions/${sub.id}:configure`, { expected_revision: '2', enabled: true, reason: 'done' }),
        200,
        'resume',
        validateSubscriptionResult,
      );
      ctx.equal(resume.subscription.revision, '3', 'revision after resume');
      const late = ctx.expectData(
        await ctx.post('full', `/v1/subscriptions/${sub.id}:configure`, pause, { key: k1 }),
        200,
        'pause replayed after resume',
        validateSubscriptionResult,
      );
      ctx.equal(late.subscription, first.subscription, 'the late replay receipt');
      const now = await ctx.getSubscription(sub.id);
      ctx.check(now.enabled === true && now.revision === '3', `the late replay was applied again: ${JSON.stringify(now)}`);
      const conflict = await ctx.post('full', `/v1/subscriptions/${sub.id}:configure`, { ...pause, reason: 'other' }, { key: k1 });
      ctx.expectError(conflict, 'IDEMPOTENCY_CONFLICT', 'configure with the same key and another reason');
    },
  }),
  defineCase({
    id: 'idempotency.publish-replay-deduplicated',
    area: 'idempotency',
    level: 'MUST',
    title: 'MUST answer a replayed result publication with 200, deduplicated=true and the original event',
    orbit: {
      anchor: 'result-seam',
      text: 'a publish is 201 {event} first and 200 with deduplicated=true and the original event on replay',
    },
    features: ['results-http'],
    async run(ctx: CaseContext) {
      const key = ctx.key();
      const body = { type: 'task.failed', task_id: randomId(), task_revision: '3', details: { reason: 'x' } };
      const first = ctx.expectData(
        await ctx.post('publisher', `/v1/queues/${ctx.queue}/results`, body, { key }),
        201,
        'publish',
        validatePublishResultResponse,
      );
      ctx.equal(first.deduplicated, false, 'deduplicated of the first publish');
      ctx.check(
        first.event.aggregate_id === body.task_id && first.event.aggregate_revision === '3',
        `the event does not reflect the request: ${JSON.stringify(first.event)}`,
      );
      const replay = ctx.expectData(
        await ctx.post('publisher', `/v1/queues/${ctx.queue}/results`, body, { key }),
        200,
        'replayed publish',
        validatePublishResultResponse,
      );
      ctx.equal(replay.deduplicated, true, 'deduplicated of the replay');
      ctx.equal(replay.event, first.event, 'the replayed event');
    },
  }),
  defineCase({
    id: 'idempotency.publish-key-conflict',
    area: 'idempotency',
    level: 'MUST',
    title: 'MUST answer a publication that reuses a key with different content with 409 IDEMPOTENCY_CONFLICT',
    orbit: { anchor: 'result-seam', text: 'a publish that reuses its Idempotency-Key with other content is IDEMPOTENCY_CONFLICT' },
    features: ['results-http'],
    async run(ctx: CaseContext) {
      const key = ctx.key();
      const body = { type: 'task.succeeded', task_id: randomId(), task_revision: '1' };
      ctx.expectData(
        await ctx.post('publisher', `/v1/queues/${ctx.queue}/results`, body, { key }),
        201,
        'publish',
        validatePublishResultResponse,
      );
      ctx.expectError(
        await ctx.post('publisher', `/v1/queues/${ctx.queue}/results`, { ...body, task_revision: '2' }, { key }),
        'IDEMPOTENCY_CONFLICT',
        'publish with the same key and another task_revision',
      );
    },
  }),
  defineCase({
    id: 'idempotency.key-format',
    area: 'idempotency',
    level: 'SHOULD',
    title: 'SHOULD reject an Idempotency-Key that is empty, longer than 255 or not visible ASCII',
    orbit: { anchor: 'idempotency-keys', text: 'an Idempotency-Key is 1-255 visible ASCII characters' },
    async run(ctx: CaseContext) {
      // Unique per run: a server that wrongly stored one of these keys must not turn a rerun into a replay or conflict.
      const unique = ctx.key();
      for (const [what, key] of [
        ['an empty key', ''],
        ['a 256-character key', unique.padEnd(256, 'k')],
        ['a key with a space', `${unique} b`],
      ] as const) {
        const res = await ctx.post('full', '/v1/subscriptions', ctx.subscriptionBody(), { key });
        ctx.ownCreated('full', res);
        ctx.expectError(res, 'INVALID_ARGUMENT', `create with ${what}`);
      }
    },
  }),
  defineCase({
    id: 'idempotency.key-scoped-to-credential',
    area: 'idempotency',
    level: 'SHOULD',
    title: "SHOULD scope Idempotency-Keys to the credential: another credential's key neither conflicts nor replays",
    orbit: { anchor: 'idempotency-keys', text: 'an Idempotency-Key is scoped to the credential and the operation' },
    async run(ctx: CaseContext) {
      const key = ctx.key();
      const mine = await ctx.post('full', '/v1/subscriptions', ctx.subscriptionBody(), { key });
      ctx.ownCreated('full', mine);
      const own = ctx.expectData(mine, 201, 'create as full', validateSubscriptionResult);
      const theirs = await ctx.post('sameNamespace', '/v1/subscriptions', ctx.subscriptionBody(), { key });
      ctx.ownCreated('sameNamespace', theirs);
      const data = ctx.expectData(theirs, 201, 'create as sameNamespace with the same key', validateSubscriptionResult);
      ctx.check(data.subscription.id !== own.subscription.id, "the other credential received full's subscription");
    },
  }),
];

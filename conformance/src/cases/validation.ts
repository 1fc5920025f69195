/**
 * @module
 * Field validation of the management API (spec/rules.md §2-§4): names, queue ids, type sets, limits,
 * required configure fields, reason length in Unicode characters, from_sequence beyond the head,
 * list parameters and tamper-evident cursors.
 */
import {
  validateDeliveryList,
  validatePublishResultResponse,
  validateSubscriptionList,
  validateSubscriptionResult,
} from '@orbit/generated';
import { type ConformanceCase, defineCase } from '../case.ts';
import type { CaseContext } from '../context.ts';
import { CheckFailure } from '../errors.ts';
import { randomId } from '../ids.ts';
import { expectCreateInvalid, leased, postCreate, tamper, UINT64_MAX } from './helpers.ts';

export const validationCases: ConformanceCase[] = [
  defineCase({
    id: 'validation.name-pattern',
    area: 'validation',
    level: 'MUST',
    title: 'MUST accept only names of 1-128 ASCII letters, digits, ".", "_", "-" that start with a letter or digit',
    seed: ['s2-2'],
    async run(ctx: CaseContext) {
      for (const name of ['', '-lead', '.lead', '_lead', 'a b', 'a/b', 'caf\u00e9', 'a'.repeat(129), 'tab\t', 'x\u0000']) {
        await expectCreateInvalid(ctx, ctx.subscriptionBody({ name }), `create with name ${JSON.stringify(name)}`);
      }
      const base = `9${ctx.name()}._-`;
      const longest = base + 'x'.repeat(128 - base.length);
      const created = ctx.expectData(
        await postCreate(ctx, ctx.subscriptionBody({ name: longest })),
        201,
        'create with a 128-character name',
        validateSubscriptionResult,
      );
      ctx.equal(created.subscription.name, longest, 'the stored name');
    },
  }),
  defineCase({
    id: 'validation.queue-id-format',
    area: 'validation',
    level: 'MUST',
    title: 'MUST reject a queue_id that is not 32 lower-case hex characters',
    seed: ['s2-3'],
    async run(ctx: CaseContext) {
      for (const queue_id of [ctx.queue.toUpperCase(), ctx.queue.slice(1), `${ctx.queue}0`, `${ctx.queue.slice(0, 31)}g`, 7]) {
        await expectCreateInvalid(ctx, ctx.subscriptionBody({ queue_id }), `create with queue_id ${JSON.stringify(queue_id)}`);
      }
    },
  }),
  defineCase({
    id: 'validation.types-subset',
    area: 'validation',
    level: 'MUST',
    title: 'MUST accept as types only a repeat-free subset of the four result types',
    seed: ['s2-4', 's2-9'],
    async run(ctx: CaseContext) {
      const bad: unknown[] = [
        ['task.requeued'],
        ['task.failed', 'task.failed'],
        ['TASK.FAILED'],
        ['task.unknown'],
        'task.failed',
        ['task.failed', null],
        [['task.failed']],
        null,
      ];
      for (const types of bad)
        await expectCreateInvalid(ctx, ctx.subscriptionBody({ types }), `create with types ${JSON.stringify(types)}`);
    },
  }),
  defineCase({
    id: 'validation.max-pending-range',
    area: 'validation',
    level: 'MUST',
    title: 'MUST accept max_pending 0 (meaning 100) or 1-1000 and reject anything else',
    seed: ['s2-6'],
    async run(ctx: CaseContext) {
      for (const v of [1001, -1, 1.5, '10', true])
        await expectCreateInvalid(ctx, ctx.subscriptionBody({ max_pending: v }), `create with max_pending ${JSON.stringify(v)}`);
      ctx.equal((await ctx.createSubscription({ max_pending: 0 })).max_pending, 100, 'max_pending after sending 0');
      ctx.equal((await ctx.createSubscription({ max_pending: 1000 })).max_pending, 1000, 'max_pending after sending 1000');
    },
  }),
  defineCase({
    id: 'validation.max-attempts-range',
    area: 'validation',
    level: 'MUST',
    title: 'MUST accept max_attempts 0 (meaning 20) or 1-100 and reject anything else',
    seed: ['s2-7'],
    async run(ctx: CaseContext) {
      for (const v of [101, -1, 2.5, '3'])
        await expectCreateInvalid(ctx, ctx.subscriptionBody({ max_attempts: v }), `create with max_attempts ${JSON.stringify(v)}`);
      ctx.equal((await ctx.createSubscription({ max_attempts: 0 })).max_attempts, 20, 'max_attempts after sending 0');
      ctx.equal((await ctx.createSubscription({ max_attempts: 100 })).max_attempts, 100, 'max_attempts after sending 100');
    },
  }),
  defineCase({
    id: 'validation.configure-fields-required',
    area: 'validation',
    level: 'MUST',
    title: 'MUST require expected_revision, enabled and reason on configure, each with its type',
    seed: ['s3-7'],
    async run(ctx: CaseContext) {
      const sub = await ctx.createSubscription();
      const bodies: Array<Record<string, unknown>> = [
        { enabled: false, reason: 'x' },
        { expected_revision: '1', reason: 'x' },
        { expected_revision: '1', enabled: false },
        { expected_revision: '1', enabled: 'false', reason: 'x' },
        { expected_revision: '1', enabled: null, reason: 'x' },
        { expected_revision: '1', enabled: false, reason: null },
      ];
      for (const body of bodies) {
        ctx.expectError(
          await ctx.post('full', `/v1/subscriptions/${sub.id}:configure`, body),
          'INVALID_ARGUMENT',
          `configure with ${JSON.stringify(body)}`,
        );
      }
      ctx.equal((await ctx.getSubscription(sub.id)).revision, '1', 'revision after the refused configures');
    },
  }),
  defineCase({
    id: 'validation.reason-length',
    area: 'validation',
    level: 'MUST',
    title: 'MUST accept a reason of 1-1024 Unicode characters (counting code points) and reject others',
    seed: ['s3-9'],
    async run(ctx: CaseContext) {
      const sub = await ctx.createSubscription();
      for (const [what, reason] of [
        ['an empty reason', ''],
        ['1025 ASCII characters', 'r'.repeat(1025)],
        ['1025 emoji', '\u{1F600}'.repeat(1025)],
      ] as const) {
        ctx.expectError(
          await ctx.post('full', `/v1/subscriptions/${sub.id}:configure`, { expected_revision: '1', enabled: true, reason }),
          'INVALID_ARGUMENT',
          `configure with ${what}`,
        );
      }
      // 1024 characters outside the BMP are 2048 UTF-16 code units: still 1024 Unicode characters.
      const res = await ctx.post('full', `/v1/subscriptions/${sub.id}:configure`, {
        expected_revision: '1',
        enabled: true,
        reason: '\u{1F600}'.repeat(1024),
      });
      ctx.expectData(res, 200, 'configure with a reason of 1024 emoji', validateSubscriptionResult);
      const again = await ctx.post('full', `/v1/subscriptions/${sub.id}:configure`, {
        expected_revision: '2',
        enabled: true,
        reason: 'r'.repeat(1024),
      });
      ctx.expectData(again, 200, 'configure with a reason of 1024 ASCII characters', validateSubscriptionResult);
    },
  }),
  defineCase({
    id: 'validation.from-sequence-beyond-head',
    area: 'validation',
    level: 'MUST',
    title: 'MUST reject a from_sequence beyond the committed head (400 INVALID_ARGUMENT)',
    seed: ['s2-20'],
    async run(ctx: CaseContext) {
      for (const from_sequence of [UINT64_MAX, '1000000000000000000']) {
        await expectCreateInvalid(ctx, ctx.subscriptionBody({ from_sequence }), `create with from_sequence "${from_sequence}"`);
      }
    },
  }),
  defineCase({
    id: 'validation.list-requires-queue-id',
    area: 'validation',
    level: 'MUST',
    title: 'MUST require a valid queue_id on GET /v1/subscriptions',
    seed: ['s3-3'],
    async run(ctx: CaseContext) {
      for (const query of ['', '?queue_id=', `?queue_id=${ctx.queue.toUpperCase()}`, '?limit=5']) {
        ctx.expectError(await ctx.get('full', `/v1/subscriptions${query}`), 'INVALID_ARGUMENT', `list with ${JSON.stringify(query)}`);
      }
    },
  }),
  defineCase({
    id: 'validation.list-limit-range',
    area: 'validation',
    level: 'MUST',
    title: 'MUST accept limit 1-100 as a canonical integer and reject anything else',
    seed: ['s3-3'],
    async run(ctx: CaseContext) {
      for (const limit of ['0', '101', '01', '+5', '1.0', '-1', 'abc', '']) {
        ctx.expectError(
          await ctx.get('full', `/v1/subscriptions?queue_id=${ctx.queue}&limit=${limit}`),
          'INVALID_ARGUMENT',
          `list with limit=${limit}`,
        );
      }
      for (const limit of ['1', '100'])
        ctx.expectData(
          await ctx.get('full', `/v1/subscriptions?queue_id=${ctx.queue}&limit=${limit}`),
          200,
          `list with limit=${limit}`,
          validateSubscriptionList,
        );
    },
  }),
  defineCase({
    id: 'validation.delivery-state-filter',
    area: 'validation',
    level: 'MUST',
    title: 'MUST accept only PENDING, LEASED, ACKED or EXPIRED as the state filter',
    seed: ['s4-1'],
    async run(ctx: CaseContext) {
      const sub = await ctx.createSubscription();
      for (const state of ['acked', 'DONE', '', 'ACKED,LEASED']) {
        ctx.expectError(
          await ctx.get('full', `/v1/subscriptions/${sub.id}/deliveries?state=${state}`),
          'INVALID_ARGUMENT',
          `list deliveries with state=${state}`,
        );
      }
      for (const state of ['PENDING', 'LEASED', 'ACKED', 'EXPIRED']) {
        ctx.expectData(
          await ctx.get('full', `/v1/subscriptions/${sub.id}/deliveries?state=${state}`),
          200,
          `list deliveries with state=${state}`,
          validateDeliveryList,
        );
      }
    },
  }),
  defineCase({
    id: 'validation.cursor-tampered-rejected',
    area: 'validation',
    level: 'MUST',
    title: 'MUST reject a modified or invented pagination cursor (400 INVALID_ARGUMENT)',
    orbit: {
      anchor: 'cursors',
      text: 'pagination cursors are opaque and tamper-evident: a changed or invented cursor is INVALID_ARGUMENT',
    },
    async run(ctx: CaseContext) {
      await ctx.createSubscription();
      await ctx.createSubscription();
      const page = ctx.expectData(
        await ctx.get('full', `/v1/subscriptions?queue_id=${ctx.queue}&limit=1`),
        200,
        'first page',
        validateSubscriptionList,
      );
      const cursor = page.next_cursor as string | undefined;
      if (typeof cursor !== 'string') throw new CheckFailure('the first page of two subscriptions with limit=1 has no next_cursor');
      for (const [what, bad] of [
        ['a changed character', tamper(cursor)],
        ['an appended character', `${cursor}A`],
        ['a truncated cursor', cursor.slice(0, -2)],
        ['an invented cursor', 'eyJpZCI6IjAwIn0'],
      ] as const) {
        ctx.expectError(
          await ctx.get('full', `/v1/subscriptions?queue_id=${ctx.queue}&limit=1&cursor=${encodeURIComponent(bad)}`),
          'INVALID_ARGUMENT',
          `list with ${what}`,
        );
      }
    },
  }),
  defineCase({
    id: 'validation.publish-body',
    area: 'validation',
    level: 'MUST',
    title: 'MUST validate a result publication: type, ids, canonical task_revision, object details',
    orbit: {
      anchor: 'result-seam',
      text:
        'the result seam takes {type, task_id, task_revision, details?, result?, effect_uncertain?, current_attempt_id?}, details ' +
        'an object',
    },
    features: ['results-http'],
    async run(ctx: CaseContext) {
      const ok = { type: 'task.failed', task_id: randomId(), task_revision: '2' };
      const bad: Array<[string, Record<string, unknown>]> = [
        ['an unknown type', { ...ok, type: 'task.done' }],
        ['a missing task_id', { type: 'task.failed', task_revision: '1' }],
        ['an upper-case task_id', { ...ok, task_id: randomId().toUpperCase() }],
        ['task_revision "01"', { ...ok, task_revision: '01' }],
        ['task_revision as a number', { ...ok, task_revision: 2 }],
        ['details as an array', { ...ok, details: [] }],
        ['effect_uncertain as a string', { ...ok, effect_uncertain: 'true' }],
        ['an unknown member', { ...ok, sequence: '9' }],
        ['a self-assigned event id', { ...ok, id: randomId() }],
      ];
      for (const [what, body] of bad)
        ctx.expectError(await ctx.post('publisher', `/v1/queues/${ctx.queue}/results`, body), 'INVALID_ARGUMENT', `publish with ${what}`);
      const data = ctx.expectData(
        await ctx.post('publisher', `/v1/queues/${ctx.queue}/results`, ok),
        201,
        'a valid publish',
        validatePublishResultResponse,
      );
      ctx.equal(
        [data.event.type, data.event.aggregate_id, data.event.aggregate_revision, data.event.snapshot.state],
        ['task.failed', ok.task_id, '2', 'FAILED'],
        '[type, aggregate_id, aggregate_revision, snapshot.state]',
      );
    },
  }),
  defineCase({
    id: 'validation.retry-additional-attempts-range',
    area: 'validation',
    level: 'MUST',
    title: 'MUST reject a retry whose additional_attempts is not an integer 1-100',
    seed: ['s4-23'],
    async run(ctx: CaseContext) {
      const { sub, deliver } = await leased(ctx);
      const d = deliver.body.delivery;
      for (const additional_attempts of [0, 101, 1.5, '2', -1]) {
        const res = await ctx.post('full', `/v1/subscriptions/${sub.id}/deliveries/${d.id}:retry`, {
          expected_revision: d.revision,
          reason: 'x',
          additional_attempts,
        });
        ctx.expectError(res, 'INVALID_ARGUMENT', `retry with additional_attempts ${JSON.stringify(additional_attempts)}`);
      }
      const missing = await ctx.post('full', `/v1/subscriptions/${sub.id}/deliveries/${d.id}:retry`, {
        expected_revision: d.revision,
        reason: 'x',
      });
      ctx.expectError(missing, 'INVALID_ARGUMENT', 'retry without additional_attempts');
    },
  }),
];

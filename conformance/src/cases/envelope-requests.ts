/**
 * @module
 * The rules on requests of spec/rules.md §1 (area `envelope`, after envelope.ts): unknown, repeated
 * and malformed query parameters (also generated with fast-check), no query on writes, the
 * Idempotency-Key on every write, the permission of the result seam and Orbit's /healthz.
 */
import { validateErrorEnvelope, validateHealthEnvelope } from '@orbit/generated';
import fc from 'fast-check';
import { defineCase, type ConformanceCase } from '../case.ts';
import type { CaseContext } from '../context.ts';
import { randomId } from '../ids.ts';
import { postCreate } from './helpers.ts';

export const envelopeRequestCases: ConformanceCase[] = [
  defineCase({
    id: 'envelope.unknown-query-rejected',
    area: 'envelope',
    level: 'MUST',
    title: 'MUST reject unknown query parameters (400 INVALID_ARGUMENT)',
    seed: ['s1-20', 's1-22'],
    async run(ctx: CaseContext) {
      const sub = await ctx.createSubscription();
      ctx.expectError(
        await ctx.get('full', `/v1/subscriptions/${sub.id}?fields=id`),
        'INVALID_ARGUMENT',
        'GET subscription with ?fields=id',
      );
      ctx.expectError(await ctx.get('full', `/v1/subscriptions?queue_id=${ctx.queue}&sort=asc`), 'INVALID_ARGUMENT', 'list with &sort=asc');
      ctx.expectError(
        await ctx.get('full', `/v1/subscriptions/${sub.id}/deliveries?queue_id=${ctx.queue}`),
        'INVALID_ARGUMENT',
        'list deliveries with ?queue_id',
      );
      ctx.expectError(
        await ctx.get('full', `/v1/subscriptions?queue_id=${ctx.queue}&Limit=1`),
        'INVALID_ARGUMENT',
        'list with the alias Limit',
      );
    },
  }),
  defineCase({
    id: 'envelope.repeated-query-rejected',
    area: 'envelope',
    level: 'MUST',
    title: 'MUST reject a repeated query parameter, even with the same value (400 INVALID_ARGUMENT)',
    seed: ['s1-20'],
    async run(ctx: CaseContext) {
      const sub = await ctx.createSubscription();
      ctx.expectError(
        await ctx.get('full', `/v1/subscriptions?queue_id=${ctx.queue}&queue_id=${ctx.queue}`),
        'INVALID_ARGUMENT',
        'list with queue_id twice',
      );
      ctx.expectError(
        await ctx.get('full', `/v1/subscriptions?queue_id=${ctx.queue}&limit=1&limit=1`),
        'INVALID_ARGUMENT',
        'list with limit twice',
      );
      ctx.expectError(
        await ctx.get('full', `/v1/subscriptions/${sub.id}/deliveries?state=ACKED&state=ACKED`),
        'INVALID_ARGUMENT',
        'list deliveries with state twice',
      );
    },
  }),
  defineCase({
    id: 'envelope.query-on-write-rejected',
    area: 'envelope',
    level: 'MUST',
    title: 'MUST reject query parameters on writes and change nothing',
    seed: ['s1-22'],
    async run(ctx: CaseContext) {
      const sub = await ctx.createSubscription();
      ctx.expectError(
        await postCreate(ctx, ctx.subscriptionBody(), 'full', '/v1/subscriptions?dry_run=1'),
        'INVALID_ARGUMENT',
        'create with ?dry_run=1',
      );
      const res = await ctx.post('full', `/v1/subscriptions/${sub.id}:configure?force=1`, {
        expected_revision: '1',
        enabled: false,
        reason: 'x',
      });
      ctx.expectError(res, 'INVALID_ARGUMENT', 'configure with ?force=1');
      const after = await ctx.getSubscription(sub.id);
      ctx.check(after.revision === '1' && after.enabled, `the refused configure changed the subscription: ${JSON.stringify(after)}`);
    },
  }),
  defineCase({
    id: 'envelope.idempotency-key-required',
    area: 'envelope',
    level: 'MUST',
    title: 'MUST refuse management writes without an Idempotency-Key (400 INVALID_ARGUMENT)',
    seed: ['s1-1'],
    async run(ctx: CaseContext) {
      const sub = await ctx.createSubscription();
      const body = ctx.subscriptionBody();
      const created = await ctx.request('full', 'POST', '/v1/subscriptions', { body });
      ctx.ownCreated('full', created);
      ctx.expectError(created, 'INVALID_ARGUMENT', 'create without Idempotency-Key');
      ctx.expectError(
        await ctx.request('full', 'POST', `/v1/subscriptions/${sub.id}:configure`, {
          body: { expected_revision: '1', enabled: false, reason: 'x' },
        }),
        'INVALID_ARGUMENT',
        'configure without Idempotency-Key',
      );
      ctx.expectError(
        await ctx.request('full', 'POST', `/v1/subscriptions/${sub.id}:retire`, { body: { expected_revision: '1', reason: 'x' } }),
        'INVALID_ARGUMENT',
        'retire without Idempotency-Key',
      );
      const after = await ctx.getSubscription(sub.id);
      ctx.check(after.revision === '1' && !after.retired_at, `a write without a key changed the subscription: ${JSON.stringify(after)}`);
    },
  }),
  defineCase({
    id: 'envelope.publish-requires-permission',
    area: 'envelope',
    level: 'MUST',
    title: 'MUST refuse result publication without results:publish or outside the queue scope',
    orbit: { anchor: 'result-seam', text: 'POST /v1/queues/{queue_id}/results needs results:publish on that queue' },
    features: ['results-http'],
    async run(ctx: CaseContext) {
      const body = { type: 'task.succeeded', task_id: randomId(), task_revision: '1' };
      ctx.expectError(await ctx.post('full', `/v1/queues/${ctx.queue}/results`, body), 'PERMISSION_DENIED', 'publish with events:* only');
      ctx.expectOneOf(
        await ctx.post('publisher', `/v1/queues/${randomId()}/results`, body),
        ['NOT_FOUND', 'PERMISSION_DENIED'],
        'publish to an unknown queue',
      );
      if (ctx.config.queues.otherNamespace) {
        ctx.expectOneOf(
          await ctx.post('publisher', `/v1/queues/${ctx.otherNamespaceQueue}/results`, body),
          ['NOT_FOUND', 'PERMISSION_DENIED'],
          'publish to a queue of another namespace',
        );
      }
    },
  }),
  defineCase({
    id: 'envelope.healthz',
    area: 'envelope',
    level: 'MUST',
    title: 'MUST answer GET /healthz with 200 and a HealthEnvelope without credentials, and refuse POST /healthz with an error envelope',
    orbit: {
      anchor: 'health-and-envelopes',
      text: 'GET /healthz answers 200 with the {request_id, data} envelope (HealthEnvelope) without credentials, and only to GET',
    },
    async run(ctx: CaseContext) {
      const res = await ctx.get(null, '/healthz');
      ctx.check(res.status === 200, `GET /healthz: expected HTTP 200, got ${res.status} ${res.text.slice(0, 200)}`);
      ctx.validate(validateHealthEnvelope, res.json, 'GET /healthz response');
      const post = await ctx.request('full', 'POST', '/healthz', { key: ctx.key(), body: {} });
      ctx.check(post.status >= 400 && post.status < 500, `POST /healthz: expected a 4xx refusal, got ${post.status}`);
      ctx.validate(validateErrorEnvelope, post.json, 'POST /healthz: body');
    },
  }),
  defineCase({
    id: 'envelope.prop-bad-query',
    area: 'envelope',
    level: 'MUST',
    kind: 'property',
    title: 'MUST reject every query string with an unknown, repeated (also percent-encoded) or malformed parameter',
    seed: ['s1-20', 's1-22', 's3-3'],
    timeoutMs: 60_000,
    async run(ctx: CaseContext) {
      const sub = await ctx.createSubscription();
      const list = `queue_id=${ctx.queue}`;
      const known = ['queue_id', 'limit', 'cursor', 'state'];
      const arbitrary = fc.oneof(
        // an unknown name on the list operation
        fc
          .stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,11}$/)
          .filter((n) => !known.includes(n))
          .map((n) => ({ target: `/v1/subscriptions?${list}&${n}=1`, what: `unknown "${n}"` })),
        // a case alias of a known name
        fc
          .mixedCase(fc.constantFrom('queue_id', 'limit'))
          .filter((n) => !known.includes(n))
          .map((n) => ({ target: `/v1/subscriptions?${list}&${n}=1`, what: `alias "${n}"` })),
        // queue_id repeated, the repeat percent-encoded
        fc
          .constantFrom('queue%5Fid', 'queue%5fid', '%71ueue_id', 'queue_i%64')
          .map((n) => ({ target: `/v1/subscriptions?${list}&${n}=${ctx.queue}`, what: `queue_id repeated as "${n}"` })),
        // a malformed limit
        fc
          .constantFrom('0', '101', '01', '+5', '1.0', '-1', '1e1', 'ten', '', '%31%30%31')
          .map((v) => ({ target: `/v1/subscriptions?${list}&limit=${v}`, what: `limit=${v}` })),
        // any parameter on an operation that takes none
        fc
          .stringMatching(/^[a-z_]{1,10}$/)
          .map((n) => ({ target: `/v1/subscriptions/${sub.id}?${n}=1`, what: `"${n}" on GET subscription` })),
        // an invalid state filter
        fc
          .constantFrom('acked', 'Acked', 'DONE', '', 'ACKED,LEASED')
          .map((v) => ({ target: `/v1/subscriptions/${sub.id}/deliveries?state=${v}`, what: `state=${v}` })),
      );
      await ctx.property(arbitrary, async ({ target, what }) => {
        ctx.expectError(await ctx.get('full', target), 'INVALID_ARGUMENT', `GET with ${what}`);
      });
    },
  }),
];

/**
 * @module
 * The HTTP envelope and the common rules of spec/rules.md §1: `{request_id, data|error}`, X-Request-ID,
 * Cache-Control: no-store, bearer authentication, action permissions, query-string rules and the
 * Idempotency-Key on writes.
 */
import {
  validateDeliveryListEnvelope,
  validateErrorEnvelope,
  validateHealthEnvelope,
  validateId,
  validateSubscriptionEnvelope,
  validateSubscriptionList,
  validateSubscriptionListEnvelope,
  validateSubscriptionResultEnvelope,
} from '@orbit/generated';
import fc from 'fast-check';
import { ERROR_TABLE } from '@orbit/spec/errors';
import { defineCase, type ConformanceCase } from '../case.ts';
import type { CaseContext } from '../context.ts';
import type { HttpResponse } from '../http.ts';
import { memberAt } from '../members.ts';
import { randomId } from '../ids.ts';
import { leased, postCreate } from './helpers.ts';

/** The body's request_id, if the body has one. */
function requestId(res: HttpResponse): unknown {
  return memberAt(res.json, 'request_id');
}

/** A mix of successful and failed exchanges, each labelled. */
async function sampleResponses(ctx: CaseContext): Promise<Array<[string, HttpResponse]>> {
  const sub = await ctx.createSubscription();
  return [
    ['GET subscription (200)', await ctx.get('full', `/v1/subscriptions/${sub.id}`)],
    ['list (200)', await ctx.get('full', `/v1/subscriptions?queue_id=${ctx.queue}&limit=1`)],
    ['create (201)', await postCreate(ctx, ctx.subscriptionBody())],
    [
      'configure (200)',
      await ctx.post('full', `/v1/subscriptions/${sub.id}:configure`, {
        expected_revision: sub.revision,
        enabled: true,
        reason: 'envelope',
      }),
    ],
    ['no token (401)', await ctx.get(null, `/v1/subscriptions/${sub.id}`)],
    ['bad body (400)', await ctx.post('full', '/v1/subscriptions', '{')],
    ['unknown id (404)', await ctx.get('full', `/v1/subscriptions/${randomId()}`)],
    [
      'stale revision (409)',
      await ctx.post('full', `/v1/subscriptions/${sub.id}:configure`, { expected_revision: '1', enabled: true, reason: 'envelope' }),
    ],
  ];
}

export const envelopeCases: ConformanceCase[] = [
  defineCase({
    id: 'envelope.cache-control-no-store',
    area: 'envelope',
    level: 'MUST',
    title: 'MUST send Cache-Control: no-store on every response, success or error',
    seed: ['s1-18'],
    async run(ctx: CaseContext) {
      for (const [what, res] of await sampleResponses(ctx)) {
        const directives = (res.header('cache-control') ?? '').split(',').map((d) => d.trim().toLowerCase());
        ctx.check(
          directives.includes('no-store'),
          `${what}: Cache-Control is ${JSON.stringify(res.header('cache-control') ?? null)}, expected no-store`,
        );
      }
    },
  }),
  defineCase({
    id: 'envelope.request-id-header',
    area: 'envelope',
    level: 'MUST',
    title: 'MUST send X-Request-ID equal to the body request_id (a 32-character lower-case hex id)',
    seed: ['s1-18'],
    async run(ctx: CaseContext) {
      for (const [what, res] of await sampleResponses(ctx)) {
        const header = res.header('x-request-id');
        const body = requestId(res);
        ctx.check(typeof header === 'string' && validateId(header), `${what}: X-Request-ID is ${JSON.stringify(header ?? null)}`);
        ctx.check(header === body, `${what}: X-Request-ID ${header} differs from request_id ${JSON.stringify(body)}`);
      }
    },
  }),
  defineCase({
    id: 'envelope.success-shape',
    area: 'envelope',
    level: 'MUST',
    title: 'MUST answer successes with exactly {request_id, data}, data matching the operation schema',
    seed: ['s1-18'],
    async run(ctx: CaseContext) {
      const created = await postCreate(ctx, ctx.subscriptionBody());
      ctx.check(created.status === 201, `create: expected 201, got ${created.status} ${created.text.slice(0, 200)}`);
      const envelope = created.json;
      ctx.validate(validateSubscriptionResultEnvelope, envelope, 'create response');
      const id = envelope.data.subscription.id;
      ctx.validate(validateSubscriptionEnvelope, (await ctx.get('full', `/v1/subscriptions/${id}`)).json, 'GET subscription response');
      ctx.validate(
        validateSubscriptionListEnvelope,
        (await ctx.get('full', `/v1/subscriptions?queue_id=${ctx.queue}`)).json,
        'list response',
      );
      ctx.validate(
        validateDeliveryListEnvelope,
        (await ctx.get('full', `/v1/subscriptions/${id}/deliveries`)).json,
        'list deliveries response',
      );
    },
  }),
  defineCase({
    id: 'envelope.error-shape',
    area: 'envelope',
    level: 'MUST',
    title: "MUST answer errors with exactly {request_id, error: {code, message}} and the code's HTTP status",
    seed: ['s1-18', 's7-10', 's7-11', 's7-13', 's7-14'],
    async run(ctx: CaseContext) {
      for (const [what, res] of await sampleResponses(ctx)) {
        if (res.status < 400) continue;
        const body = res.json;
        ctx.validate(validateErrorEnvelope, body, `${what}: body`);
        const code = body.error.code;
        ctx.check(
          ERROR_TABLE[code].status === res.status,
          `${what}: code ${code} travels with HTTP ${ERROR_TABLE[code].status}, got ${res.status}`,
        );
        ctx.check(!('data' in body), `${what}: an error envelope must not carry data`);
      }
    },
  }),
  defineCase({
    id: 'envelope.request-ids-unique',
    area: 'envelope',
    level: 'SHOULD',
    title: 'SHOULD give every response its own request_id',
    seed: ['s1-18'],
    async run(ctx: CaseContext) {
      const ids = new Set<string>();
      for (let i = 0; i < 5; i++) ids.add(String(requestId(await ctx.get('full', `/v1/subscriptions?queue_id=${ctx.queue}&limit=1`))));
      ctx.check(ids.size === 5, `5 requests gave ${ids.size} distinct request_id values`);
    },
  }),
  defineCase({
    id: 'envelope.unauthenticated-missing-token',
    area: 'envelope',
    level: 'MUST',
    title: 'MUST answer a request without Authorization: Bearer with 401 UNAUTHENTICATED',
    seed: ['s1-1', 's7-11'],
    async run(ctx: CaseContext) {
      ctx.expectError(await ctx.get(null, `/v1/subscriptions?queue_id=${ctx.queue}`), 'UNAUTHENTICATED', 'list without a token');
      ctx.expectError(await ctx.post(null, '/v1/subscriptions', ctx.subscriptionBody()), 'UNAUTHENTICATED', 'create without a token');
      const basic = await ctx.get(null, `/v1/subscriptions?queue_id=${ctx.queue}`, {
        headers: { authorization: `Basic ${Buffer.from(`x:${ctx.token('full')}`).toString('base64')}` },
      });
      ctx.expectError(basic, 'UNAUTHENTICATED', 'list with Basic authentication');
    },
  }),
  defineCase({
    id: 'envelope.bearer-scheme-case-insensitive',
    area: 'envelope',
    level: 'SHOULD',
    title: 'SHOULD accept the Bearer authentication scheme in any letter case (RFC 7235)',
    seed: ['s1-1'],
    async run(ctx: CaseContext) {
      for (const scheme of ['bearer', 'BEARER']) {
        const res = await ctx.get(null, `/v1/subscriptions?queue_id=${ctx.queue}&limit=1`, {
          headers: { authorization: `${scheme} ${ctx.token('full')}` },
        });
        ctx.expectData(res, 200, `list with "Authorization: ${scheme} <token>"`, validateSubscriptionList);
      }
    },
  }),
  defineCase({
    id: 'envelope.unauthenticated-bad-token',
    area: 'envelope',
    level: 'MUST',
    title: 'MUST answer an unknown bearer token with 401 UNAUTHENTICATED',
    seed: ['s7-11'],
    async run(ctx: CaseContext) {
      for (const token of ['not-a-token', `${ctx.token('full')}x`, ctx.token('full').slice(0, -1)]) {
        const res = await ctx.get(null, `/v1/subscriptions?queue_id=${ctx.queue}`, { headers: { authorization: `Bearer ${token}` } });
        ctx.expectError(res, 'UNAUTHENTICATED', 'list with a wrong token');
      }
    },
  }),
  defineCase({
    id: 'envelope.token-in-url-rejected',
    area: 'envelope',
    level: 'MUST',
    title: 'MUST NOT accept a credential in the URL',
    seed: ['s1-3'],
    async run(ctx: CaseContext) {
      const sub = await ctx.createSubscription();
      for (const param of ['access_token', 'token', 'authorization']) {
        const res = await ctx.get(null, `/v1/subscriptions/${sub.id}?${param}=${encodeURIComponent(ctx.token('full'))}`);
        ctx.expectOneOf(res, ['INVALID_ARGUMENT', 'UNAUTHENTICATED'], `GET subscription with ?${param}=<token> and no header`);
      }
    },
  }),
  defineCase({
    id: 'envelope.permission-denied-no-events',
    area: 'envelope',
    level: 'MUST',
    title: 'MUST refuse every events operation to a credential without events:* actions (403 PERMISSION_DENIED)',
    seed: ['s1-9', 's1-10', 's1-11', 's1-12', 's7-12'],
    async run(ctx: CaseContext) {
      const sub = await ctx.createSubscription();
      ctx.expectError(await ctx.post('noEvents', '/v1/subscriptions', ctx.subscriptionBody()), 'PERMISSION_DENIED', 'create');
      ctx.expectError(await ctx.get('noEvents', `/v1/subscriptions?queue_id=${ctx.queue}`), 'PERMISSION_DENIED', 'list');
      ctx.expectError(await ctx.get('noEvents', `/v1/subscriptions/${sub.id}`), 'PERMISSION_DENIED', 'GET subscription');
      ctx.expectError(
        await ctx.post('noEvents', `/v1/subscriptions/${sub.id}:configure`, { expected_revision: '1', enabled: false, reason: 'x' }),
        'PERMISSION_DENIED',
        'configure',
      );
    },
  }),
  defineCase({
    id: 'envelope.read-only-cannot-manage',
    area: 'envelope',
    level: 'MUST',
    title: 'MUST refuse writes to a credential that holds only events:read (403 PERMISSION_DENIED)',
    seed: ['s1-9', 's1-10'],
    async run(ctx: CaseContext) {
      ctx.expectData(
        await ctx.get('readOnly', `/v1/subscriptions?queue_id=${ctx.queue}&limit=1`),
        200,
        'list as readOnly',
        validateSubscriptionList,
      );
      ctx.expectError(await ctx.post('readOnly', '/v1/subscriptions', ctx.subscriptionBody()), 'PERMISSION_DENIED', 'create as readOnly');
    },
  }),
  defineCase({
    id: 'envelope.consume-only-cannot-read',
    area: 'envelope',
    level: 'MUST',
    title: 'MUST refuse reads and writes to a credential that holds only events:consume',
    seed: ['s5-4', 's1-10', 's1-14'],
    async run(ctx: CaseContext) {
      const sub = await ctx.createSubscription();
      ctx.expectError(await ctx.get('consumeOnly', `/v1/subscriptions?queue_id=${ctx.queue}`), 'PERMISSION_DENIED', 'list as consumeOnly');
      ctx.expectError(
        await ctx.get('consumeOnly', `/v1/subscriptions/${sub.id}/deliveries`),
        'PERMISSION_DENIED',
        'list deliveries as consumeOnly',
      );
      ctx.expectError(
        await ctx.post('consumeOnly', '/v1/subscriptions', ctx.subscriptionBody()),
        'PERMISSION_DENIED',
        'create as consumeOnly',
      );
    },
  }),
  defineCase({
    id: 'envelope.delivery-permissions',
    area: 'envelope',
    level: 'MUST',
    title: 'MUST refuse the delivery detail to a credential without events:read and its retry to one without events:manage (403)',
    seed: ['s1-15', 's1-16', 's5-4'],
    async run(ctx: CaseContext) {
      const { sub, deliver } = await leased(ctx);
      const d = deliver.body.delivery;
      const detail = `/v1/subscriptions/${sub.id}/deliveries/${d.id}`;
      const retry = { expected_revision: d.revision, reason: 'x', additional_attempts: 1 };
      ctx.expectError(await ctx.get('consumeOnly', detail), 'PERMISSION_DENIED', 'GET delivery as consumeOnly');
      ctx.expectError(await ctx.get('noEvents', detail), 'PERMISSION_DENIED', 'GET delivery as noEvents');
      ctx.expectError(await ctx.post('readOnly', `${detail}:retry`, retry), 'PERMISSION_DENIED', 'retry as readOnly');
      ctx.expectError(await ctx.post('consumeOnly', `${detail}:retry`, retry), 'PERMISSION_DENIED', 'retry as consumeOnly');
      ctx.equal((await ctx.deliveryDetail(sub.id, d.id)).delivery.revision, d.revision, 'the delivery revision after the refused retries');
    },
  }),
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

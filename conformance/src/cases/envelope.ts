/**
 * @module
 * The HTTP envelope and the common rules of spec/rules.md §1: `{request_id, data|error}`,
 * X-Request-ID, Cache-Control: no-store, bearer authentication and action permissions. The rules
 * on requests (query strings, the Idempotency-Key, the result seam, /healthz) are in
 * envelope-requests.ts.
 */
import {
  validateDeliveryListEnvelope,
  validateErrorEnvelope,
  validateId,
  validateSubscriptionEnvelope,
  validateSubscriptionList,
  validateSubscriptionListEnvelope,
  validateSubscriptionResultEnvelope,
} from '@orbit/generated';
import { ERROR_TABLE } from '@orbit/spec/errors';
import { defineCase, type ConformanceCase } from '../case.ts';
import type { CaseContext } from '../context.ts';
import type { HttpResponse } from '../http.ts';
import { randomId } from '../ids.ts';
import { memberAt } from '../members.ts';
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
];

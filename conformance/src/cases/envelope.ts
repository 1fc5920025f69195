/**
 * @module
 * The HTTP envelope and the common rules of seed §1: `{request_id, data|error}`, X-Request-ID,
 * Cache-Control: no-store, bearer authentication, action permissions, query-string rules and the
 * Idempotency-Key on writes.
 */
import fc from 'fast-check';
import { ERROR_TABLE, type ErrorCode } from '@orbit/spec/errors';
import { defineCase, type ConformanceCase } from '../case.ts';
import type { CaseContext } from '../context.ts';
import type { HttpResponse } from '../http.ts';
import { postCreate, randomHex } from './helpers.ts';

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
    ['unknown id (404)', await ctx.get('full', `/v1/subscriptions/${randomHex()}`)],
    [
      'stale revision (409)',
      await ctx.post('full', `/v1/subscriptions/${sub.id}:configure`, { expected_revision: '1', enabled: true, reason: 'envelope' }),
    ],
    ['health (200)', await ctx.get(null, '/healthz')],
  ];
}

export const envelopeCases: ConformanceCase[] = [
  defineCase({
    id: 'envelope.cache-control-no-store',
    area: 'envelope',
    level: 'MUST',
    title: 'MUST send Cache-Control: no-store on every response, success or error',
    clause: { section: '§1', text: 'responses carry X-Request-ID and Cache-Control: no-store' },
    async run(ctx) {
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
    clause: { section: '§1', text: 'a uniform request_id envelope; responses carry X-Request-ID' },
    async run(ctx) {
      for (const [what, res] of await sampleResponses(ctx)) {
        const header = res.header('x-request-id');
        const body = res.json?.request_id;
        ctx.check(
          typeof header === 'string' && /^[0-9a-f]{32}$/.test(header),
          `${what}: X-Request-ID is ${JSON.stringify(header ?? null)}`,
        );
        ctx.check(header === body, `${what}: X-Request-ID ${header} differs from request_id ${JSON.stringify(body)}`);
      }
    },
  }),
  defineCase({
    id: 'envelope.success-shape',
    area: 'envelope',
    level: 'MUST',
    title: 'MUST answer successes with exactly {request_id, data}, data matching the operation schema',
    clause: { section: '§1', text: 'HTTP uses a uniform request_id + data/error envelope' },
    async run(ctx) {
      const created = await postCreate(ctx, ctx.subscriptionBody());
      ctx.check(created.status === 201, `create: expected 201, got ${created.status} ${created.text.slice(0, 200)}`);
      ctx.validate('validateSubscriptionResultEnvelope', created.json, 'create response');
      const id = created.json.data.subscription.id;
      ctx.validate('validateSubscriptionEnvelope', (await ctx.get('full', `/v1/subscriptions/${id}`)).json, 'GET subscription response');
      ctx.validate(
        'validateSubscriptionListEnvelope',
        (await ctx.get('full', `/v1/subscriptions?queue_id=${ctx.queue}`)).json,
        'list response',
      );
      ctx.validate(
        'validateDeliveryListEnvelope',
        (await ctx.get('full', `/v1/subscriptions/${id}/deliveries`)).json,
        'list deliveries response',
      );
      ctx.validate('validateHealthEnvelope', (await ctx.get(null, '/healthz')).json, 'GET /healthz response');
    },
  }),
  defineCase({
    id: 'envelope.error-shape',
    area: 'envelope',
    level: 'MUST',
    title: "MUST answer errors with exactly {request_id, error: {code, message}} and the code's HTTP status",
    clause: { section: '§7', text: 'error codes and their HTTP statuses' },
    async run(ctx) {
      for (const [what, res] of await sampleResponses(ctx)) {
        if (res.status < 400) continue;
        ctx.validate('validateErrorEnvelope', res.json, `${what}: body`);
        const code = res.json.error.code as ErrorCode;
        ctx.check(
          ERROR_TABLE[code].status === res.status,
          `${what}: code ${code} travels with HTTP ${ERROR_TABLE[code].status}, got ${res.status}`,
        );
        ctx.check(res.json.data === undefined, `${what}: an error envelope must not carry data`);
      }
    },
  }),
  defineCase({
    id: 'envelope.request-ids-unique',
    area: 'envelope',
    level: 'SHOULD',
    title: 'SHOULD give every response its own request_id',
    clause: { section: '§1', text: 'a uniform request_id envelope' },
    async run(ctx) {
      const ids = new Set<string>();
      for (let i = 0; i < 5; i++) ids.add((await ctx.get('full', `/v1/subscriptions?queue_id=${ctx.queue}&limit=1`)).json?.request_id);
      ctx.check(ids.size === 5, `5 requests gave ${ids.size} distinct request_id values`);
    },
  }),
  defineCase({
    id: 'envelope.unauthenticated-missing-token',
    area: 'envelope',
    level: 'MUST',
    title: 'MUST answer a request without Authorization: Bearer with 401 UNAUTHENTICATED',
    clause: { section: '§1', text: 'every HTTP request uses the Authorization: Bearer header' },
    async run(ctx) {
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
    clause: { section: '§1', text: 'requests use the Authorization: Bearer header; the auth-scheme token is case-insensitive in HTTP' },
    async run(ctx) {
      for (const scheme of ['bearer', 'BEARER']) {
        const res = await ctx.get(null, `/v1/subscriptions?queue_id=${ctx.queue}&limit=1`, {
          headers: { authorization: `${scheme} ${ctx.token('full')}` },
        });
        ctx.expectData(res, 200, `list with "Authorization: ${scheme} <token>"`);
      }
    },
  }),
  defineCase({
    id: 'envelope.unauthenticated-bad-token',
    area: 'envelope',
    level: 'MUST',
    title: 'MUST answer an unknown bearer token with 401 UNAUTHENTICATED',
    clause: { section: '§7', text: 'UNAUTHENTICATED is 401' },
    async run(ctx) {
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
    clause: { section: '§1', text: 'credentials and delivery secrets are never put in the URL' },
    async run(ctx) {
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
    clause: { section: '§1', text: 'without --event-access a credential holds no events action' },
    async run(ctx) {
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
    clause: { section: '§1', text: 'POST /v1/subscriptions needs events:manage' },
    async run(ctx) {
      ctx.expectData(
        await ctx.get('readOnly', `/v1/subscriptions?queue_id=${ctx.queue}&limit=1`),
        200,
        'list as readOnly',
        'validateSubscriptionList',
      );
      ctx.expectError(await ctx.post('readOnly', '/v1/subscriptions', ctx.subscriptionBody()), 'PERMISSION_DENIED', 'create as readOnly');
    },
  }),
  defineCase({
    id: 'envelope.consume-only-cannot-read',
    area: 'envelope',
    level: 'MUST',
    title: 'MUST refuse reads and writes to a credential that holds only events:consume',
    clause: { section: '§5', text: 'the consume permission does not imply reading the history' },
    async run(ctx) {
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
    id: 'envelope.unknown-query-rejected',
    area: 'envelope',
    level: 'MUST',
    title: 'MUST reject unknown query parameters (400 INVALID_ARGUMENT)',
    clause: { section: '§1', text: 'unknown query parameters are rejected; only the two list operations take any' },
    async run(ctx) {
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
    clause: { section: '§1', text: 'repeated query parameters are rejected' },
    async run(ctx) {
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
    clause: { section: '§1', text: 'only the two list operations accept query parameters' },
    async run(ctx) {
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
    clause: { section: '§1', text: 'management writes need a stable Idempotency-Key' },
    async run(ctx) {
      const sub = await ctx.createSubscription();
      const body = ctx.subscriptionBody();
      const created = await ctx.request('full', 'POST', '/v1/subscriptions', { body });
      if (created.status === 201) ctx.own('full', created.json.data.subscription.id);
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
    clause: { section: 'brief 2', text: 'POST /v1/queues/{queue_id}/results needs results:publish' },
    features: ['results-http'],
    async run(ctx) {
      const body = { type: 'task.succeeded', task_id: randomHex(), task_revision: '1' };
      ctx.expectError(await ctx.post('full', `/v1/queues/${ctx.queue}/results`, body), 'PERMISSION_DENIED', 'publish with events:* only');
      ctx.expectOneOf(
        await ctx.post('publisher', `/v1/queues/${randomHex()}/results`, body),
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
    title: 'MUST answer GET /healthz with 200 without credentials',
    clause: { section: 'brief', text: 'GET /healthz answers 200 once the server accepts requests' },
    async run(ctx) {
      ctx.expectData(await ctx.get(null, '/healthz'), 200, 'GET /healthz');
    },
  }),
  defineCase({
    id: 'envelope.prop-bad-query',
    area: 'envelope',
    level: 'MUST',
    kind: 'property',
    title: 'MUST reject every query string with an unknown, repeated (also percent-encoded) or malformed parameter',
    clause: { section: '§1', text: 'unknown or repeated query parameters are rejected' },
    timeoutMs: 60_000,
    async run(ctx) {
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

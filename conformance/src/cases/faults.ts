/**
 * @module
 * Faults (spec/rules.md §6, §7): unknown routes and ids, connections that drop (gracefully or not)
 * with a lease held, at-least-once redelivery, truncated requests, the server-side request
 * timeout, and error messages that leak no internals.
 */
import { validateErrorEnvelope, validateSubscriptionList } from '@orbit/generated';
import { connect } from 'node:net';
import { defineCase, type ConformanceCase } from '../case.ts';
import type { CaseContext } from '../context.ts';
import { basePath } from '../http.ts';
import { memberAt } from '../members.ts';
import { deliveryOf } from '../frames.ts';
import { randomId } from '../ids.ts';
import { expiryTimeout, leased, listAll, UINT64_MAX } from './helpers.ts';

/** Whether `text` holds a whole HTTP response (headers and a Content-Length body). */
function completeResponse(text: string): boolean {
  const end = text.indexOf('\r\n\r\n');
  if (end < 0) return false;
  const length = /\r\ncontent-length: *(\d+)/i.exec(text.slice(0, end + 2));
  return length !== null && Buffer.byteLength(text.slice(end + 4)) >= Number(length[1]);
}

/** Sends raw bytes over TCP; resolves with what came back before `waitMs` or the server's close. */
function rawExchange(
  ctx: CaseContext,
  bytes: string,
  options: { destroyAfterSend?: boolean; waitMs: number },
): Promise<{ response: string; closedByServer: boolean }> {
  const url = new URL(ctx.config.baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: url.hostname, port: Number(url.port || 80) });
    let response = '';
    let done = false;
    const finish = (closedByServer: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      ctx.log.note(
        `raw TCP: sent ${JSON.stringify(bytes.slice(0, 300))}; received ` +
          `${JSON.stringify(response.slice(0, 600))}${closedByServer ? '; closed by the server' : ''}`,
      );
      resolve({ response, closedByServer });
    };
    const timer = setTimeout(() => finish(false), options.waitMs);
    socket.on('data', (c: Buffer) => {
      response += c.toString('utf8');
      // A whole response is the outcome: stop waiting for the rest of the time.
      if (completeResponse(response)) finish(false);
    });
    socket.on('end', () => finish(true));
    socket.on('close', () => finish(true));
    socket.on('error', (e) => (done ? undefined : reject(e)));
    socket.write(bytes, () => {
      if (options.destroyAfterSend) finish(false);
    });
  });
}

/**
 * A create whose body never completes: what came back within the request timeout plus 4 s, which
 * must be a 503 (a failure of the case itself, or of its setup when the 503 is not what it checks).
 */
async function stalledRequest(ctx: CaseContext, prefix: '' | 'setup: ' = ''): Promise<string> {
  const host = new URL(ctx.config.baseUrl).host;
  const head =
    `POST ${basePath(ctx.config.baseUrl)}/v1/subscriptions HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${ctx.token('full')}\r\n` +
    `Content-Type: application/json\r\nIdempotency-Key: ${ctx.key()}\r\nContent-Length: 100\r\n\r\n{"name":`;
  const waitMs = ctx.timing.requestTimeoutMs + 4_000;
  const { response } = await rawExchange(ctx, head, { waitMs });
  ctx.check(
    /^HTTP\/1\.1 503 /.test(response),
    `${prefix}expected 503 within ${waitMs} ms (timing.requestTimeoutMs + 4 s), got ${JSON.stringify(response.slice(0, 200)) || 'nothing'}`,
  );
  return response;
}

export const faultCases: ConformanceCase[] = [
  defineCase({
    id: 'faults.unknown-route-envelope',
    area: 'faults',
    level: 'MUST',
    title: 'MUST answer unknown routes and methods with an error envelope',
    seed: ['s1-18'],
    async run(ctx: CaseContext) {
      ctx.expectError(await ctx.get('full', '/v1/nothing-here'), 'NOT_FOUND', 'GET /v1/nothing-here');
      for (const [method, target] of [
        ['PUT', '/v1/subscriptions'],
        ['DELETE', '/v1/subscriptions'],
      ] as const) {
        const res = await ctx.request('full', method, target, { key: ctx.key(), body: {} });
        ctx.check(res.status >= 400 && res.status < 500, `${method} ${target}: expected a 4xx refusal, got ${res.status}`);
        ctx.validate(validateErrorEnvelope, res.json, `${method} ${target}: body`);
      }
    },
  }),
  defineCase({
    id: 'faults.unknown-id-not-found',
    area: 'faults',
    level: 'MUST',
    title: 'MUST answer 404 NOT_FOUND for unknown subscription and delivery ids',
    seed: ['s7-13'],
    async run(ctx: CaseContext) {
      const sub = await ctx.createSubscription();
      ctx.expectError(await ctx.get('full', `/v1/subscriptions/${randomId()}`), 'NOT_FOUND', 'GET an unknown subscription');
      ctx.expectError(
        await ctx.get('full', `/v1/subscriptions/${randomId()}/deliveries`),
        'NOT_FOUND',
        'list deliveries of an unknown subscription',
      );
      ctx.expectError(
        await ctx.post('full', `/v1/subscriptions/${randomId()}:configure`, { expected_revision: '1', enabled: false, reason: 'x' }),
        'NOT_FOUND',
        'configure an unknown subscription',
      );
      ctx.expectError(
        await ctx.get('full', `/v1/subscriptions/${sub.id}/deliveries/${randomId()}`),
        'NOT_FOUND',
        'GET an unknown delivery',
      );
      ctx.expectError(
        await ctx.post('full', `/v1/subscriptions/${sub.id}/deliveries/${randomId()}:retry`, {
          expected_revision: '1',
          reason: 'x',
          additional_attempts: 1,
        }),
        'NOT_FOUND',
        'retry an unknown delivery',
      );
    },
  }),
  defineCase({
    id: 'faults.malformed-id-rejected',
    area: 'faults',
    level: 'MUST',
    title: 'MUST refuse a malformed id in the path (404 NOT_FOUND or 400 INVALID_ARGUMENT), never 5xx',
    seed: ['s7-13', 's4-6'],
    async run(ctx: CaseContext) {
      for (const id of ['ZZZ', randomId().toUpperCase(), `${randomId()}0`, '%00', '..%2F..%2Fhealthz']) {
        ctx.expectOneOf(await ctx.get('full', `/v1/subscriptions/${id}`), ['NOT_FOUND', 'INVALID_ARGUMENT'], `GET /v1/subscriptions/${id}`);
      }
    },
  }),
  defineCase({
    id: 'faults.abrupt-disconnect-keeps-lease',
    area: 'faults',
    level: 'MUST',
    title: 'MUST keep the lease of a connection that drops without a close frame; its proof acknowledges from a new connection',
    seed: ['s7-22', 's5-17'],
    async run(ctx: CaseContext) {
      const { sub, conn, deliver } = await leased(ctx);
      conn.destroy();
      const { conn: next } = await ctx.bind(sub.id);
      const reply = await ctx.ack(next, ctx.latest(deliver));
      ctx.check(reply.type === 'ack' && reply.body.deduplicated === false, `ACK after the drop: ${reply.$text}`);
    },
  }),
  defineCase({
    id: 'faults.redelivery-after-disconnect',
    area: 'faults',
    level: 'MUST',
    title: 'MUST send an unacknowledged delivery again after its lease runs out (at least once), to a new connection',
    seed: ['s6-18', 's7-23'],
    timeoutMs: expiryTimeout,
    async run(ctx: CaseContext) {
      const { sub, conn, deliver } = await leased(ctx);
      await conn.close();
      const { conn: next } = await ctx.bind(sub.id);
      ctx.requireLeaseWithin(deliver, ctx.redeliveryMs);
      const again = await next.next(deliveryOf(deliver.body.delivery.id), ctx.redeliveryMs, 'the unacknowledged delivery again');
      ctx.equal(
        [again.body.event.id, again.body.delivery.lease_epoch],
        [deliver.body.event.id, String(BigInt(deliver.body.delivery.lease_epoch) + 1n)],
        '[event.id, lease_epoch] of the redelivery',
      );
      ctx.equal((await ctx.ack(next, again)).type, 'ack', 'ACK of the redelivery');
    },
  }),
  defineCase({
    id: 'faults.truncated-body-survives',
    area: 'faults',
    level: 'SHOULD',
    title: 'SHOULD create nothing from a request whose body is cut off, and keep serving',
    orbit: { anchor: 'error-choices', text: 'a request that fails creates or changes nothing, and the server keeps serving' },
    async run(ctx: CaseContext) {
      const name = ctx.name();
      const body = JSON.stringify({ name, queue_id: ctx.queue });
      const head =
        `POST ${basePath(ctx.config.baseUrl)}/v1/subscriptions HTTP/1.1\r\nHost: ${new URL(ctx.config.baseUrl).host}\r\n` +
        `Authorization: Bearer ${ctx.token('full')}\r\nContent-Type: application/json\r\nIdempotency-Key: ${ctx.key()}\r\n` +
        `Content-Length: ${body.length + 40}\r\n\r\n`;
      await rawExchange(ctx, head + body, { destroyAfterSend: true, waitMs: 1_000 });
      const alive = await ctx.get(null, '/healthz');
      ctx.check(alive.status === 200, `GET /healthz after the cut request answered ${alive.status}`);
      const listed = await listAll(ctx, 'full', '/v1/subscriptions', `queue_id=${ctx.queue}`, validateSubscriptionList, 3);
      const made = listed.find((s) => s.name === name);
      if (made) ctx.own('full', made.id);
      ctx.check(!made, 'a subscription was created from a truncated body');
    },
  }),
  defineCase({
    id: 'faults.request-timeout',
    area: 'faults',
    level: 'SHOULD',
    title: 'SHOULD answer a management request that does not complete within the request timeout with 503 UNAVAILABLE',
    seed: ['s1-19', 's7-21'],
    features: ['request-timeout'],
    timeoutMs: (t) => 20_000 + 2 * t.requestTimeoutMs,
    async run(ctx: CaseContext) {
      const response = await stalledRequest(ctx);
      ctx.check(response.includes('"UNAVAILABLE"'), `the 503 does not carry UNAVAILABLE: ${response.slice(0, 400)}`);
    },
  }),
  defineCase({
    id: 'faults.unavailable-retry-after',
    area: 'faults',
    level: 'SHOULD',
    title: 'SHOULD send Retry-After with the 503 of a request that timed out',
    orbit: { anchor: 'health-and-envelopes', text: '429 and 503 responses carry Retry-After' },
    features: ['request-timeout'],
    timeoutMs: (t) => 20_000 + 2 * t.requestTimeoutMs,
    async run(ctx: CaseContext) {
      const response = await stalledRequest(ctx, 'setup: ');
      ctx.check(/\r\nretry-after: *\d+\r\n/i.test(response), `the 503 has no Retry-After header: ${response.slice(0, 400)}`);
    },
  }),
  defineCase({
    id: 'faults.no-internal-details',
    area: 'faults',
    level: 'SHOULD',
    title: 'SHOULD keep stack traces, SQL errors and file paths out of error messages',
    orbit: { anchor: 'error-choices', text: 'the details of an unforeseen failure go to the log, never to the response' },
    async run(ctx: CaseContext) {
      const sub = await ctx.createSubscription();
      const responses = [
        await ctx.post('full', '/v1/subscriptions', '{"name":'),
        await ctx.post('full', '/v1/subscriptions', `{"name":"a","name":"b","queue_id":"${ctx.queue}"}`),
        await ctx.get('full', '/v1/subscriptions/zz'),
        await ctx.post('full', `/v1/subscriptions/${sub.id}:configure`, { expected_revision: '9', enabled: false, reason: 'x' }),
        await ctx.post('full', `/v1/subscriptions/${sub.id}:configure`, {
          expected_revision: UINT64_MAX,
          enabled: false,
          reason: '\u0000',
        }),
        await ctx.get('full', `/v1/subscriptions?queue_id=${ctx.queue}&cursor=${'A'.repeat(600)}`),
      ];
      for (const res of responses) {
        const message = String(memberAt(res.json, 'error', 'message') ?? '');
        ctx.check(
          !/\n\s+at |SQLITE_|ER_[A-Z_]+|node_modules|\.ts:\d+|\.js:\d+|SELECT |INSERT |UPDATE /.test(message),
          `an error message leaks internals: ${message}`,
        );
      }
    },
  }),
];

/**
 * @module
 * Faults (seed §6, §7): unknown routes and ids, connections that drop (gracefully or not) with a
 * lease held, at-least-once redelivery, truncated requests, the server-side request timeout, and
 * error messages that leak no internals.
 */
import { connect } from 'node:net';
import { defineCase, type ConformanceCase } from '../case.ts';
import type { Timing } from '../config.ts';
import type { CaseContext } from '../context.ts';
import { basePath } from '../http.ts';
import { leased, listAll, randomHex } from './helpers.ts';

const expiryTimeout = (t: Timing) => 30_000 + 4 * t.leaseDurationMs + t.redeliveryBackoffMs;

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
        `raw TCP: sent ${JSON.stringify(bytes.slice(0, 300))}; received ${JSON.stringify(response.slice(0, 600))}${closedByServer ? '; closed by the server' : ''}`,
      );
      resolve({ response, closedByServer });
    };
    const timer = setTimeout(() => finish(false), options.waitMs);
    socket.on('data', (c: Buffer) => (response += c.toString('utf8')));
    socket.on('end', () => finish(true));
    socket.on('close', () => finish(true));
    socket.on('error', (e) => (done ? undefined : reject(e)));
    socket.write(bytes, () => {
      if (options.destroyAfterSend) finish(false);
    });
  });
}

export const faultCases: ConformanceCase[] = [
  defineCase({
    id: 'faults.unknown-route-envelope',
    area: 'faults',
    level: 'MUST',
    title: 'MUST answer unknown routes and methods with an error envelope',
    clause: { section: '§1', text: 'HTTP uses a uniform request_id + data/error envelope' },
    async run(ctx) {
      ctx.expectError(await ctx.get('full', '/v1/nothing-here'), 'NOT_FOUND', 'GET /v1/nothing-here');
      for (const [method, target] of [
        ['PUT', '/v1/subscriptions'],
        ['DELETE', '/v1/subscriptions'],
        ['POST', '/healthz'],
      ] as const) {
        const res = await ctx.request('full', method, target, { key: `cf-${randomHex()}`, body: {} });
        ctx.check(res.status >= 400 && res.status < 500, `${method} ${target}: expected a 4xx refusal, got ${res.status}`);
        ctx.validate('validateErrorEnvelope', res.json, `${method} ${target}: body`);
      }
    },
  }),
  defineCase({
    id: 'faults.unknown-id-not-found',
    area: 'faults',
    level: 'MUST',
    title: 'MUST answer 404 NOT_FOUND for unknown subscription and delivery ids',
    clause: { section: '§7', text: 'NOT_FOUND: the subscription or delivery is outside the credential and parent scope' },
    async run(ctx) {
      const sub = await ctx.createSubscription();
      ctx.expectError(await ctx.get('full', `/v1/subscriptions/${randomHex()}`), 'NOT_FOUND', 'GET an unknown subscription');
      ctx.expectError(
        await ctx.get('full', `/v1/subscriptions/${randomHex()}/deliveries`),
        'NOT_FOUND',
        'list deliveries of an unknown subscription',
      );
      ctx.expectError(
        await ctx.post('full', `/v1/subscriptions/${randomHex()}:configure`, { expected_revision: '1', enabled: false, reason: 'x' }),
        'NOT_FOUND',
        'configure an unknown subscription',
      );
      ctx.expectError(
        await ctx.get('full', `/v1/subscriptions/${sub.id}/deliveries/${randomHex()}`),
        'NOT_FOUND',
        'GET an unknown delivery',
      );
      ctx.expectError(
        await ctx.post('full', `/v1/subscriptions/${sub.id}/deliveries/${randomHex()}:retry`, {
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
    clause: { section: '§7', text: 'ids are 32-character lower-case hex' },
    async run(ctx) {
      for (const id of ['ZZZ', randomHex().toUpperCase(), `${randomHex()}0`, '%00', '..%2F..%2Fhealthz']) {
        ctx.expectOneOf(await ctx.get('full', `/v1/subscriptions/${id}`), ['NOT_FOUND', 'INVALID_ARGUMENT'], `GET /v1/subscriptions/${id}`);
      }
    },
  }),
  defineCase({
    id: 'faults.abrupt-disconnect-keeps-lease',
    area: 'faults',
    level: 'MUST',
    title: 'MUST keep the lease of a connection that drops without a close frame; its proof acknowledges from a new connection',
    clause: { section: '§7', text: 'a disconnect or node shutdown does not clear persisted deliveries' },
    async run(ctx) {
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
    clause: { section: '§6', text: 'delivery is at least once; closes, write timeouts and lost ACK replies may cause duplicates' },
    timeoutMs: expiryTimeout,
    async run(ctx) {
      const { sub, conn, deliver } = await leased(ctx);
      await conn.close();
      const { conn: next } = await ctx.bind(sub.id);
      const again = await next.next(
        (f) => f.type === 'event.deliver' && f.body.delivery.id === deliver.body.delivery.id,
        ctx.redeliveryMs,
        'the unacknowledged delivery again',
      );
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
    clause: { section: 'brief', text: 'nothing is lost or half-written' },
    async run(ctx) {
      const name = ctx.name();
      const body = JSON.stringify({ name, queue_id: ctx.queue });
      const head = `POST ${basePath(ctx.config.baseUrl)}/v1/subscriptions HTTP/1.1\r\nHost: ${new URL(ctx.config.baseUrl).host}\r\nAuthorization: Bearer ${ctx.token('full')}\r\nContent-Type: application/json\r\nIdempotency-Key: cf-${randomHex()}\r\nContent-Length: ${body.length + 40}\r\n\r\n`;
      await rawExchange(ctx, head + body, { destroyAfterSend: true, waitMs: 1_000 });
      ctx.expectData(await ctx.get(null, '/healthz'), 200, 'GET /healthz after the cut request');
      const listed = await listAll(ctx, 'full', '/v1/subscriptions', `queue_id=${ctx.queue}`, 3);
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
    clause: { section: '§1', text: 'management requests have an 8-second server-side timeout' },
    features: ['request-timeout'],
    timeoutMs: (t) => 20_000 + 2 * t.requestTimeoutMs,
    async run(ctx) {
      const head = `POST ${basePath(ctx.config.baseUrl)}/v1/subscriptions HTTP/1.1\r\nHost: ${new URL(ctx.config.baseUrl).host}\r\nAuthorization: Bearer ${ctx.token('full')}\r\nContent-Type: application/json\r\nIdempotency-Key: cf-${randomHex()}\r\nContent-Length: 100\r\n\r\n{"name":`;
      const { response } = await rawExchange(ctx, head, { waitMs: ctx.timing.requestTimeoutMs + 4_000 });
      ctx.check(
        /^HTTP\/1\.1 503 /.test(response),
        `expected 503 within ${ctx.timing.requestTimeoutMs + 4_000} ms, got ${JSON.stringify(response.slice(0, 200)) || 'nothing'}`,
      );
      ctx.check(response.includes('"UNAVAILABLE"'), `the 503 does not carry UNAVAILABLE: ${response.slice(0, 400)}`);
      ctx.check(/\r\nretry-after: *\d+\r\n/i.test(response), `the 503 has no Retry-After header: ${response.slice(0, 400)}`);
    },
  }),
  defineCase({
    id: 'faults.no-internal-details',
    area: 'faults',
    level: 'SHOULD',
    title: 'SHOULD keep stack traces, SQL errors and file paths out of error messages',
    clause: { section: '§7', text: 'errors are {code, message} from the fixed table' },
    async run(ctx) {
      const sub = await ctx.createSubscription();
      const responses = [
        await ctx.post('full', '/v1/subscriptions', '{"name":'),
        await ctx.post('full', '/v1/subscriptions', `{"name":"a","name":"b","queue_id":"${ctx.queue}"}`),
        await ctx.get('full', '/v1/subscriptions/zz'),
        await ctx.post('full', `/v1/subscriptions/${sub.id}:configure`, { expected_revision: '9', enabled: false, reason: 'x' }),
        await ctx.post('full', `/v1/subscriptions/${sub.id}:configure`, {
          expected_revision: '18446744073709551615',
          enabled: false,
          reason: '\u0000',
        }),
        await ctx.get('full', `/v1/subscriptions?queue_id=${ctx.queue}&cursor=${'A'.repeat(600)}`),
      ];
      for (const res of responses) {
        const message = String(res.json?.error?.message ?? '');
        ctx.check(
          !/\n\s+at |SQLITE_|ER_[A-Z_]+|node_modules|\.ts:\d+|\.js:\d+|SELECT |INSERT |UPDATE /.test(message),
          `an error message leaks internals: ${message}`,
        );
      }
    },
  }),
];

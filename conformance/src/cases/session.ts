/**
 * @module
 * The session (spec/rules.md §5, §7): hello within the deadline and its forbidden fields, capacity,
 * subscription ownership at hello, the welcome, and a second hello. What a bound session does with
 * the frames it receives is in session-frames.ts. Frames are sent as raw text.
 */
import { validateWelcomeFrame } from '@orbit/generated';
import { CAPACITY } from '@orbit/spec/protocol';
import { defineCase, type ConformanceCase } from '../case.ts';
import type { CaseContext } from '../context.ts';
import { randomId } from '../ids.ts';
import { expectPolicyClose, pingText, VERSION_MEMBER } from './helpers.ts';

/** Opens a connection, sends one raw hello text, and expects no welcome and a refusal. */
async function helloRefused(
  ctx: CaseContext,
  text: string,
  messageId: string,
  what: string,
  codes: Parameters<CaseContext['expectRefused']>[2],
): Promise<void> {
  const conn = await ctx.connect();
  conn.sendText(text);
  await ctx.expectRefused(conn, messageId, codes, what);
  ctx.check(!conn.received.some((f) => f.type === 'events.welcome'), `${what}: the server sent events.welcome`);
}

/** The raw text of an events.hello with `body`; `extra` is spliced in after it (`,"reply_to":...`). */
function helloText(messageId: string, body: Record<string, unknown>, extra = ''): string {
  return `{${VERSION_MEMBER},"type":"events.hello","message_id":"${messageId}","body":${JSON.stringify(body)}${extra}}`;
}

export const sessionCases: ConformanceCase[] = [
  defineCase({
    id: 'session.welcome',
    area: 'session',
    level: 'MUST',
    title: 'MUST answer hello with events.welcome: reply_to, a new message_id, the session_id, the capacity and the timings',
    seed: ['s5-14', 's5-7', 's5-15', 's8-8'],
    async run(ctx: CaseContext) {
      const sub = await ctx.createSubscription();
      const conn = await ctx.connect();
      const helloId = conn.send('events.hello', { subscription_id: sub.id, capacity: 3 });
      const w = await conn.reply(helloId, ctx.replyMs, 'events.welcome');
      ctx.check(w.type === 'events.welcome', `expected events.welcome, got ${w.$text}`);
      ctx.validate(validateWelcomeFrame, JSON.parse(w.$text), 'the welcome');
      ctx.check(w.message_id !== helloId, 'the welcome reuses the hello message_id');
      ctx.equal(w.session_id, w.body.session_id, 'session_id of the frame versus the body');
      ctx.equal([w.body.subscription_id, w.body.capacity, w.body.enabled], [sub.id, 3, true], '[subscription_id, capacity, enabled]');
      ctx.equal(
        [w.body.lease_duration_ms, w.body.heartbeat_interval_ms],
        [ctx.timing.leaseDurationMs, ctx.timing.heartbeatIntervalMs],
        '[lease_duration_ms, heartbeat_interval_ms] versus the declared timing',
      );
    },
  }),
  defineCase({
    id: 'session.hello-timeout',
    area: 'session',
    level: 'MUST',
    title: 'MUST accept a hello sent within the hello timeout and close a connection that sends none',
    seed: ['s5-9'],
    timeoutMs: (t) => 20_000 + 3 * t.helloTimeoutMs,
    async run(ctx: CaseContext) {
      const sub = await ctx.createSubscription();
      const silent = await ctx.connect();
      const late = await ctx.connect();
      await ctx.sleep(Math.floor(ctx.timing.helloTimeoutMs / 2));
      const welcome = await late.hello(sub.id, 1, ctx.replyMs);
      ctx.check(welcome.type === 'events.welcome', `a hello after half the hello timeout was refused: ${welcome.$text}`);
      await ctx.expectClosed(
        silent,
        Math.ceil(ctx.timing.helloTimeoutMs / 2) + Math.max(2_000, ctx.timing.helloTimeoutMs),
        `a connection without hello (timing.helloTimeoutMs is ${ctx.timing.helloTimeoutMs}: a server with a longer hello timeout needs ` +
          `that setting)`,
      );
    },
  }),
  defineCase({
    id: 'session.first-frame-must-be-hello',
    area: 'session',
    level: 'MUST',
    title: 'MUST close with 1008 when the first frame is not events.hello',
    seed: ['s7-9', 's5-16'],
    async run(ctx: CaseContext) {
      const conn = await ctx.connect();
      conn.sendText(pingText(randomId()));
      await expectPolicyClose(ctx, conn, 'a ping before hello');
    },
  }),
  defineCase({
    id: 'session.hello-forbidden-fields',
    area: 'session',
    level: 'MUST',
    title: 'MUST refuse a hello that carries session_id, reply_to or error',
    seed: ['s5-9'],
    async run(ctx: CaseContext) {
      const sub = await ctx.createSubscription();
      for (const extra of [
        `,"session_id":"${randomId()}"`,
        `,"reply_to":"${randomId()}"`,
        ',"error":{"code":"UNAVAILABLE","message":"x"}',
      ]) {
        const id = randomId();
        await helloRefused(
          ctx,
          helloText(id, { subscription_id: sub.id, capacity: 1 }, extra),
          id,
          `hello with ${extra.slice(1, extra.indexOf(':'))}`,
          ['INVALID_ARGUMENT'],
        );
      }
    },
  }),
  defineCase({
    id: 'session.hello-capacity-range',
    area: 'session',
    level: 'MUST',
    title: 'MUST refuse a hello whose capacity is not an integer from 1 to 32',
    seed: ['s5-11'],
    async run(ctx: CaseContext) {
      const sub = await ctx.createSubscription();
      for (const capacity of [CAPACITY.min - 1, CAPACITY.max + 1, 1.5, '1', null]) {
        const id = randomId();
        await helloRefused(
          ctx,
          helloText(id, { subscription_id: sub.id, capacity }),
          id,
          `hello with capacity ${JSON.stringify(capacity)}`,
          ['INVALID_ARGUMENT'],
        );
      }
      const id = randomId();
      await helloRefused(ctx, helloText(id, { subscription_id: sub.id }), id, 'hello without capacity', ['INVALID_ARGUMENT']);
      const { welcome } = await ctx.bind(sub.id, CAPACITY.max);
      ctx.equal(welcome.body.capacity, CAPACITY.max, `capacity ${CAPACITY.max} accepted`);
    },
  }),
  defineCase({
    id: 'session.hello-foreign-subscription',
    area: 'session',
    level: 'MUST',
    title: "MUST refuse a hello for another credential's subscription with NOT_FOUND, without session_id, then close",
    seed: ['s5-3', 's7-8', 's7-13'],
    async run(ctx: CaseContext) {
      const sub = await ctx.createSubscription();
      for (const role of ['sameNamespace', 'otherNamespace'] as const) {
        const conn = await ctx.connect(role);
        const id = conn.send('events.hello', { subscription_id: sub.id, capacity: 1 });
        const reply = await conn.reply(id, ctx.replyMs, 'a reply to hello');
        ctx.expectFrameError(reply, 'NOT_FOUND', `hello by ${role}`);
        ctx.check(reply.session_id === undefined, `hello by ${role}: the error frame carries a session_id`);
        await ctx.expectClosed(conn, ctx.replyMs, `hello by ${role}`);
      }
    },
  }),
  defineCase({
    id: 'session.hello-unknown-subscription',
    area: 'session',
    level: 'MUST',
    title: 'MUST refuse a hello for an unknown subscription with NOT_FOUND and close',
    seed: ['s7-13', 's7-6'],
    async run(ctx: CaseContext) {
      const conn = await ctx.connect();
      const id = conn.send('events.hello', { subscription_id: randomId(), capacity: 1 });
      ctx.expectFrameError(await conn.reply(id, ctx.replyMs), 'NOT_FOUND', 'hello for an unknown subscription');
      await ctx.expectClosed(conn, ctx.replyMs, 'hello for an unknown subscription');
    },
  }),
  defineCase({
    id: 'session.second-hello-rejected',
    area: 'session',
    level: 'MUST',
    title: 'MUST NOT accept a second hello on a bound connection (capacity cannot change)',
    seed: ['s5-12'],
    async run(ctx: CaseContext) {
      const sub = await ctx.createSubscription();
      const { conn } = await ctx.bind(sub.id, 1);
      const id = conn.send('events.hello', { subscription_id: sub.id, capacity: 2 });
      await ctx.expectRefused(conn, id, ['INVALID_ARGUMENT', 'STATE_CONFLICT'], 'a second hello');
      ctx.equal(conn.received.filter((f) => f.type === 'events.welcome').length, 1, 'number of welcomes');
    },
  }),
];

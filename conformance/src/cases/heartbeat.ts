/**
 * @module
 * Heartbeat, idle timeout and pause (spec/rules.md §3, §7): ping replies with {server_time, enabled}, the
 * idle timeout and keep-alive, pause stopping new claims while connections, pings and ACKs go on,
 * and the ping re-checking the subscription.
 */
import { validatePingReplyFrame, validateSubscriptionResult } from '@orbit/generated';
import { defineCase, type ConformanceCase } from '../case.ts';
import type { CaseContext } from '../context.ts';
import { repliesTo } from '../frames.ts';
import { ping, pinged, postRetire } from './helpers.ts';

export const heartbeatCases: ConformanceCase[] = [
  defineCase({
    id: 'heartbeat.ping-reply',
    area: 'heartbeat',
    level: 'MUST',
    title: 'MUST answer events.ping with an ack carrying {server_time, enabled}',
    seed: ['s7-1'],
    async run(ctx: CaseContext) {
      const sub = await ctx.createSubscription();
      const { conn } = await ctx.bind(sub.id);
      const reply = await pinged(ctx, conn);
      ctx.validate(validatePingReplyFrame, JSON.parse(reply.$text), 'the ping reply');
      ctx.equal([reply.session_id, reply.body.enabled], [conn.sessionId, true], '[session_id, enabled]');
    },
  }),
  defineCase({
    id: 'heartbeat.ping-body-empty',
    area: 'heartbeat',
    level: 'MUST',
    title: 'MUST refuse a ping whose body is not the empty object',
    seed: ['s7-1'],
    async run(ctx: CaseContext) {
      const sub = await ctx.createSubscription();
      for (const body of [{ x: 1 }, [], null]) {
        const { conn } = await ctx.bind(sub.id);
        await ctx.expectRefused(conn, conn.send('events.ping', body), ['INVALID_ARGUMENT'], `a ping with body ${JSON.stringify(body)}`);
      }
    },
  }),
  defineCase({
    id: 'heartbeat.idle-timeout',
    area: 'heartbeat',
    level: 'MUST',
    title: 'MUST close a connection that sends no valid frame for the idle timeout (deliveries do not count), and not much earlier',
    seed: ['s7-3', 's7-2'],
    timeoutMs: (t) => 20_000 + 3 * t.idleTimeoutMs,
    async run(ctx: CaseContext) {
      const sub = await ctx.createSubscription();
      const { conn } = await ctx.bind(sub.id, 1, 'full', { keepAlive: false });
      const started = Date.now();
      // A delivery mid-way is server traffic, not a client frame: it must not keep the connection alive.
      await ctx.sleep(Math.floor(ctx.timing.idleTimeoutMs / 3));
      await ctx.publish({ type: 'task.succeeded' });
      const closed = await conn.waitClose(ctx.timing.idleTimeoutMs + Math.max(3_000, ctx.timing.idleTimeoutMs / 2));
      const after = Date.now() - started;
      ctx.check(
        closed,
        `the connection stayed open ${after} ms without client frames; timing.idleTimeoutMs is ${ctx.timing.idleTimeoutMs} ` +
          '(if the server runs with a longer idle timeout, set timing.idleTimeoutMs to it)',
      );
      ctx.check(
        after >= ctx.timing.idleTimeoutMs * 0.75,
        `the connection closed after ${after} ms, well before timing.idleTimeoutMs (${ctx.timing.idleTimeoutMs} ms)`,
      );
    },
  }),
  defineCase({
    id: 'heartbeat.pings-keep-alive',
    area: 'heartbeat',
    level: 'MUST',
    title: 'MUST keep a connection open beyond the idle timeout while the client pings',
    seed: ['s7-3', 's7-1'],
    timeoutMs: (t) => 20_000 + 3 * t.idleTimeoutMs,
    async run(ctx: CaseContext) {
      const sub = await ctx.createSubscription();
      const { conn } = await ctx.bind(sub.id, 1, 'full', { keepAlive: false });
      const until = Date.now() + Math.floor(ctx.timing.idleTimeoutMs * 1.4);
      while (Date.now() < until) {
        await ctx.sleep(Math.floor(ctx.timing.idleTimeoutMs / 3));
        ctx.check(
          !conn.closed,
          `the connection closed (${conn.closed?.code}) although the client pinged every ${Math.floor(ctx.timing.idleTimeoutMs / 3)} ms`,
        );
        ctx.equal((await ping(ctx, conn)).type, 'ack', 'ping reply');
      }
    },
  }),
  defineCase({
    id: 'heartbeat.paused-stops-deliveries',
    area: 'heartbeat',
    level: 'MUST',
    title: 'MUST stop new deliveries while paused and resume them after resume',
    seed: ['s3-13'],
    async run(ctx: CaseContext) {
      const sub = await ctx.createSubscription();
      const { conn } = await ctx.bind(sub.id);
      await ctx.configure(sub.id, false);
      const event = await ctx.publish({ type: 'task.succeeded' });
      const early = await conn.poll((f) => f.type === 'event.deliver', ctx.quietMs);
      ctx.check(!early, `a result was delivered while paused: ${early?.$text}`);
      ctx.equal((await pinged(ctx, conn)).body.enabled, false, 'enabled in the ping reply while paused');
      await ctx.configure(sub.id, true);
      ctx.equal((await pinged(ctx, conn)).body.enabled, true, 'enabled in the ping reply after resume');
      const deliver = await ctx.deliver(conn, ctx.deliverMs, 'the delivery after resume');
      ctx.equal(deliver.body.event.id, event.id, 'the delivered event');
    },
  }),
  defineCase({
    id: 'heartbeat.paused-session-works',
    area: 'heartbeat',
    level: 'MUST',
    title: 'MUST let a paused subscription connect (welcome enabled=false) and ping',
    seed: ['s7-4'],
    async run(ctx: CaseContext) {
      const sub = await ctx.createSubscription();
      await ctx.configure(sub.id, false);
      const { conn, welcome } = await ctx.bind(sub.id);
      ctx.equal(welcome.body.enabled, false, 'enabled in the welcome');
      ctx.equal((await pinged(ctx, conn)).body.enabled, false, 'enabled in the ping reply');
    },
  }),
  defineCase({
    id: 'heartbeat.ping-rechecks-subscription',
    area: 'heartbeat',
    level: 'MUST',
    title: 'MUST re-check the subscription on ping and end the session of a subscription retired meanwhile',
    orbit: {
      anchor: 'event-engine',
      text: 'events.ping reloads the credential and the subscription; a subscription retired meanwhile ends the session',
    },
    async run(ctx: CaseContext) {
      const sub = await ctx.createSubscription();
      const { conn } = await ctx.bind(sub.id);
      ctx.expectData(await postRetire(ctx, sub.id, '1'), 200, 'retire', validateSubscriptionResult);
      const reply = await conn.poll(repliesTo(conn.send('events.ping', {})), ctx.replyMs);
      ctx.check(!reply || reply.type === 'error', `the ping on a retired subscription was answered: ${reply?.$text}`);
      await ctx.expectClosed(conn, ctx.replyMs, 'a session of a retired subscription after ping');
    },
  }),
];

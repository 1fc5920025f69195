/**
 * @module
 * Frames on a bound session (spec/rules.md §5, §7; area `session`, after session.ts): the reactions
 * to wrong sessions, binary, malformed and oversized frames, invalid bodies and invalid envelopes
 * (generated with fast-check), fresh message and session ids, connections that share a
 * subscription, and the write timeout. Frames are sent as raw text.
 */
import { CAPACITY, MAX_FRAME_BYTES, PROTOCOL_VERSION } from '@orbit/spec/protocol';
import fc from 'fast-check';
import { defineCase, type ConformanceCase } from '../case.ts';
import type { CaseContext } from '../context.ts';
import { isDeliver, replyOf, repliesTo } from '../frames.ts';
import { randomId } from '../ids.ts';
import { expectPolicyClose, ping, pingText, VERSION_MEMBER } from './helpers.ts';
import { escapeKey } from './json.ts';

/** A ping padded with spaces to exactly `size` bytes. */
function paddedPing(sessionId: string, size: number): { text: string; id: string } {
  const id = randomId();
  const text = pingText(sessionId, id);
  return { text: `${text.slice(0, -1) + ' '.repeat(size - text.length)}}`, id };
}

export const sessionFrameCases: ConformanceCase[] = [
  defineCase({
    id: 'session.wrong-session-closes',
    area: 'session',
    level: 'MUST',
    title: 'MUST close with 1008 when a frame names another session_id',
    seed: ['s7-9', 's5-16'],
    async run(ctx: CaseContext) {
      const sub = await ctx.createSubscription();
      const { conn } = await ctx.bind(sub.id);
      conn.sendText(pingText(randomId()));
      await expectPolicyClose(ctx, conn, 'a ping with another session_id');
    },
  }),
  defineCase({
    id: 'session.binary-frame-closes',
    area: 'session',
    level: 'MUST',
    title: 'MUST close with 1008 on a binary message',
    seed: ['s7-9', 's5-5'],
    async run(ctx: CaseContext) {
      const sub = await ctx.createSubscription();
      const { conn } = await ctx.bind(sub.id);
      conn.sendBinary(Buffer.from(pingText(conn.sessionId)));
      await expectPolicyClose(ctx, conn, 'a binary ping');
    },
  }),
  defineCase({
    id: 'session.malformed-frame-closes',
    area: 'session',
    level: 'MUST',
    title: 'MUST close with 1008 on a frame that is not strict JSON (syntax error, duplicate key)',
    seed: ['s7-9'],
    async run(ctx: CaseContext) {
      const sub = await ctx.createSubscription();
      const id = randomId();
      for (const make of [
        (_s: string) => `{${VERSION_MEMBER},`,
        (s: string) => `{${VERSION_MEMBER},"type":"events.ping","message_id":"${id}","session_id":"${s}","body":{},"body":{}}`,
        (s: string) => `{${VERSION_MEMBER},"type":"events.ping","type":"events.ping","message_id":"${id}","session_id":"${s}","body":{}}`,
      ]) {
        const { conn } = await ctx.bind(sub.id);
        const text = make(conn.sessionId!);
        conn.sendText(text);
        await expectPolicyClose(ctx, conn, `the frame ${text}`);
      }
    },
  }),
  defineCase({
    id: 'session.oversize-frame-closes',
    area: 'session',
    level: 'MUST',
    title: 'MUST close the connection on a message larger than 512 KiB without answering it',
    seed: ['s5-5', 's7-9'],
    async run(ctx: CaseContext) {
      const sub = await ctx.createSubscription();
      const { conn } = await ctx.bind(sub.id);
      const { text, id } = paddedPing(conn.sessionId!, MAX_FRAME_BYTES + 1);
      conn.sendText(text);
      const closed = await ctx.expectClosed(conn, ctx.replyMs, `a ${MAX_FRAME_BYTES + 1}-byte ping`);
      ctx.check(!conn.received.some((f) => replyOf(f) === id && f.type === 'ack'), 'the oversized ping was answered');
      ctx.log.note(`closed with ${closed.code} (1009 is the usual code)`);
    },
  }),
  defineCase({
    id: 'session.frame-at-limit-accepted',
    area: 'session',
    level: 'SHOULD',
    title: 'SHOULD accept a frame of exactly 512 KiB',
    seed: ['s5-5'],
    async run(ctx: CaseContext) {
      const sub = await ctx.createSubscription();
      const { conn } = await ctx.bind(sub.id);
      const { text, id } = paddedPing(conn.sessionId!, MAX_FRAME_BYTES);
      conn.sendText(text);
      const reply = await conn.reply(id, ctx.replyMs, `a reply to a ${MAX_FRAME_BYTES}-byte ping`);
      ctx.equal(reply.type, 'ack', 'reply type');
    },
  }),
  defineCase({
    id: 'session.bad-body-reply',
    area: 'session',
    level: 'MUST',
    title: 'MUST answer a command with a sound envelope but an invalid body with INVALID_ARGUMENT (or close with 1008)',
    seed: ['s7-10', 's7-8'],
    async run(ctx: CaseContext) {
      const sub = await ctx.createSubscription();
      const { conn } = await ctx.bind(sub.id);
      const id = conn.send('event.ack', { delivery_id: 'not-an-id', epoch: '1' });
      const how = await ctx.expectRefused(conn, id, ['INVALID_ARGUMENT'], 'an ACK without lease_secret and with a bad delivery_id');
      if (how === 'error') {
        const error = conn.received.find(repliesTo(id))!;
        ctx.equal(error.session_id, conn.sessionId, 'session_id of the error frame');
        ctx.equal((await ping(ctx, conn)).type, 'ack', 'a ping after the error (the connection stays usable)');
      }
    },
  }),
  defineCase({
    id: 'session.fresh-message-ids',
    area: 'session',
    level: 'MUST',
    title: 'MUST give every server frame a new message_id and name the request in reply_to',
    seed: ['s5-7'],
    async run(ctx: CaseContext) {
      const sub = await ctx.createSubscription();
      const { conn } = await ctx.bind(sub.id);
      const sent: string[] = [];
      for (let i = 0; i < 3; i++) {
        const id = conn.send('events.ping', {});
        sent.push(id);
        const reply = await conn.reply(id, ctx.replyMs);
        ctx.equal(replyOf(reply), id, 'reply_to');
      }
      const ids = conn.received.map((f) => f.message_id);
      ctx.equal(new Set(ids).size, ids.length, 'distinct server message_ids');
      ctx.check(!ids.some((m) => sent.includes(m)), 'a server frame reuses a client message_id');
    },
  }),
  defineCase({
    id: 'session.new-session-per-connection',
    area: 'session',
    level: 'MUST',
    title: 'MUST give each connection its own session_id; several connections may consume one subscription',
    seed: ['s5-15', 's5-17', 's5-13'],
    async run(ctx: CaseContext) {
      const sub = await ctx.createSubscription();
      const a = await ctx.bind(sub.id);
      const b = await ctx.bind(sub.id);
      ctx.check(a.welcome.session_id !== b.welcome.session_id, 'two connections got the same session_id');
      await a.conn.close();
      const c = await ctx.bind(sub.id);
      ctx.check(c.welcome.session_id !== a.welcome.session_id, 'a reconnection got the old session_id back');
    },
  }),
  defineCase({
    id: 'session.shared-consumption',
    area: 'session',
    level: 'MUST',
    title: 'MUST let connections of one subscription compete for deliveries without leasing one delivery twice',
    seed: ['s5-13'],
    async run(ctx: CaseContext) {
      const sub = await ctx.createSubscription();
      const a = await ctx.bind(sub.id, 1);
      const b = await ctx.bind(sub.id, 1);
      await ctx.publish({ type: 'task.succeeded' });
      await ctx.publish({ type: 'task.succeeded' });
      const da = await ctx.deliver(a.conn, ctx.deliverMs, 'a delivery on the first connection');
      const db = await ctx.deliver(b.conn, ctx.deliverMs, 'a delivery on the second connection');
      ctx.check(da.body.delivery.id !== db.body.delivery.id, `both connections hold delivery ${da.body.delivery.id}`);
      ctx.equal((await ctx.ack(a.conn, da)).type, 'ack', 'ACK on the first connection');
      ctx.equal((await ctx.ack(b.conn, db)).type, 'ack', 'ACK on the second connection');
    },
  }),
  defineCase({
    id: 'session.prop-invalid-frames',
    area: 'session',
    level: 'MUST',
    kind: 'property',
    title:
      'MUST close with 1008 on every invalid envelope: duplicate or escaped-duplicate keys, unknown or case-alias members, bad version, ' +
      'type or message_id',
    seed: ['s7-9', 's5-6', 's6-10'],
    timeoutMs: 90_000,
    async run(ctx: CaseContext) {
      const sub = await ctx.createSubscription();
      const members = ['protocol_version', 'type', 'message_id', 'session_id', 'body'] as const;
      const arbitrary = fc.oneof(
        fc.record({
          kind: fc.constant('duplicate' as const),
          key: fc.constantFrom(...members),
          mask: fc.array(fc.boolean(), { minLength: 1, maxLength: 8 }),
          upper: fc.boolean(),
        }),
        fc.record({
          kind: fc.constant('extra' as const),
          key: fc.oneof(
            fc.mixedCase(fc.constantFrom(...members)).filter((k) => !(members as readonly string[]).includes(k)),
            fc.constantFrom('reply_to', 'error', 'id', 'meta'),
          ),
        }),
        fc.record({ kind: fc.constant('version' as const), value: fc.constantFrom('1', '"2"', '"1.0"', '" 1"', 'null', '"v1"') }),
        fc.record({
          kind: fc.constant('type' as const),
          value: fc.constantFrom('"events.PING"', '"ping"', '"event.deliver"', '"ack"', '"event.renew"', '"event.nack"', '""', '1'),
        }),
        fc.record({
          kind: fc.constant('messageId' as const),
          value: fc.oneof(
            fc.constantFrom('"x"', '1', 'null'),
            fc.stringMatching(/^[0-9a-f]{31}$/).map((h) => `"${h}"`),
            fc
              .stringMatching(/^[0-9A-F]{32}$/)
              .filter((h) => /[A-F]/.test(h))
              .map((h) => `"${h}"`),
          ),
        }),
        fc.record({ kind: fc.constant('notObject' as const), value: fc.constantFrom('[]', '"events.ping"', '1', 'null', '{', '') }),
      );
      await ctx.property(arbitrary, async (c) => {
        const { conn } = await ctx.bind(sub.id);
        const m: Record<string, string> = {
          protocol_version: JSON.stringify(PROTOCOL_VERSION),
          type: '"events.ping"',
          message_id: `"${randomId()}"`,
          session_id: `"${conn.sessionId}"`,
          body: '{}',
        };
        let text: string;
        const members = () => Object.entries(m).map(([k, v]) => `"${k}":${v}`);
        switch (c.kind) {
          case 'duplicate':
            text = `{${[...members(), `"${escapeKey(c.key, c.mask, c.upper)}":${m[c.key]}`].join(',')}}`;
            break;
          case 'extra':
            text = `{${[...members(), `${JSON.stringify(c.key)}:"x"`].join(',')}}`;
            break;
          case 'version':
            m.protocol_version = c.value;
            text = `{${members().join(',')}}`;
            break;
          case 'type':
            m.type = c.value;
            text = `{${members().join(',')}}`;
            break;
          case 'messageId':
            m.message_id = c.value;
            text = `{${members().join(',')}}`;
            break;
          case 'notObject':
            text = c.value;
            break;
        }
        conn.sendText(text);
        await expectPolicyClose(ctx, conn, `the frame ${text}`);
      });
    },
  }),
  defineCase({
    id: 'session.write-timeout',
    area: 'session',
    level: 'MUST',
    title: 'MUST end a connection whose client stops reading, once a write has waited for the write timeout',
    seed: ['s7-3', 's6-18'],
    timeoutMs: (t) => 60_000 + 3 * t.writeTimeoutMs,
    async run(ctx: CaseContext) {
      const sub = await ctx.createSubscription();
      // The client keeps writing (its pings) and only stops reading, so no idle timeout interferes.
      const { conn } = await ctx.bind(sub.id, CAPACITY.max);
      conn.pauseReading();
      // A 450 kB result per unit of capacity: many times what the kernel buffers of both ends hold, so writes must wait.
      const result = JSON.stringify('x'.repeat(450_000));
      for (let i = 0; i < CAPACITY.max; i++) await ctx.publish({ type: 'task.succeeded', result });
      const stalledMs = 2 * ctx.timing.writeTimeoutMs + 1_000;
      await ctx.sleep(stalledMs);
      // What the server wrote before giving up is still buffered: read it, then the end must follow.
      conn.resumeReading();
      const closed = await conn.waitClose(ctx.replyMs);
      const arrived = conn.received.filter(isDeliver).length;
      ctx.check(
        closed,
        `the server kept the connection open although the client read nothing for ${stalledMs} ms (timing.writeTimeoutMs ` +
          `${ctx.timing.writeTimeoutMs}); ` +
          `${arrived} of ${CAPACITY.max} deliveries arrived once it read again`,
      );
      ctx.log.note(`closed with ${closed.code} after ${arrived} of ${CAPACITY.max} deliveries had been written`);
    },
  }),
  defineCase({
    id: 'session.invalid-body-reaction',
    area: 'session',
    level: 'MAY',
    title: 'MAY answer a command with an invalid body with an error frame or close with 1008: reports which',
    seed: ['s7-10'],
    async run(ctx: CaseContext) {
      const sub = await ctx.createSubscription();
      const { conn } = await ctx.bind(sub.id);
      const id = conn.send('events.ping', { unexpected: true });
      const how = await ctx.expectRefused(conn, id, ['INVALID_ARGUMENT'], 'a ping with a non-empty body');
      ctx.observe(how === 'error' ? 'an INVALID_ARGUMENT error frame; the connection stays open' : 'the connection is closed with 1008');
    },
  }),
  defineCase({
    id: 'session.oversize-close-code',
    area: 'session',
    level: 'MAY',
    title: 'MAY close a connection on an oversized message with any close code: reports which',
    seed: ['s7-9'],
    async run(ctx: CaseContext) {
      const sub = await ctx.createSubscription();
      const { conn } = await ctx.bind(sub.id);
      conn.sendText(paddedPing(conn.sessionId!, MAX_FRAME_BYTES + 1).text);
      const closed = await ctx.expectClosed(conn, ctx.replyMs, `a ${MAX_FRAME_BYTES + 1}-byte ping`);
      ctx.observe(`closed with ${closed.code}${closed.reason ? ` (${closed.reason})` : ''}; 1009 (message too big) is the usual code`);
    },
  }),
];

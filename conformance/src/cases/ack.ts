/**
 * @module
 * Delivery and ACK (spec/rules.md §4, §6, §7): the event.deliver frame, the lease persisted before
 * sending, ACK replies and their deduplication across connections, every way a proof can be wrong
 * (secret, epoch, delivery, owner), late ACKs and replaced epochs. The `ack` area goes on in
 * ack-flow.ts (what reaches a connection) and ack-properties.ts (non-canonical proofs).
 */
import { validateAckReplyFrame, validateDeliverFrame } from '@orbit/generated';
import { isCanonicalBase64url, LEASE_SECRET_BYTES } from '@orbit/spec/codec';
import { type ConformanceCase, defineCase } from '../case.ts';
import type { CaseContext } from '../context.ts';
import { deliveryOf, repliesTo } from '../frames.ts';
import { randomId } from '../ids.ts';
import {
  describeEvents,
  expiredDelivery,
  expiryBudget,
  expiryTimeout,
  leased,
  otherSecret,
  ping,
  SNAPSHOT_STATE,
  UINT64_MAX,
} from './helpers.ts';

export const ackCases: ConformanceCase[] = [
  defineCase({
    id: 'ack.deliver-shape',
    area: 'ack',
    level: 'MUST',
    title: 'MUST send event.deliver with the LEASED delivery, the published event and snapshot, and a canonical 32-byte lease secret',
    seed: ['s6-3', 's6-4', 's6-5', 's4-11', 's4-7', 's8-8'],
    async run(ctx: CaseContext) {
      const sub = await ctx.createSubscription();
      const { conn } = await ctx.bind(sub.id);
      const attempt = randomId();
      const task = randomId();
      const event = await ctx.publish({
        type: 'task.needs_review',
        task_id: task,
        task_revision: '4',
        effect_uncertain: true,
        current_attempt_id: attempt,
        details: '{"reason":"REVIEW"}',
      });
      const f = await ctx.deliver(conn);
      ctx.validate(validateDeliverFrame, JSON.parse(f.$text), 'event.deliver');
      ctx.check(!('reply_to' in f), 'event.deliver carries reply_to');
      ctx.equal(f.session_id, conn.sessionId, 'session_id');
      const { delivery: d, event: e, lease_secret: secret } = f.body;
      ctx.equal(
        [d.state, d.lease_epoch, d.attempts, d.attempt_budget, d.subscription_id],
        ['LEASED', '1', 1, sub.max_attempts, sub.id],
        '[state, lease_epoch, attempts, attempt_budget, subscription_id]',
      );
      ctx.equal(
        [d.event_id, d.sequence, e.id, e.sequence, e.type],
        [event.id, event.sequence, event.id, event.sequence, 'task.needs_review'],
        '[delivery.event_id, delivery.sequence, event.id, event.sequence, event.type]',
      );
      ctx.equal(
        [e.aggregate_kind, e.aggregate_id, e.aggregate_revision],
        ['task', task, '4'],
        '[aggregate_kind, aggregate_id, aggregate_revision]',
      );
      ctx.equal(
        e.snapshot,
        {
          schema_version: 1,
          task_id: task,
          queue_id: ctx.queue,
          state: SNAPSHOT_STATE['task.needs_review'],
          revision: '4',
          effect_uncertain: true,
          current_attempt_id: attempt,
        },
        'snapshot',
      );
      ctx.equal(e.details, { reason: 'REVIEW' }, 'details');
      ctx.check(
        isCanonicalBase64url(secret, LEASE_SECRET_BYTES),
        `lease_secret ${secret} is not canonical base64url of ${LEASE_SECRET_BYTES} bytes`,
      );
      ctx.check(
        Date.parse(d.lease_until ?? '') > Date.parse(d.created_at),
        `lease_until ${d.lease_until} is not after created_at ${d.created_at}`,
      );
    },
  }),
  defineCase({
    id: 'ack.snapshot-states',
    area: 'ack',
    level: 'MUST',
    title: 'MUST record the task state of each result type in the snapshot (SUCCEEDED, FAILED, CANCELLED, NEEDS_REVIEW)',
    seed: ['s6-3', 's2-8'],
    async run(ctx: CaseContext) {
      const sub = await ctx.createSubscription();
      const { conn } = await ctx.bind(sub.id, 4);
      const types = ['task.succeeded', 'task.failed', 'task.cancelled', 'task.needs_review'] as const;
      const published = new Map<string, (typeof types)[number]>();
      for (const type of types) published.set((await ctx.publish({ type })).id, type);
      for (let i = 0; i < types.length; i++) {
        const f = await ctx.deliver(conn);
        const type = published.get(f.body.event.id);
        ctx.check(type !== undefined, `an unexpected event arrived: ${describeEvents([f.body.event])}`);
        ctx.equal(
          [f.body.event.type, f.body.event.snapshot.state],
          [type, SNAPSHOT_STATE[type]],
          `[type, snapshot.state] of ${describeEvents([f.body.event])}`,
        );
      }
    },
  }),
  defineCase({
    id: 'ack.lease-persisted-before-deliver',
    area: 'ack',
    level: 'MUST',
    title: 'MUST have persisted the lease when event.deliver arrives (the delivery reads back LEASED with the same epoch)',
    seed: ['s6-1'],
    async run(ctx: CaseContext) {
      const { sub, deliver } = await leased(ctx);
      const d = deliver.body.delivery;
      const stored = (await ctx.deliveryDetail(sub.id, d.id)).delivery;
      ctx.equal(
        [stored.state, stored.lease_epoch, stored.revision, stored.attempts],
        [d.state, d.lease_epoch, d.revision, d.attempts],
        '[state, lease_epoch, revision, attempts] read back right after event.deliver',
      );
      ctx.equal(Date.parse(stored.lease_until ?? ''), Date.parse(d.lease_until ?? ''), 'lease_until read back');
    },
  }),
  defineCase({
    id: 'ack.success',
    area: 'ack',
    level: 'MUST',
    title: 'MUST acknowledge a valid proof with an ack reply and record the delivery as ACKED',
    seed: ['s6-11', 's6-12', 's4-14', 's4-8'],
    async run(ctx: CaseContext) {
      const { sub, conn, deliver } = await leased(ctx);
      const id = ctx.sendAck(conn, deliver);
      const reply = await conn.ackReply(id, ctx.replyMs, 'the ack reply');
      ctx.check(reply.type === 'ack', `expected an ack reply, got ${reply.$text}`);
      ctx.validate(validateAckReplyFrame, JSON.parse(reply.$text), 'the ack reply');
      const d = deliver.body.delivery;
      ctx.equal(
        [reply.session_id, reply.body.delivery_id, reply.body.event_id, reply.body.epoch, reply.body.deduplicated],
        [conn.sessionId, d.id, d.event_id, d.lease_epoch, false],
        '[session_id, delivery_id, event_id, epoch, deduplicated]',
      );
      const stored = (await ctx.deliveryDetail(sub.id, d.id)).delivery;
      ctx.equal(stored.state, 'ACKED', 'state');
      ctx.check(stored.revision !== d.revision, `the delivery revision ${stored.revision} did not change with the ACK`);
      ctx.equal(
        Date.parse(stored.acknowledged_at ?? ''),
        Date.parse(reply.body.acknowledged_at),
        'acknowledged_at of the delivery versus the reply',
      );
      ctx.equal((await ctx.getSubscription(sub.id)).pending_count, 0, 'pending_count after ACK');
    },
  }),
  defineCase({
    id: 'ack.replay-deduplicated',
    area: 'ack',
    level: 'MUST',
    title: 'MUST answer a repeated ACK with deduplicated=true and the original acknowledged_at',
    seed: ['s6-14'],
    async run(ctx: CaseContext) {
      const { sub, conn, deliver } = await leased(ctx);
      const first = await ctx.ack(conn, deliver);
      ctx.check(first.type === 'ack', `first ACK failed: ${first.$text}`);
      const second = await ctx.ack(conn, deliver);
      ctx.check(second.type === 'ack', `repeated ACK failed: ${second.$text}`);
      ctx.equal(
        [second.body.deduplicated, second.body.acknowledged_at, second.body.event_id],
        [true, first.body.acknowledged_at, first.body.event_id],
        '[deduplicated, acknowledged_at, event_id] of the repeat',
      );
      ctx.equal((await ctx.getSubscription(sub.id)).pending_count, 0, 'pending_count after the repeat');
    },
  }),
  defineCase({
    id: 'ack.replay-new-connection',
    area: 'ack',
    level: 'MUST',
    title: 'MUST accept the repeat of a lost ACK on a new connection with a new session_id',
    seed: ['s6-13', 's5-17'],
    async run(ctx: CaseContext) {
      const { sub, conn, deliver } = await leased(ctx);
      const first = await ctx.ack(conn, deliver);
      ctx.check(first.type === 'ack', `first ACK failed: ${first.$text}`);
      await conn.close();
      const { conn: again } = await ctx.bind(sub.id);
      const repeat = await ctx.ack(again, deliver);
      ctx.check(repeat.type === 'ack', `the repeat on a new connection failed: ${repeat.$text}`);
      ctx.equal(
        [repeat.session_id, repeat.body.deduplicated, repeat.body.acknowledged_at],
        [again.sessionId, true, first.body.acknowledged_at],
        '[session_id, deduplicated, acknowledged_at]',
      );
    },
  }),
  defineCase({
    id: 'ack.wrong-secret-lease-lost',
    area: 'ack',
    level: 'MUST',
    title: 'MUST answer an ACK with a wrong lease secret with DELIVERY_LEASE_LOST and keep the connection',
    seed: ['s7-18', 's5-8', 's7-7', 's7-6'],
    async run(ctx: CaseContext) {
      const { sub, conn, deliver } = await leased(ctx);
      const id = ctx.sendAck(conn, deliver, { lease_secret: otherSecret() });
      const reply = await conn.reply(id, ctx.replyMs);
      ctx.expectFrameError(reply, 'DELIVERY_LEASE_LOST', 'ACK with another secret');
      ctx.equal(reply.session_id, conn.sessionId, 'session_id of the error');
      ctx.equal((await ping(ctx, conn)).type, 'ack', 'a ping after DELIVERY_LEASE_LOST');
      ctx.equal((await ctx.deliveryDetail(sub.id, deliver.body.delivery.id)).delivery.state, 'LEASED', 'state after the refused ACK');
      ctx.equal((await ctx.ack(conn, ctx.latest(deliver))).type, 'ack', 'ACK with the right secret afterwards');
    },
  }),
  defineCase({
    id: 'ack.guessed-epoch-lease-lost',
    area: 'ack',
    level: 'MUST',
    title: 'MUST answer an ACK with a guessed epoch with DELIVERY_LEASE_LOST',
    seed: ['s6-17'],
    async run(ctx: CaseContext) {
      const { sub, conn, deliver } = await leased(ctx);
      for (const epoch of ['2', '0', UINT64_MAX]) {
        ctx.expectFrameError(
          await conn.reply(ctx.sendAck(conn, deliver, { epoch }), ctx.replyMs),
          'DELIVERY_LEASE_LOST',
          `ACK with epoch ${epoch}`,
        );
      }
      ctx.equal((await ctx.deliveryDetail(sub.id, deliver.body.delivery.id)).delivery.state, 'LEASED', 'state after the refused ACKs');
      ctx.equal((await ctx.ack(conn, ctx.latest(deliver))).type, 'ack', 'ACK with the right epoch afterwards');
    },
  }),
  defineCase({
    id: 'ack.unknown-delivery-rejected',
    area: 'ack',
    level: 'MUST',
    title: 'MUST refuse an ACK for a delivery that does not exist (DELIVERY_LEASE_LOST, or NOT_FOUND and close)',
    seed: ['s7-18', 's7-13'],
    async run(ctx: CaseContext) {
      const sub = await ctx.createSubscription();
      const { conn } = await ctx.bind(sub.id);
      const id = conn.send('event.ack', { delivery_id: randomId(), epoch: '1', lease_secret: otherSecret() });
      const reply = await conn.reply(id, ctx.replyMs);
      ctx.check(
        reply.type === 'error' && (reply.error?.code === 'DELIVERY_LEASE_LOST' || reply.error?.code === 'NOT_FOUND'),
        `expected DELIVERY_LEASE_LOST or NOT_FOUND, got ${reply.$text}`,
      );
      if (reply.error?.code === 'NOT_FOUND') await ctx.expectClosed(conn, ctx.replyMs, 'after NOT_FOUND');
    },
  }),
  defineCase({
    id: 'ack.foreign-delivery-rejected',
    area: 'ack',
    level: 'MUST',
    title: "MUST NOT let another credential acknowledge a subscription's delivery, even with the right proof",
    seed: ['s1-7', 's8-10'],
    async run(ctx: CaseContext) {
      const { sub, conn, deliver } = await leased(ctx);
      const theirs = await ctx.createSubscription({}, 'sameNamespace');
      const { conn: foreign } = await ctx.bind(theirs.id, 1, 'sameNamespace');
      const ackId = ctx.sendAck(foreign, deliver);
      const reply = await foreign.poll(repliesTo(ackId), ctx.replyMs);
      ctx.check(reply?.type !== 'ack', `the other credential acknowledged the delivery: ${reply?.$text}`);
      ctx.equal((await ctx.deliveryDetail(sub.id, deliver.body.delivery.id)).delivery.state, 'LEASED', 'state after the foreign ACK');
      ctx.equal((await ctx.ack(conn, ctx.latest(deliver))).type, 'ack', "the owner's ACK afterwards");
    },
  }),
  defineCase({
    id: 'ack.late-ack-after-expiry',
    area: 'ack',
    level: 'MUST',
    title: 'MUST accept a late ACK after the lease ran out as long as no newer epoch replaced the proof',
    seed: ['s6-15', 's3-13', 's7-4', 's3-14'],
    timeoutMs: expiryTimeout,
    async run(ctx: CaseContext) {
      const { sub, conn, welcome: first, deliver } = await leased(ctx);
      // The lease the server granted, not the one the configuration declares, decides the wait.
      ctx.requireLeaseWithin(deliver, expiryBudget(ctx));
      await conn.close();
      // Pausing stops new claims, so nothing replaces the proof while the lease runs out.
      await ctx.configure(sub.id, false);
      // lease_until is the server's clock; the welcome's server_time tells how far it is from ours.
      const skew = Date.parse(first.body.server_time) - first.$at;
      const end = Date.parse(deliver.body.delivery.lease_until ?? '') - skew;
      await ctx.sleep(Math.max(0, end - Date.now()) + 500);
      const { conn: later, welcome } = await ctx.bind(sub.id);
      ctx.equal(welcome.body.enabled, false, 'enabled in the welcome of a paused subscription');
      const reply = await ctx.ack(later, deliver);
      ctx.check(reply.type === 'ack', `the late ACK was refused: ${reply.$text}`);
      ctx.equal(reply.body.deduplicated, false, 'deduplicated of the late ACK');
      ctx.equal((await ctx.deliveryDetail(sub.id, deliver.body.delivery.id)).delivery.state, 'ACKED', 'state after the late ACK');
    },
  }),
  defineCase({
    id: 'ack.late-ack-expired-delivery',
    area: 'ack',
    level: 'MUST',
    title: 'MUST accept the late ACK of a delivery that became EXPIRED, since no newer epoch replaced its proof',
    seed: ['s6-15'],
    timeoutMs: expiryTimeout,
    async run(ctx: CaseContext) {
      const { sub, conn, deliver } = await expiredDelivery(ctx);
      const reply = await ctx.ack(conn, deliver);
      ctx.check(
        reply.type === 'ack' && reply.body.deduplicated === false,
        `the late ACK of an EXPIRED delivery was refused: ${reply.$text}`,
      );
      const stored = (await ctx.deliveryDetail(sub.id, deliver.body.delivery.id)).delivery;
      ctx.equal(stored.state, 'ACKED', 'state after the late ACK');
      ctx.equal((await ctx.getSubscription(sub.id)).pending_count, 0, 'pending_count after the late ACK');
    },
  }),
  defineCase({
    id: 'ack.replaced-epoch-lease-lost',
    area: 'ack',
    level: 'MUST',
    title: 'MUST redeliver an expired lease with the same delivery id and a new epoch, and refuse the old proof with DELIVERY_LEASE_LOST',
    seed: ['s6-16', 's4-6', 's4-11', 's6-6', 's6-2'],
    timeoutMs: expiryTimeout,
    async run(ctx: CaseContext) {
      const { sub, conn, deliver } = await leased(ctx);
      const d = deliver.body.delivery;
      ctx.requireLeaseWithin(deliver, expiryBudget(ctx));
      const again = await conn.next(
        deliveryOf(d.id, String(BigInt(d.lease_epoch) + 1n)),
        ctx.redeliveryMs,
        'the expired delivery to be sent again with the next epoch',
      );
      const n = again.body.delivery;
      ctx.equal(
        [n.id, n.event_id, n.lease_epoch, n.attempts],
        [d.id, d.event_id, String(BigInt(d.lease_epoch) + 1n), 2],
        '[id, event_id, lease_epoch, attempts] of the redelivery',
      );
      ctx.equal(again.body.event, deliver.body.event, 'the redelivered event (immutable)');
      ctx.check(
        BigInt(n.revision) > BigInt(d.revision),
        `the delivery revision did not grow with recovery and the new claim: ${d.revision} -> ${n.revision}`,
      );
      ctx.check(again.body.lease_secret !== deliver.body.lease_secret, 'the new lease reuses the old secret');
      const old = await conn.reply(ctx.sendAck(conn, deliver), ctx.replyMs, 'a reply to the ACK with the replaced proof');
      ctx.expectFrameError(old, 'DELIVERY_LEASE_LOST', 'ACK with the replaced proof');
      ctx.check(!conn.closed, 'the connection closed after DELIVERY_LEASE_LOST');
      const ok = await ctx.ack(conn, again);
      ctx.check(ok.type === 'ack' && ok.body.epoch === n.lease_epoch, `ACK with the new proof: ${ok.$text}`);
      ctx.expectFrameError(
        await conn.reply(ctx.sendAck(conn, deliver), ctx.replyMs),
        'DELIVERY_LEASE_LOST',
        'the replaced proof after the new one was acknowledged',
      );
      ctx.equal((await ctx.deliveryDetail(sub.id, d.id)).delivery.state, 'ACKED', 'state');
    },
  }),
];

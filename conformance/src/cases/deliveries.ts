/**
 * @module
 * Delivery history, detail and manual retry (spec/rules.md §4, §7): shapes and order, the state
 * filter, scoping, cursors bound to the filter, the absence of secrets, EXPIRED after the attempt
 * budget, the retry of an EXPIRED delivery and the cap of the cumulative budget.
 */
import { type EventDelivery, validateDeliveryList, validateDeliveryRetryResult } from '@orbit/generated';
import { defineCase, type ConformanceCase } from '../case.ts';
import type { CaseContext } from '../context.ts';
import { deliveryOf } from '../frames.ts';
import { randomId } from '../ids.ts';
import { expiredDelivery, expiryTimeout, leased } from './helpers.ts';

/** A subscription with two deliveries on one connection, the first ACKED and the second LEASED. */
async function twoDeliveries(ctx: CaseContext) {
  const sub = await ctx.createSubscription();
  const { conn } = await ctx.bind(sub.id, 2);
  await ctx.publish({ type: 'task.succeeded' });
  await ctx.publish({ type: 'task.failed' });
  const a = await ctx.deliver(conn);
  const b = await ctx.deliver(conn);
  const reply = await ctx.ack(conn, a);
  ctx.check(reply.type === 'ack', `setup: ACK failed: ${reply.$text}`);
  return { sub, conn, acked: a, leasedFrame: b };
}

export const deliveryCases: ConformanceCase[] = [
  defineCase({
    id: 'deliveries.list-shape-and-order',
    area: 'deliveries',
    level: 'MUST',
    title: 'MUST list materialized deliveries newest first (created_at, then id, descending) with the EventDelivery fields',
    seed: ['s4-3', 's4-5', 's4-12', 's4-14', 's4-9', 's4-10'],
    async run(ctx: CaseContext) {
      const { sub, acked, leasedFrame } = await twoDeliveries(ctx);
      const list = await ctx.listDeliveries(sub.id);
      ctx.equal(list.items.length, 2, 'number of deliveries');
      ctx.check(list.next_cursor === undefined, 'a one-page list has a next_cursor');
      const [x, y] = list.items as [EventDelivery, EventDelivery];
      const tx = Date.parse(x.created_at);
      const ty = Date.parse(y.created_at);
      ctx.check(tx > ty || (tx === ty && x.id > y.id), `order: ${x.id} (${x.created_at}) before ${y.id} (${y.created_at})`);
      const byId = new Map(list.items.map((d) => [d.id, d]));
      ctx.equal(byId.get(acked.body.delivery.id)?.state, 'ACKED', 'state of the acknowledged delivery');
      ctx.equal(byId.get(leasedFrame.body.delivery.id)?.state, 'LEASED', 'state of the leased delivery');
      ctx.check(typeof byId.get(acked.body.delivery.id)?.acknowledged_at === 'string', 'the ACKED delivery lacks acknowledged_at');
      ctx.check(typeof byId.get(leasedFrame.body.delivery.id)?.lease_until === 'string', 'the LEASED delivery lacks lease_until');
    },
  }),
  defineCase({
    id: 'deliveries.state-filter',
    area: 'deliveries',
    level: 'MUST',
    title: 'MUST filter the delivery list by state',
    seed: ['s4-1', 's4-2'],
    async run(ctx: CaseContext) {
      const { sub, acked, leasedFrame } = await twoDeliveries(ctx);
      const ids = async (state: string) => (await ctx.listDeliveries(sub.id, `state=${state}`)).items.map((d) => d.id);
      ctx.equal(await ids('ACKED'), [acked.body.delivery.id], 'state=ACKED');
      ctx.equal(await ids('LEASED'), [leasedFrame.body.delivery.id], 'state=LEASED');
      ctx.equal(await ids('PENDING'), [], 'state=PENDING');
      ctx.equal(await ids('EXPIRED'), [], 'state=EXPIRED');
    },
  }),
  defineCase({
    id: 'deliveries.detail-shape',
    area: 'deliveries',
    level: 'MUST',
    title: 'MUST return {delivery, event} for a delivery, the event equal to the one delivered',
    seed: ['s4-15', 's4-16', 's4-27'],
    async run(ctx: CaseContext) {
      const { sub, deliver, event } = await leased(ctx);
      const detail = await ctx.deliveryDetail(sub.id, deliver.body.delivery.id);
      ctx.equal(detail.delivery.id, deliver.body.delivery.id, 'delivery.id');
      ctx.equal(detail.delivery.state, 'LEASED', 'delivery.state');
      ctx.equal(detail.delivery.event_id, event.id, 'delivery.event_id');
      ctx.equal(detail.event, deliver.body.event, 'the event versus the one in event.deliver');
      ctx.equal(await ctx.deliveryDetail(sub.id, deliver.body.delivery.id), detail, 'a second GET (queries do not change state)');
    },
  }),
  defineCase({
    id: 'deliveries.detail-no-secret',
    area: 'deliveries',
    level: 'MUST',
    title: 'MUST NOT return the lease secret or a token digest from the delivery list or detail',
    seed: ['s4-17'],
    async run(ctx: CaseContext) {
      const { sub, deliver } = await leased(ctx);
      const secret = deliver.body.lease_secret as string;
      for (const [what, res] of [
        ['detail', await ctx.get('full', `/v1/subscriptions/${sub.id}/deliveries/${deliver.body.delivery.id}`)],
        ['list', await ctx.get('full', `/v1/subscriptions/${sub.id}/deliveries`)],
      ] as const) {
        ctx.check(res.status === 200, `${what}: HTTP ${res.status}`);
        for (const needle of [secret, 'lease_secret', 'token_digest', 'secret_digest', ctx.token('full')]) {
          ctx.check(
            !res.text.includes(needle),
            `${what} contains ` +
              `${needle === secret ? 'the lease secret' : needle === ctx.token('full') ? 'the bearer token' : `"${needle}"`}`,
          );
        }
      }
    },
  }),
  defineCase({
    id: 'deliveries.detail-scoped-to-subscription',
    area: 'deliveries',
    level: 'MUST',
    title: 'MUST NOT find a delivery under another subscription, even of the same credential (404 NOT_FOUND)',
    seed: ['s4-17', 's7-13'],
    async run(ctx: CaseContext) {
      const { deliver } = await leased(ctx);
      const other = await ctx.createSubscription();
      ctx.expectError(
        await ctx.get('full', `/v1/subscriptions/${other.id}/deliveries/${deliver.body.delivery.id}`),
        'NOT_FOUND',
        'the delivery under another subscription',
      );
      ctx.expectError(
        await ctx.get('full', `/v1/subscriptions/${other.id}/deliveries/${randomId()}`),
        'NOT_FOUND',
        'an unknown delivery id',
      );
    },
  }),
  defineCase({
    id: 'deliveries.other-credential-not-found',
    area: 'deliveries',
    level: 'MUST',
    title: "MUST answer NOT_FOUND when another credential reads or retries a subscription's deliveries",
    seed: ['s1-7', 's7-13'],
    async run(ctx: CaseContext) {
      const { sub, deliver } = await leased(ctx);
      const d = deliver.body.delivery;
      ctx.expectError(
        await ctx.get('sameNamespace', `/v1/subscriptions/${sub.id}/deliveries/${d.id}`),
        'NOT_FOUND',
        'detail by another credential',
      );
      ctx.expectError(
        await ctx.post('sameNamespace', `/v1/subscriptions/${sub.id}/deliveries/${d.id}:retry`, {
          expected_revision: d.revision,
          reason: 'x',
          additional_attempts: 1,
        }),
        'NOT_FOUND',
        'retry by another credential',
      );
      ctx.expectError(
        await ctx.get('otherNamespace', `/v1/subscriptions/${sub.id}/deliveries/${d.id}`),
        'NOT_FOUND',
        'detail by another namespace',
      );
    },
  }),
  defineCase({
    id: 'deliveries.list-cursor-bound-to-filter',
    area: 'deliveries',
    level: 'MUST',
    title: 'MUST refuse a delivery cursor used with another state filter or subscription (400 INVALID_ARGUMENT)',
    seed: ['s4-4'],
    async run(ctx: CaseContext) {
      const { sub } = await twoDeliveries(ctx);
      const page = await ctx.listDeliveries(sub.id, 'limit=1');
      const cursor = encodeURIComponent(page.next_cursor ?? ctx.skip('no next_cursor'));
      const second = ctx.expectData(
        await ctx.get('full', `/v1/subscriptions/${sub.id}/deliveries?limit=1&cursor=${cursor}`),
        200,
        'the cursor used as given',
        validateDeliveryList,
      );
      ctx.check(
        second.items.length === 1 && second.items[0]?.id !== page.items[0]?.id && second.next_cursor === undefined,
        `the second and last page of two deliveries: ${JSON.stringify(second)}`,
      );
      ctx.expectError(
        await ctx.get('full', `/v1/subscriptions/${sub.id}/deliveries?limit=1&state=ACKED&cursor=${cursor}`),
        'INVALID_ARGUMENT',
        'the cursor with state=ACKED',
      );
      const other = await ctx.createSubscription();
      ctx.expectError(
        await ctx.get('full', `/v1/subscriptions/${other.id}/deliveries?limit=1&cursor=${cursor}`),
        'INVALID_ARGUMENT',
        'the cursor on another subscription',
      );
    },
  }),
  defineCase({
    id: 'deliveries.retry-requires-expired',
    area: 'deliveries',
    level: 'MUST',
    title: 'MUST refuse a manual retry of a delivery that is not EXPIRED (409 STATE_CONFLICT)',
    seed: ['s4-21', 's4-27', 's7-14'],
    async run(ctx: CaseContext) {
      const { sub, conn, deliver } = await leased(ctx);
      const path = `/v1/subscriptions/${sub.id}/deliveries/${deliver.body.delivery.id}:retry`;
      ctx.expectError(
        await ctx.post('full', path, { expected_revision: deliver.body.delivery.revision, reason: 'x', additional_attempts: 1 }),
        'STATE_CONFLICT',
        'retry of a LEASED delivery',
      );
      const reply = await ctx.ack(conn, ctx.latest(deliver));
      ctx.check(reply.type === 'ack', `ACK failed: ${reply.$text}`);
      const now = await ctx.deliveryDetail(sub.id, deliver.body.delivery.id);
      ctx.expectError(
        await ctx.post('full', path, { expected_revision: now.delivery.revision, reason: 'x', additional_attempts: 1 }),
        'STATE_CONFLICT',
        'retry of an ACKED delivery',
      );
    },
  }),
  defineCase({
    id: 'deliveries.expired-after-budget',
    area: 'deliveries',
    level: 'MUST',
    title: 'MUST mark a delivery EXPIRED once its lease runs out with the attempt budget spent, and not send it again',
    seed: ['s7-23', 's2-17'],
    timeoutMs: expiryTimeout,
    async run(ctx: CaseContext) {
      const { sub, conn, deliver, expired } = await expiredDelivery(ctx);
      const d = deliver.body.delivery;
      ctx.check(
        d.attempts === 1 && d.attempt_budget === 1,
        `first delivery: attempts ${d.attempts}, attempt_budget ${d.attempt_budget}; expected 1 and 1`,
      );
      ctx.check(expired.attempts === 1 && expired.lease_until === undefined, `EXPIRED delivery: ${JSON.stringify(expired)}`);
      const again = await conn.poll(deliveryOf(d.id), ctx.quietMs);
      ctx.check(!again, `an EXPIRED delivery was sent again: ${again?.$text}`);
      ctx.equal((await ctx.getSubscription(sub.id)).pending_count, 1, 'pending_count (EXPIRED records count)');
    },
  }),
  defineCase({
    id: 'deliveries.retry-expired',
    area: 'deliveries',
    level: 'MUST',
    title:
      'MUST turn an EXPIRED delivery back to PENDING on retry, adding budget but keeping attempts, epoch and identity; a replay adds ' +
      'nothing',
    seed: ['s4-23', 's4-24', 's4-25', 's4-13', 's4-8'],
    timeoutMs: expiryTimeout,
    async run(ctx: CaseContext) {
      const { sub, conn, deliver, expired } = await expiredDelivery(ctx);
      const d = deliver.body.delivery;
      const path = `/v1/subscriptions/${sub.id}/deliveries/${d.id}:retry`;
      const key = ctx.key();
      const body = { expected_revision: expired.revision, reason: 'receiver repaired', additional_attempts: 2 };
      ctx.expectError(
        await ctx.post('full', path, { ...body, expected_revision: d.revision === expired.revision ? '0' : d.revision }),
        'STATE_CONFLICT',
        'retry with a stale expected_revision',
      );
      const first = ctx.expectData(await ctx.post('full', path, body, { key }), 200, 'retry', validateDeliveryRetryResult);
      const r = first.delivery;
      ctx.equal(first.deduplicated, false, 'deduplicated');
      ctx.equal(
        [r.id, r.event_id, r.lease_epoch, r.attempts, r.attempt_budget],
        [d.id, d.event_id, expired.lease_epoch, 1, 3],
        '[id, event_id, lease_epoch, attempts, attempt_budget] after retry',
      );
      ctx.check(r.state === 'PENDING' || r.state === 'LEASED', `state after retry: ${r.state}`);
      ctx.check(r.revision !== expired.revision, `the delivery revision ${r.revision} did not change with the retry`);
      ctx.equal((await ctx.getSubscription(sub.id)).pending_count, 1, 'pending_count after the retry (the backlog slot is kept)');
      const replay = ctx.expectData(await ctx.post('full', path, body, { key }), 200, 'replayed retry', validateDeliveryRetryResult);
      ctx.equal(replay.deduplicated, true, 'deduplicated of the replay');
      ctx.equal(replay.delivery, first.delivery, 'the replayed receipt');
      const redelivered = await conn.next(deliveryOf(d.id), ctx.redeliveryMs, 'the retried delivery to be sent again');
      ctx.equal(
        [redelivered.body.delivery.lease_epoch, redelivered.body.delivery.attempts, redelivered.body.delivery.attempt_budget],
        [String(BigInt(d.lease_epoch) + 1n), 2, 3],
        '[lease_epoch, attempts, attempt_budget] of the new lease',
      );
      const reply = await ctx.ack(conn, redelivered);
      ctx.check(reply.type === 'ack', `ACK of the retried delivery failed: ${reply.$text}`);
      ctx.equal((await ctx.deliveryDetail(sub.id, d.id)).delivery.attempt_budget, 3, 'attempt_budget after the replay (not added twice)');
    },
  }),
  defineCase({
    id: 'deliveries.retry-budget-cap',
    area: 'deliveries',
    level: 'MUST',
    title:
      'MUST refuse a retry that would take the cumulative attempt budget past 1000000 (409 STATE_CONFLICT, nothing changed), and accept ' +
      'one that reaches it',
    seed: ['s4-23', 's7-14'],
    features: ['attempt-budget'],
    timeoutMs: expiryTimeout,
    async run(ctx: CaseContext) {
      const { sub, expired } = await expiredDelivery(ctx);
      // A retry adds at most 100 attempts and needs the delivery EXPIRED again, one lease at a time:
      // the configured command puts the delivery next to the cap instead.
      await ctx.setAttemptBudget(sub.id, expired.id, 999_950, 999_950);
      const near = (await ctx.deliveryDetail(sub.id, expired.id)).delivery;
      ctx.check(
        near.state === 'EXPIRED' && near.attempts === 999_950 && near.attempt_budget === 999_950,
        `setup: after the attempt-budget command the delivery reads ${JSON.stringify(near)}; expected EXPIRED with attempts and ` +
          `attempt_budget 999950`,
      );
      const path = `/v1/subscriptions/${sub.id}/deliveries/${expired.id}:retry`;
      ctx.expectError(
        await ctx.post('full', path, { expected_revision: near.revision, reason: 'past the cap', additional_attempts: 51 }),
        'STATE_CONFLICT',
        'a retry adding 51 attempts to a budget of 999950',
      );
      const after = (await ctx.deliveryDetail(sub.id, expired.id)).delivery;
      ctx.check(
        after.state === 'EXPIRED' && after.attempt_budget === 999_950 && after.revision === near.revision,
        `the refused retry changed the delivery: ${JSON.stringify(after)}`,
      );
      const ok = ctx.expectData(
        await ctx.post('full', path, { expected_revision: near.revision, reason: 'to the cap', additional_attempts: 50 }),
        200,
        'a retry adding 50 attempts to a budget of 999950 (exactly 1000000)',
        validateDeliveryRetryResult,
      );
      ctx.equal(
        [ok.delivery.state === 'EXPIRED', ok.delivery.attempt_budget],
        [false, 1_000_000],
        '[still EXPIRED, attempt_budget] after the retry',
      );
    },
  }),
  defineCase({
    id: 'deliveries.lease-recovery-without-consumer',
    area: 'deliveries',
    level: 'MAY',
    title: 'MAY recover an expired lease while no consumer is connected: reports the state after the deadline',
    seed: ['s4-26'],
    timeoutMs: expiryTimeout,
    async run(ctx: CaseContext) {
      const { sub, conn, deliver } = await leased(ctx);
      ctx.requireLeaseWithin(deliver, ctx.redeliveryMs);
      await conn.close();
      const started = Date.now();
      await ctx.sleep(ctx.timing.leaseDurationMs + 2_000);
      const now = (await ctx.deliveryDetail(sub.id, deliver.body.delivery.id)).delivery;
      ctx.observe(
        now.state === 'LEASED'
          ? `still LEASED ${Date.now() - started} ms after the consumer left (the seed allows this: recovery waits for the next claim)`
          : `${now.state} ${Date.now() - started} ms after the consumer left: the server recovers leases without a consumer`,
      );
    },
  }),
];

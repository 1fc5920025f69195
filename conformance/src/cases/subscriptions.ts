/**
 * @module
 * Subscriptions (spec/rules.md §1-§3; from_sequence as an exclusive cursor is Orbit's reading):
 * defaults and normalization, ownership and queue scope, listing and cursors, configure revisions,
 * the history start, usage versus revision, the 64-subscription limit and the absence of a hard
 * delete.
 */
import { type Subscription, validateSubscription, validateSubscriptionList, validateSubscriptionResult } from '@orbit/generated';
import { type ConformanceCase, defineCase } from '../case.ts';
import { CheckFailure } from '../errors.ts';
import type { CaseContext } from '../context.ts';
import type { HttpResponse } from '../http.ts';
import { randomId } from '../ids.ts';
import { listAll, postCreate, postRetire, TYPE_ORDER } from './helpers.ts';

function ordered(ctx: CaseContext, items: Subscription[], what: string): void {
  for (let i = 1; i < items.length; i++) {
    const a = items[i - 1]!;
    const b = items[i]!;
    const ta = Date.parse(a.created_at);
    const tb = Date.parse(b.created_at);
    ctx.check(
      ta > tb || (ta === tb && a.id > b.id),
      `${what}: ${a.id} (${a.created_at}) is listed before ${b.id} (${b.created_at}); expected created_at DESC, id DESC`,
    );
  }
}

export const subscriptionCases: ConformanceCase[] = [
  defineCase({
    id: 'subscriptions.create-defaults',
    area: 'subscriptions',
    level: 'MUST',
    title: 'MUST create with 201 and the documented defaults (revision 1, enabled, all four types, 100 pending, 20 attempts)',
    seed: ['s2-12', 's2-4', 's2-6', 's2-7', 's1-5'],
    async run(ctx: CaseContext) {
      const body = ctx.subscriptionBody();
      const res = await postCreate(ctx, body);
      const data = ctx.expectData(res, 201, 'create', validateSubscriptionResult);
      const s = data.subscription;
      ctx.equal(data.deduplicated, false, 'deduplicated');
      ctx.equal(
        [s.name, s.queue_id, s.revision, s.enabled, s.types, s.pending_count, s.max_pending, s.max_attempts],
        [body.name, ctx.queue, '1', true, TYPE_ORDER, 0, 100, 20],
        '[name, queue_id, revision, enabled, types, pending_count, max_pending, max_attempts]',
      );
      ctx.check(
        s.retired_at === undefined && s.retired_sequence === undefined,
        'a new subscription carries retired_at or retired_sequence',
      );
      const own = ctx.credentialId('full');
      if (own) ctx.equal(s.credential_id, own, 'credential_id (the creating credential)');
    },
  }),
  defineCase({
    id: 'subscriptions.types-normalized',
    area: 'subscriptions',
    level: 'MUST',
    title: 'MUST normalize types to the fixed order and treat [] as all four',
    seed: ['s2-15', 's2-4'],
    async run(ctx: CaseContext) {
      ctx.equal(
        (await ctx.createSubscription({ types: ['task.succeeded', 'task.cancelled'] })).types,
        ['task.cancelled', 'task.succeeded'],
        'types of ["task.succeeded","task.cancelled"]',
      );
      ctx.equal((await ctx.createSubscription({ types: [] })).types, TYPE_ORDER, 'types of []');
      ctx.equal(
        (await ctx.createSubscription({ types: ['task.needs_review', 'task.succeeded', 'task.failed', 'task.cancelled'] })).types,
        TYPE_ORDER,
        'types of all four shuffled',
      );
    },
  }),
  defineCase({
    id: 'subscriptions.name-unique-in-namespace',
    area: 'subscriptions',
    level: 'MUST',
    title: 'MUST refuse a name already used in the namespace, by any credential (409 STATE_CONFLICT, or 400 INVALID_ARGUMENT)',
    seed: ['s2-2'],
    async run(ctx: CaseContext) {
      // The seed makes names unique but names no error code for a clash: either refusal will do.
      const sub = await ctx.createSubscription();
      ctx.expectOneOf(
        await postCreate(ctx, { name: sub.name, queue_id: ctx.queue }),
        ['STATE_CONFLICT', 'INVALID_ARGUMENT'],
        'a second create with the same name and a new key',
      );
      ctx.expectOneOf(
        await postCreate(ctx, { name: sub.name, queue_id: ctx.queue }, 'sameNamespace'),
        ['STATE_CONFLICT', 'INVALID_ARGUMENT'],
        'the same name by another credential of the namespace',
      );
      if (ctx.config.queues.otherNamespace && ctx.config.credentials.otherNamespace) {
        const other = await postCreate(ctx, { name: sub.name, queue_id: ctx.otherNamespaceQueue }, 'otherNamespace');
        ctx.expectData(other, 201, 'the same name in another namespace', validateSubscriptionResult);
      }
    },
  }),
  defineCase({
    id: 'subscriptions.get-current',
    area: 'subscriptions',
    level: 'MUST',
    title: 'MUST return the current configuration on GET /v1/subscriptions/{id}',
    seed: ['s3-1', 's3-2'],
    async run(ctx: CaseContext) {
      const sub = await ctx.createSubscription();
      const paused = await ctx.configure(sub.id, false);
      const now = await ctx.getSubscription(sub.id);
      ctx.check(now.revision === '2' && now.enabled === false, `GET after pausing: ${JSON.stringify(now)}`);
      ctx.equal(now, paused, 'GET versus the configure receipt');
    },
  }),
  defineCase({
    id: 'subscriptions.list-own-in-queue',
    area: 'subscriptions',
    level: 'MUST',
    title: "MUST list only the calling credential's subscriptions of the given queue",
    seed: ['s3-5', 's3-4'],
    async run(ctx: CaseContext) {
      const mine = await ctx.createSubscription();
      const theirs = await ctx.createSubscription({}, 'sameNamespace');
      const listed = await listAll(ctx, 'full', '/v1/subscriptions', `queue_id=${ctx.queue}`, validateSubscriptionList);
      ctx.check(
        listed.some((s) => s.id === mine.id),
        'full does not see its own subscription',
      );
      ctx.check(!listed.some((s) => s.id === theirs.id), 'full sees a subscription of the other credential');
      ctx.check(
        listed.every((s) => s.queue_id === ctx.queue),
        'the list holds a subscription of another queue',
      );
      const theirList = await listAll(ctx, 'sameNamespace', '/v1/subscriptions', `queue_id=${ctx.queue}`, validateSubscriptionList);
      ctx.check(
        theirList.some((s) => s.id === theirs.id) && !theirList.some((s) => s.id === mine.id),
        'the other credential sees the wrong subscriptions',
      );
      for (const s of listed) ctx.validate(validateSubscription, s, 'a listed subscription');
    },
  }),
  defineCase({
    id: 'subscriptions.list-order-and-pages',
    area: 'subscriptions',
    level: 'MUST',
    title: 'MUST list by created_at DESC, id DESC, 20 per page by default, with a next_cursor on every page but the last',
    seed: ['s3-5', 's3-3', 's3-4'],
    async run(ctx: CaseContext) {
      const created = [await ctx.createSubscription(), await ctx.createSubscription(), await ctx.createSubscription()];
      const seen: Subscription[] = [];
      let cursor: string | undefined;
      for (let i = 0; i < 3; i++) {
        const page = ctx.expectData(
          await ctx.get('full', `/v1/subscriptions?queue_id=${ctx.queue}&limit=1${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`),
          200,
          `page ${i + 1}`,
          validateSubscriptionList,
        );
        ctx.equal(page.items.length, 1, `items on page ${i + 1} with limit=1`);
        seen.push(page.items[0]!);
        cursor = page.next_cursor;
        ctx.check(typeof cursor === 'string' || i === 2, `page ${i + 1} of at least 3 has no next_cursor`);
      }
      ctx.equal(
        seen.map((s) => s.id),
        created.map((s) => s.id).reverse(),
        'the three newest subscriptions, newest first',
      );
      const all = await listAll(ctx, 'full', '/v1/subscriptions', `queue_id=${ctx.queue}`, validateSubscriptionList);
      ordered(ctx, all, 'the full list');
      const first = ctx.expectData(
        await ctx.get('full', `/v1/subscriptions?queue_id=${ctx.queue}`),
        200,
        'a page without limit',
        validateSubscriptionList,
      );
      ctx.equal(first.items.length, Math.min(20, all.length), 'items on a page without limit (default 20)');
      ctx.check(
        (first.next_cursor !== undefined) === all.length > 20,
        `next_cursor ${first.next_cursor === undefined ? 'absent' : 'present'} on the first of ${all.length} items with the default limit`,
      );
      ctx.equal(new Set(all.map((s) => s.id)).size, all.length, 'distinct ids across pages');
    },
  }),
  defineCase({
    id: 'subscriptions.list-cursor-bound',
    area: 'subscriptions',
    level: 'MUST',
    title: 'MUST refuse a list cursor used with another queue or another credential (400 INVALID_ARGUMENT)',
    seed: ['s3-6'],
    async run(ctx: CaseContext) {
      await ctx.createSubscription();
      await ctx.createSubscription();
      const page = ctx.expectData(
        await ctx.get('full', `/v1/subscriptions?queue_id=${ctx.queue}&limit=1`),
        200,
        'first page',
        validateSubscriptionList,
      );
      const cursor = encodeURIComponent(page.next_cursor ?? ctx.skip('no next_cursor'));
      ctx.expectError(
        await ctx.get('sameNamespace', `/v1/subscriptions?queue_id=${ctx.queue}&limit=1&cursor=${cursor}`),
        'INVALID_ARGUMENT',
        'the cursor used by another credential',
      );
      if (ctx.config.queues.secondary) {
        ctx.expectError(
          await ctx.get('full', `/v1/subscriptions?queue_id=${ctx.secondaryQueue}&limit=1&cursor=${cursor}`),
          'INVALID_ARGUMENT',
          'the cursor used with another queue',
        );
      } else ctx.log.note('no queues.secondary: the other-queue half was not checked');
    },
  }),
  defineCase({
    id: 'subscriptions.other-credential-not-found',
    area: 'subscriptions',
    level: 'MUST',
    title: 'MUST answer NOT_FOUND when another credential of the same namespace touches a subscription',
    seed: ['s1-7', 's7-13'],
    async run(ctx: CaseContext) {
      const sub = await ctx.createSubscription();
      const as = 'sameNamespace';
      ctx.expectError(await ctx.get(as, `/v1/subscriptions/${sub.id}`), 'NOT_FOUND', 'GET');
      ctx.expectError(
        await ctx.post(as, `/v1/subscriptions/${sub.id}:configure`, { expected_revision: '1', enabled: false, reason: 'x' }),
        'NOT_FOUND',
        'configure',
      );
      ctx.expectError(
        await ctx.post(as, `/v1/subscriptions/${sub.id}:retire`, { expected_revision: '1', reason: 'x' }),
        'NOT_FOUND',
        'retire',
      );
      ctx.expectError(await ctx.get(as, `/v1/subscriptions/${sub.id}/deliveries`), 'NOT_FOUND', 'list deliveries');
      const after = await ctx.getSubscription(sub.id);
      ctx.check(
        after.revision === '1' && after.enabled && !after.retired_at,
        `the other credential changed the subscription: ${JSON.stringify(after)}`,
      );
    },
  }),
  defineCase({
    id: 'subscriptions.other-namespace-not-found',
    area: 'subscriptions',
    level: 'MUST',
    title: 'MUST answer NOT_FOUND when a credential of another namespace touches a subscription',
    seed: ['s1-6', 's7-13'],
    async run(ctx: CaseContext) {
      const sub = await ctx.createSubscription();
      ctx.expectError(await ctx.get('otherNamespace', `/v1/subscriptions/${sub.id}`), 'NOT_FOUND', 'GET');
      ctx.expectError(
        await ctx.post('otherNamespace', `/v1/subscriptions/${sub.id}:configure`, { expected_revision: '1', enabled: false, reason: 'x' }),
        'NOT_FOUND',
        'configure',
      );
      ctx.expectError(await ctx.get('otherNamespace', `/v1/subscriptions/${sub.id}/deliveries`), 'NOT_FOUND', 'list deliveries');
    },
  }),
  defineCase({
    id: 'subscriptions.queue-out-of-scope',
    area: 'subscriptions',
    level: 'MUST',
    title: "MUST refuse to create a subscription on a queue outside the credential's scope",
    seed: ['s1-6'],
    async run(ctx: CaseContext) {
      ctx.expectOneOf(
        await postCreate(ctx, ctx.subscriptionBody({ queue_id: randomId() })),
        ['NOT_FOUND', 'PERMISSION_DENIED'],
        'create on an unknown queue',
      );
      if (ctx.config.queues.otherNamespace) {
        ctx.expectOneOf(
          await postCreate(ctx, ctx.subscriptionBody({ queue_id: ctx.otherNamespaceQueue })),
          ['NOT_FOUND', 'PERMISSION_DENIED'],
          'create on a queue of another namespace',
        );
      }
      ctx.expectOneOf(
        await ctx.get('full', `/v1/subscriptions?queue_id=${randomId()}`),
        ['NOT_FOUND', 'PERMISSION_DENIED', 'INVALID_ARGUMENT'],
        'list an unknown queue',
      );
    },
  }),
  defineCase({
    id: 'subscriptions.pause-resume-revision',
    area: 'subscriptions',
    level: 'MUST',
    title: 'MUST pause and resume through configure, each success incrementing the revision',
    seed: ['s3-7', 's3-10'],
    async run(ctx: CaseContext) {
      const sub = await ctx.createSubscription();
      const paused = await ctx.configure(sub.id, false);
      ctx.check(paused.enabled === false && paused.revision === '2', `after pause: ${JSON.stringify(paused)}`);
      const resumed = await ctx.configure(sub.id, true);
      ctx.check(resumed.enabled === true && resumed.revision === '3', `after resume: ${JSON.stringify(resumed)}`);
      ctx.equal(
        [resumed.name, resumed.types, resumed.max_pending, resumed.max_attempts, resumed.queue_id],
        [sub.name, sub.types, sub.max_pending, sub.max_attempts, sub.queue_id],
        'fields configure must not change',
      );
    },
  }),
  defineCase({
    id: 'subscriptions.same-value-bumps-revision',
    area: 'subscriptions',
    level: 'MUST',
    title: 'MUST treat a configure with the current enabled value as a new audited operation (revision increments)',
    seed: ['s3-15'],
    async run(ctx: CaseContext) {
      const sub = await ctx.createSubscription();
      ctx.equal((await ctx.configure(sub.id, true)).revision, '2', 'revision after enabled=true on an enabled subscription');
      ctx.equal((await ctx.configure(sub.id, true)).revision, '3', 'revision after a second enabled=true');
    },
  }),
  defineCase({
    id: 'subscriptions.stale-revision-conflict',
    area: 'subscriptions',
    level: 'MUST',
    title: 'MUST refuse a configure whose expected_revision is not current (409 STATE_CONFLICT)',
    seed: ['s3-9', 's7-14'],
    async run(ctx: CaseContext) {
      const sub = await ctx.createSubscription();
      await ctx.configure(sub.id, false);
      for (const expected_revision of ['1', '3', '0']) {
        ctx.expectError(
          await ctx.post('full', `/v1/subscriptions/${sub.id}:configure`, { expected_revision, enabled: true, reason: 'x' }),
          'STATE_CONFLICT',
          `configure with expected_revision ${expected_revision} at revision 2`,
        );
      }
      ctx.equal((await ctx.getSubscription(sub.id)).enabled, false, 'enabled after the refused configures');
    },
  }),
  defineCase({
    id: 'subscriptions.from-sequence-exclusive',
    area: 'subscriptions',
    level: 'MUST',
    title: 'MUST start delivery after from_sequence (exclusive) and set cursor_sequence to it',
    orbit: {
      anchor: 'subscription-choices',
      text: 'from_sequence is an exclusive cursor: cursor_sequence starts there and results with a larger sequence are delivered',
    },
    async run(ctx: CaseContext) {
      const first = await ctx.publish({ type: 'task.succeeded' });
      const second = await ctx.publish({ type: 'task.succeeded' });
      const sub = await ctx.createSubscription({ from_sequence: first.sequence });
      ctx.equal(sub.cursor_sequence, first.sequence, 'cursor_sequence');
      const { conn } = await ctx.bind(sub.id, 4);
      await conn.next(
        (f) => f.type === 'event.deliver' && f.body.event.id === second.id,
        ctx.deliverMs,
        `the event ${second.id} after from_sequence`,
      );
      await conn.poll((f) => f.type === 'event.deliver' && f.body.event.id === first.id, ctx.quietMs);
      const early = conn.received.find((f) => f.type === 'event.deliver' && f.body.event.id === first.id);
      ctx.check(!early, `the event at from_sequence itself (${first.id}, sequence ${first.sequence}) was delivered`);
    },
  }),
  defineCase({
    id: 'subscriptions.default-starts-at-head',
    area: 'subscriptions',
    level: 'MUST',
    title: 'MUST start a subscription without from_sequence after the committed head at creation',
    seed: ['s2-5'],
    async run(ctx: CaseContext) {
      const before = await ctx.publish({ type: 'task.succeeded' });
      const sub = await ctx.createSubscription({ from_sequence: null });
      ctx.check(
        BigInt(sub.cursor_sequence) >= BigInt(before.sequence),
        `cursor_sequence ${sub.cursor_sequence} is below the sequence ${before.sequence} committed before creation`,
      );
      const { conn } = await ctx.bind(sub.id, 4);
      const after = await ctx.publish({ type: 'task.succeeded' });
      const deliver = await ctx.deliver(conn);
      ctx.equal(deliver.body.event.id, after.id, 'the first delivered event');
      ctx.check(
        !(await conn.poll((f) => f.type === 'event.deliver' && f.body.event.id === before.id, ctx.quietMs)),
        'a result committed before creation was delivered',
      );
    },
  }),
  defineCase({
    id: 'subscriptions.usage-does-not-change-revision',
    area: 'subscriptions',
    level: 'MUST',
    title: 'MUST keep the configuration revision unchanged by materialization and ACKs while pending_count follows the backlog',
    seed: ['s2-18', 's2-17', 's2-16'],
    async run(ctx: CaseContext) {
      const sub = await ctx.createSubscription();
      const { conn } = await ctx.bind(sub.id);
      const event = await ctx.publish({ type: 'task.cancelled' });
      const deliver = await ctx.deliver(conn);
      const leasedNow = await ctx.getSubscription(sub.id);
      ctx.check(
        leasedNow.revision === '1' && leasedNow.pending_count === 1,
        `while leased: revision ${leasedNow.revision}, pending_count ${leasedNow.pending_count}; expected "1" and 1`,
      );
      ctx.check(
        BigInt(leasedNow.cursor_sequence) >= BigInt(event.sequence),
        `cursor_sequence ${leasedNow.cursor_sequence} is below the materialized sequence ${event.sequence}`,
      );
      const reply = await ctx.ack(conn, ctx.latest(deliver));
      ctx.check(reply.type === 'ack', `ACK failed: ${reply.$text}`);
      const acked = await ctx.getSubscription(sub.id);
      ctx.check(
        acked.revision === '1' && acked.pending_count === 0,
        `after ACK: revision ${acked.revision}, pending_count ${acked.pending_count}; expected "1" and 0`,
      );
    },
  }),
  defineCase({
    id: 'subscriptions.limit-64',
    area: 'subscriptions',
    level: 'MUST',
    title:
      'MUST allow 64 non-retired subscriptions per namespace (paused ones count, retired ones do not), then answer 409 SUBSCRIPTION_LIMIT',
    seed: ['s2-19', 's7-16'],
    features: ['subscription-limit'],
    timeoutMs: 120_000,
    async run(ctx: CaseContext) {
      const created: Subscription[] = [];
      let limited: HttpResponse | null = null;
      for (let i = 0; i < 65; i++) {
        const res = await postCreate(ctx, ctx.subscriptionBody());
        if (res.status === 201) {
          created.push(ctx.expectData(res, 201, `create number ${created.length + 1}`, validateSubscriptionResult).subscription);
          continue;
        }
        limited = res;
        break;
      }
      if (!limited) throw new CheckFailure('the 65th non-retired subscription of the namespace was created');
      ctx.expectError(limited, 'SUBSCRIPTION_LIMIT', `create number ${created.length + 1}`);
      ctx.equal(created.length, 64, 'subscriptions created before the limit (the namespace must hold no others)');
      await ctx.configure(created[0]!.id, false);
      ctx.expectError(await postCreate(ctx, ctx.subscriptionBody()), 'SUBSCRIPTION_LIMIT', 'create after pausing one');
      const victim = created[1]!;
      ctx.expectData(
        await postRetire(ctx, victim.id, victim.revision, { reason: 'free a slot' }),
        200,
        'retire one',
        validateSubscriptionResult,
      );
      ctx.expectData(await postCreate(ctx, ctx.subscriptionBody()), 201, 'create after retiring one', validateSubscriptionResult);
    },
  }),
  defineCase({
    id: 'subscriptions.no-hard-delete',
    area: 'subscriptions',
    level: 'MUST',
    title: 'MUST offer no hard delete and no way to change the filter, the history start or the owner',
    seed: ['s1-23'],
    async run(ctx: CaseContext) {
      const sub = await ctx.createSubscription();
      for (const method of ['DELETE', 'PUT', 'PATCH']) {
        const res = await ctx.request(
          'full',
          method,
          `/v1/subscriptions/${sub.id}`,
          method === 'DELETE' ? { key: ctx.key() } : { key: ctx.key(), body: { enabled: false } },
        );
        ctx.check(res.status >= 400, `${method} /v1/subscriptions/{id} answered ${res.status}`);
      }
      for (const action of ['delete', 'rebind', 'reset']) {
        const res = await ctx.post('full', `/v1/subscriptions/${sub.id}:${action}`, { expected_revision: '1', reason: 'x' });
        ctx.check(res.status >= 400, `POST :${action} answered ${res.status}`);
      }
      for (const [field, value] of [
        ['types', ['task.failed']],
        ['from_sequence', '0'],
        ['queue_id', ctx.queue],
        ['credential_id', randomId()],
      ] as const) {
        const res = await ctx.post('full', `/v1/subscriptions/${sub.id}:configure`, {
          expected_revision: '1',
          enabled: true,
          reason: 'x',
          [field]: value,
        });
        ctx.expectError(res, 'INVALID_ARGUMENT', `configure with "${field}"`);
      }
      const after = await ctx.getSubscription(sub.id);
      ctx.equal(after, sub, 'the subscription after the refused requests');
    },
  }),
];

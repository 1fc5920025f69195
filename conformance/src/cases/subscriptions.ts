/**
 * @module
 * Subscriptions (spec/rules.md §1-§3): creation with its defaults and normalization, unique names,
 * reading, listing with its order and cursors, and ownership and queue scope; and Orbit's list of
 * the queues a credential may name (GET /v1/queues, an extension to the seed, behind the
 * `queue-list` feature). Changing a subscription and its limits are in subscriptions-lifecycle.ts.
 */
import {
  type Queue,
  type Subscription,
  validateQueueList,
  validateSubscription,
  validateSubscriptionList,
  validateSubscriptionResult,
} from '@orbit/generated';
import { type ConformanceCase, defineCase } from '../case.ts';
import type { CaseContext } from '../context.ts';
import { randomId } from '../ids.ts';
import { listAll, postCreate, TYPE_ORDER } from './helpers.ts';

function ordered(ctx: CaseContext, items: readonly Pick<Subscription | Queue, 'id' | 'created_at'>[], what: string): void {
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
    id: 'subscriptions.queue-list-own-scope',
    area: 'subscriptions',
    level: 'MUST',
    title: "MUST list on GET /v1/queues exactly the calling credential's queues, newest first, paged with cursors bound to it",
    orbit: {
      anchor: 'access-views',
      text:
        "GET /v1/queues (events:read) lists the queues of the credential's queue set, never another queue, newest first and " +
        'paged like the other lists',
    },
    features: ['queue-list'],
    async run(ctx: CaseContext) {
      const listed = await listAll(ctx, 'full', '/v1/queues', '', validateQueueList);
      const ids = listed.map((q) => q.id);
      ctx.check(ids.includes(ctx.queue), `queues.primary ${ctx.queue} is not in the list ${JSON.stringify(ids)}`);
      const secondary = ctx.config.queues.secondary;
      if (secondary) ctx.check(ids.includes(secondary), `queues.secondary ${secondary} is not in the list`);
      const foreign = ctx.config.queues.otherNamespace;
      if (foreign) ctx.check(!ids.includes(foreign), `the queue ${foreign} of another namespace is listed`);
      ctx.equal(new Set(ids).size, ids.length, 'distinct queue ids');
      ordered(ctx, listed, 'GET /v1/queues');
      // Every listed queue is one the credential may name: its subscriptions can be listed.
      for (const q of listed)
        ctx.expectData(
          await ctx.get('full', `/v1/subscriptions?queue_id=${q.id}&limit=1`),
          200,
          `subscriptions of the listed queue ${q.name}`,
          validateSubscriptionList,
        );

      const paged: string[] = [];
      let cursor: string | undefined;
      for (let page = 0; page < 50; page++) {
        const query = `limit=1${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
        const data = ctx.expectData(await ctx.get('full', `/v1/queues?${query}`), 200, `GET /v1/queues?${query}`, validateQueueList);
        paged.push(...data.items.map((q) => q.id));
        cursor = data.next_cursor;
        if (!cursor) break;
      }
      ctx.equal(paged, ids, 'the pages of one queue chained by next_cursor');

      if (ids.length > 1) {
        const first = ctx.expectData(await ctx.get('full', '/v1/queues?limit=1'), 200, 'first page', validateQueueList).next_cursor ?? '';
        ctx.expectError(
          await ctx.get('sameNamespace', `/v1/queues?cursor=${encodeURIComponent(first)}`),
          'INVALID_ARGUMENT',
          "another credential's cursor",
        );
      }
      ctx.expectError(await ctx.get('full', '/v1/queues?limit=0'), 'INVALID_ARGUMENT', 'limit=0');
      ctx.expectError(await ctx.get('full', `/v1/queues?queue_id=${ctx.queue}`), 'INVALID_ARGUMENT', 'an unknown query parameter');
      ctx.expectError(await ctx.get('noEvents', '/v1/queues'), 'PERMISSION_DENIED', 'a credential without events:read');
    },
  }),
];

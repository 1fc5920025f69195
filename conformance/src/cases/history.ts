/**
 * @module
 * Orbit's configuration history (an extension to the seed: GET /v1/subscriptions/{id}/history).
 * Every case needs the `history` feature, so a server that implements only the seed skips them.
 */
import { type SubscriptionHistory, validateSubscriptionHistory, validateSubscriptionResult } from '@orbit/generated';
import { defineCase, type ConformanceCase } from '../case.ts';
import type { CaseContext } from '../context.ts';

function history(ctx: CaseContext, id: string, query = '', what = 'history'): Promise<SubscriptionHistory> {
  return ctx
    .get('full', `/v1/subscriptions/${id}/history${query}`)
    .then((res) => ctx.expectData(res, 200, what, validateSubscriptionHistory));
}

/** Pauses or resumes with a given reason and key; returns the new revision. */
async function configure(
  ctx: CaseContext,
  id: string,
  body: { expected_revision: string; enabled: boolean; reason: string },
  key = ctx.key(),
): Promise<string> {
  const data = ctx.expectData(
    await ctx.post('full', `/v1/subscriptions/${id}:configure`, body, { key }),
    200,
    `configure enabled=${body.enabled}`,
    validateSubscriptionResult,
  );
  return data.subscription.revision as string;
}

export const historyCases: ConformanceCase[] = [
  defineCase({
    id: 'history.records-each-change-once',
    area: 'history',
    level: 'MUST',
    title: 'MUST list create, pause, resume and retire newest first, each once with its reason and the revision it produced',
    orbit: {
      anchor: 'subscription-choices',
      text:
        'every create, pause, resume, retire and retry writes one history entry in the same transaction; replays and refusals write ' +
        'none',
    },
    features: ['history'],
    async run(ctx: CaseContext) {
      const sub = await ctx.createSubscription();
      const pauseKey = ctx.key();
      const pause = { expected_revision: sub.revision, enabled: false, reason: 'receiver maintenance' };
      const paused = await configure(ctx, sub.id, pause, pauseKey);
      await configure(ctx, sub.id, pause, pauseKey);
      ctx.expectError(
        await ctx.post('full', `/v1/subscriptions/${sub.id}:configure`, { ...pause, reason: 'stale' }),
        'STATE_CONFLICT',
        'configure with a stale revision',
      );
      const resumed = await configure(ctx, sub.id, { expected_revision: paused, enabled: true, reason: 'maintenance over' });
      const retired = ctx.expectData(
        await ctx.post('full', `/v1/subscriptions/${sub.id}:retire`, { expected_revision: resumed, reason: 'replaced' }),
        200,
        'retire',
        validateSubscriptionResult,
      );
      const page = await history(ctx, sub.id, '?limit=100');
      ctx.equal(
        page.items.map((e) => [e.action, e.reason, e.revision]),
        [
          ['retire', 'replaced', retired.subscription.revision],
          ['resume', 'maintenance over', resumed],
          ['pause', 'receiver maintenance', paused],
          ['create', '', sub.revision],
        ],
        'history entries (action, reason, revision)',
      );
    },
  }),
  defineCase({
    id: 'history.pages-and-scope',
    area: 'history',
    level: 'MUST',
    title: 'MUST page the history with cursors bound to the subscription, and hide it from other credentials',
    orbit: {
      anchor: 'subscription-choices',
      text: 'the history is paged like the other lists and readable only by the owning credential with events:read',
    },
    features: ['history'],
    async run(ctx: CaseContext) {
      const sub = await ctx.createSubscription();
      let revision = sub.revision;
      for (let i = 0; i < 4; i++)
        revision = await configure(ctx, sub.id, { expected_revision: revision, enabled: i % 2 === 1, reason: `step ${i}` });
      const whole = (await history(ctx, sub.id, '?limit=100')).items;
      ctx.equal(whole.length, 5, 'entries after create and four configures');
      const paged: SubscriptionHistory['items'] = [];
      let cursor: string | undefined;
      for (let page = 0; page < 10; page++) {
        const current = await history(
          ctx,
          sub.id,
          `?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
          `history page ${page + 1}`,
        );
        paged.push(...current.items);
        cursor = current.next_cursor;
        if (cursor === undefined) break;
      }
      ctx.equal(
        paged.map((e) => e.id),
        whole.map((e) => e.id),
        'the pages chained by next_cursor',
      );

      const first = (await history(ctx, sub.id, '?limit=1')).next_cursor ?? '';
      const other = await ctx.createSubscription();
      ctx.expectError(
        await ctx.get('full', `/v1/subscriptions/${other.id}/history?cursor=${encodeURIComponent(first)}`),
        'INVALID_ARGUMENT',
        "another subscription's cursor",
      );
      ctx.expectError(await ctx.get('full', `/v1/subscriptions/${sub.id}/history?limit=0`), 'INVALID_ARGUMENT', 'limit=0');
      ctx.expectError(
        await ctx.get('full', `/v1/subscriptions/${sub.id}/history?state=PENDING`),
        'INVALID_ARGUMENT',
        'an unknown query parameter',
      );
      ctx.expectError(
        await ctx.get('sameNamespace', `/v1/subscriptions/${sub.id}/history`),
        'NOT_FOUND',
        'another credential of the namespace',
      );
      ctx.expectError(
        await ctx.get('noEvents', `/v1/subscriptions/${sub.id}/history`),
        'PERMISSION_DENIED',
        'a credential without events:read',
      );
    },
  }),
];

/**
 * @module
 * Routes for subscriptions: create, list, get, configure, retire (spec/rules.md#s2-1, #s3-1), and
 * Orbit's configuration history and connected sessions (spec/README.md, Subscriptions).
 */
import {
  validateConfigureSubscriptionRequest,
  validateCreateSubscriptionRequest,
  validateRetireSubscriptionRequest,
  PATTERNS,
  type GuardedOperation,
} from '@orbit/generated';
import { OrbitError } from '@orbit/spec/errors';
import type { Hono } from 'hono';
import type { Page, Principal, SubscriptionRecord } from '../store/store.ts';
import { dataResponse } from '../wire/envelope.ts';
import { historyJson, sessionJson, subscriptionJson } from '../wire/json.ts';
import { pageJson } from '../wire/page.ts';
import { writeKey, writtenResponse } from '../wire/receipts.ts';
import type { AppEnv, RouteContext } from './context.ts';
import { idempotencyKey, parseCursor, parseLimit, parseQuery, parseTarget, readJsonBody } from './request.ts';

const answer = (subscription: SubscriptionRecord) => ({ subscription: subscriptionJson(subscription) });

export function subscriptionRoutes(app: Hono<AppEnv>, { store, authorize, nodeTtlMs }: RouteContext): void {
  app.post('/v1/subscriptions', async (c) => {
    const who = await authorize(c.req.raw, 'CreateSubscription');
    parseQuery(c.req.url, []);
    const key = idempotencyKey(c.req.header('idempotency-key'));
    const body = await readJsonBody(c.req.raw, validateCreateSubscriptionRequest);
    const written = await store.createSubscription(who, body.value, writeKey(key, body.digest, 201, answer));
    return writtenResponse(c.get('requestId'), written);
  });

  app.get('/v1/subscriptions', async (c) => {
    const who = await authorize(c.req.raw, 'ListSubscriptions');
    const query = parseQuery(c.req.url, ['queue_id', 'limit', 'cursor']);
    if (query.queue_id === undefined) throw new OrbitError('INVALID_ARGUMENT', 'queue_id is required');
    if (!PATTERNS.id.test(query.queue_id)) throw new OrbitError('INVALID_ARGUMENT', 'queue_id must be 32 lower-case hex characters');
    const limit = parseLimit(query.limit);
    const cursor = parseCursor(query.cursor);
    const page = await store.listSubscriptions(who, { queueId: query.queue_id, limit, ...(cursor ? { cursor } : {}) });
    return dataResponse(c.get('requestId'), 200, pageJson(page, subscriptionJson));
  });

  app.get('/v1/subscriptions/:target', async (c) => {
    const who = await authorize(c.req.raw, 'GetSubscription');
    parseQuery(c.req.url, []);
    const { id, action } = parseTarget(c.req.param('target'), []);
    if (action !== null) throw new OrbitError('NOT_FOUND', 'no such resource');
    return dataResponse(c.get('requestId'), 200, subscriptionJson(await store.getSubscription(who, id)));
  });

  // The two lists under one subscription, paged alike: its configuration history and its sessions.
  const listUnder = <R>(
    path: 'history' | 'sessions',
    operation: GuardedOperation,
    list: (who: Principal, args: { subscriptionId: string; limit: number; cursor?: string }) => Promise<Page<R>>,
    toJson: (record: R) => unknown,
  ) =>
    app.get(`/v1/subscriptions/:id/${path}`, async (c) => {
      const who = await authorize(c.req.raw, operation);
      const query = parseQuery(c.req.url, ['limit', 'cursor']);
      const { id, action } = parseTarget(c.req.param('id'), []);
      if (action !== null) throw new OrbitError('NOT_FOUND', 'no such resource');
      const limit = parseLimit(query.limit);
      const cursor = parseCursor(query.cursor);
      const page = await list(who, { subscriptionId: id, limit, ...(cursor ? { cursor } : {}) });
      return dataResponse(c.get('requestId'), 200, pageJson(page, toJson));
    });
  listUnder('history', 'ListSubscriptionHistory', (who, args) => store.listHistory(who, args), historyJson);
  listUnder('sessions', 'ListSubscriptionSessions', (who, args) => store.listSessions(who, { ...args, nodeTtlMs }), sessionJson);

  app.post('/v1/subscriptions/:target', async (c) => {
    const target = c.req.param('target');
    const who = await authorize(c.req.raw, target.endsWith(':retire') ? 'RetireSubscription' : 'ConfigureSubscription');
    parseQuery(c.req.url, []);
    const { id, action } = parseTarget(target, ['configure', 'retire']);
    if (action === null) throw new OrbitError('NOT_FOUND', 'no such resource');
    const key = idempotencyKey(c.req.header('idempotency-key'));
    const written =
      action === 'configure'
        ? await readJsonBody(c.req.raw, validateConfigureSubscriptionRequest).then((body) =>
            store.configureSubscription(who, id, body.value, writeKey(key, body.digest, 200, answer)),
          )
        : await readJsonBody(c.req.raw, validateRetireSubscriptionRequest).then((body) =>
            store.retireSubscription(who, id, body.value, writeKey(key, body.digest, 200, answer)),
          );
    return writtenResponse(c.get('requestId'), written);
  });
}

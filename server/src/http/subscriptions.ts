/**
 * @module
 * Routes for subscriptions: create, list, get, configure, retire (seed §2–§3, brief decision 4),
 * and Orbit's configuration history and connected sessions.
 */
import type { Hono } from 'hono';
import { OrbitError } from '@orbit/spec/errors';
import {
  validateConfigureSubscriptionRequest,
  validateCreateSubscriptionRequest,
  validateRetireSubscriptionRequest,
} from '@orbit/generated';
import type { Page } from '../store/paging.ts';
import type { Principal } from '../store/principal.ts';
import type { ConfigureInput, CreateSubscriptionInput, RetireInput } from '../store/subscriptions.ts';
import type { AppEnv, RouteContext } from './app.ts';
import { dataResponse } from './envelope.ts';
import { idempotencyKey, parseCursor, parseLimit, parseQuery, readJsonBody } from './request.ts';

const ID = /^[0-9a-f]{32}$/;

/** Splits `{id}` or `{id}:{action}`; a malformed id names no resource. */
export function parseTarget(target: string, actions: readonly string[]): { id: string; action: string | null } {
  const colon = target.indexOf(':');
  const id = colon < 0 ? target : target.slice(0, colon);
  const action = colon < 0 ? null : target.slice(colon + 1);
  if (!ID.test(id) || (action !== null && !actions.includes(action))) throw new OrbitError('NOT_FOUND', 'no such resource');
  return { id, action };
}

export function subscriptionRoutes(app: Hono<AppEnv>, { store, principal, nodeTtlMs }: RouteContext): void {
  app.post('/v1/subscriptions', async (c) => {
    const who = await principal(c.req.raw, 'events:manage');
    parseQuery(c.req.url, []);
    const key = idempotencyKey(c.req.header('idempotency-key'));
    const body = await readJsonBody<CreateSubscriptionInput>(c.req.raw, validateCreateSubscriptionRequest, { uint64: ['from_sequence'] });
    const receipt = await store.createSubscription(who, key, body.digest, body.value);
    return dataResponse(c.get('requestId'), receipt.status, receipt.data);
  });

  app.get('/v1/subscriptions', async (c) => {
    const who = await principal(c.req.raw, 'events:read');
    const query = parseQuery(c.req.url, ['queue_id', 'limit', 'cursor']);
    if (query.queue_id === undefined) throw new OrbitError('INVALID_ARGUMENT', 'queue_id is required');
    if (!ID.test(query.queue_id)) throw new OrbitError('INVALID_ARGUMENT', 'queue_id must be 32 lower-case hex characters');
    const limit = parseLimit(query.limit);
    const cursor = parseCursor(query.cursor);
    const page = await store.listSubscriptions(who, { queueId: query.queue_id, limit, ...(cursor ? { cursor } : {}) });
    return dataResponse(c.get('requestId'), 200, page);
  });

  app.get('/v1/subscriptions/:target', async (c) => {
    const who = await principal(c.req.raw, 'events:read');
    parseQuery(c.req.url, []);
    const { id, action } = parseTarget(c.req.param('target'), []);
    if (action !== null) throw new OrbitError('NOT_FOUND', 'no such resource');
    return dataResponse(c.get('requestId'), 200, await store.getSubscription(who, id));
  });

  // The two lists under one subscription, paged alike: its configuration history and its sessions.
  const listUnder = (
    path: 'history' | 'sessions',
    list: (who: Principal, args: { subscriptionId: string; limit: number; cursor?: string }) => Promise<Page<Record<string, unknown>>>,
  ) =>
    app.get(`/v1/subscriptions/:id/${path}`, async (c) => {
      const who = await principal(c.req.raw, 'events:read');
      const query = parseQuery(c.req.url, ['limit', 'cursor']);
      const { id, action } = parseTarget(c.req.param('id'), []);
      if (action !== null) throw new OrbitError('NOT_FOUND', 'no such resource');
      const limit = parseLimit(query.limit);
      const cursor = parseCursor(query.cursor);
      return dataResponse(c.get('requestId'), 200, await list(who, { subscriptionId: id, limit, ...(cursor ? { cursor } : {}) }));
    });
  listUnder('history', (who, args) => store.listHistory(who, args));
  listUnder('sessions', (who, args) => store.listSessions(who, { ...args, nodeTtlMs }));

  app.post('/v1/subscriptions/:target', async (c) => {
    const who = await principal(c.req.raw, 'events:manage');
    parseQuery(c.req.url, []);
    const { id, action } = parseTarget(c.req.param('target'), ['configure', 'retire']);
    if (action === null) throw new OrbitError('NOT_FOUND', 'no such resource');
    const key = idempotencyKey(c.req.header('idempotency-key'));
    if (action === 'configure') {
      const body = await readJsonBody<ConfigureInput>(c.req.raw, validateConfigureSubscriptionRequest, { uint64: ['expected_revision'] });
      const receipt = await store.configureSubscription(who, id, key, body.digest, body.value);
      return dataResponse(c.get('requestId'), receipt.status, receipt.data);
    }
    const body = await readJsonBody<RetireInput>(c.req.raw, validateRetireSubscriptionRequest, { uint64: ['expected_revision'] });
    const receipt = await store.retireSubscription(who, id, key, body.digest, body.value);
    return dataResponse(c.get('requestId'), receipt.status, receipt.data);
  });
}

/**
 * @module
 * Routes for a subscription's deliveries: list, detail, manual retry (seed §4).
 */
import type { Hono } from 'hono';
import { OrbitError } from '@orbit/spec/errors';
import { validateRetryDeliveryRequest } from '@orbit/generated';
import type { DeliveryState } from '../domain/delivery.ts';
import type { RetryInput } from '../store/deliveries.ts';
import type { AppEnv, RouteContext } from './app.ts';
import { dataResponse } from './envelope.ts';
import { idempotencyKey, parseCursor, parseLimit, parseQuery, readJsonBody } from './request.ts';
import { parseTarget } from './subscriptions.ts';

const STATES: readonly DeliveryState[] = ['PENDING', 'LEASED', 'ACKED', 'EXPIRED'];

export function deliveryRoutes(app: Hono<AppEnv>, { store, principal }: RouteContext): void {
  app.get('/v1/subscriptions/:id/deliveries', async (c) => {
    const who = await principal(c.req.raw, 'events:read');
    const query = parseQuery(c.req.url, ['limit', 'cursor', 'state']);
    const { id } = parseTarget(c.req.param('id'), []);
    const limit = parseLimit(query.limit);
    const cursor = parseCursor(query.cursor);
    const state = query.state;
    if (state !== undefined && !STATES.includes(state as DeliveryState))
      throw new OrbitError('INVALID_ARGUMENT', `state must be one of ${STATES.join(', ')}`);
    const page = await store.listDeliveries(who, {
      subscriptionId: id,
      limit,
      ...(cursor ? { cursor } : {}),
      ...(state ? { state: state as DeliveryState } : {}),
    });
    return dataResponse(c.get('requestId'), 200, page);
  });

  app.get('/v1/subscriptions/:id/deliveries/:target', async (c) => {
    const who = await principal(c.req.raw, 'events:read');
    parseQuery(c.req.url, []);
    const subscription = parseTarget(c.req.param('id'), []);
    const { id, action } = parseTarget(c.req.param('target'), []);
    if (action !== null || subscription.action !== null) throw new OrbitError('NOT_FOUND', 'no such resource');
    return dataResponse(c.get('requestId'), 200, await store.getDelivery(who, subscription.id, id));
  });

  app.post('/v1/subscriptions/:id/deliveries/:target', async (c) => {
    const who = await principal(c.req.raw, 'events:manage');
    parseQuery(c.req.url, []);
    const subscription = parseTarget(c.req.param('id'), []);
    const { id, action } = parseTarget(c.req.param('target'), ['retry']);
    if (action !== 'retry' || subscription.action !== null) throw new OrbitError('NOT_FOUND', 'no such resource');
    const key = idempotencyKey(c.req.header('idempotency-key'));
    const body = await readJsonBody<RetryInput>(c.req.raw, validateRetryDeliveryRequest, { uint64: ['expected_revision'] });
    const receipt = await store.retryDelivery(who, { subscriptionId: subscription.id, deliveryId: id }, key, body.digest, body.value);
    return dataResponse(c.get('requestId'), receipt.status, receipt.data);
  });
}

/**
 * @module
 * Routes for a subscription's deliveries: list, detail, manual retry (spec/rules.md#s4-1).
 */
import { validateDeliveryState, validateRetryDeliveryRequest } from '@orbit/generated';
import { OrbitError } from '@orbit/spec/errors';
import type { Hono } from 'hono';
import type { Delivery } from '../store/store.ts';
import { dataResponse } from '../wire/envelope.ts';
import { deliveryJson, eventJson } from '../wire/json.ts';
import { pageJson } from '../wire/page.ts';
import { writeKey, writtenResponse } from '../wire/receipts.ts';
import type { AppEnv, RouteContext } from './context.ts';
import { idempotencyKey, parseCursor, parseLimit, parseQuery, parseTarget, readJsonBody } from './request.ts';

export function deliveryRoutes(app: Hono<AppEnv>, { store, authorize }: RouteContext): void {
  app.get('/v1/subscriptions/:id/deliveries', async (c) => {
    const who = await authorize(c.req.raw, 'ListEventDeliveries');
    const query = parseQuery(c.req.url, ['limit', 'cursor', 'state']);
    const { id } = parseTarget(c.req.param('id'), []);
    const limit = parseLimit(query.limit);
    const cursor = parseCursor(query.cursor);
    const state = query.state;
    if (state !== undefined && !validateDeliveryState(state))
      throw new OrbitError('INVALID_ARGUMENT', 'state must be one of PENDING, LEASED, ACKED, EXPIRED');
    const page = await store.listDeliveries(who, {
      subscriptionId: id,
      limit,
      ...(cursor ? { cursor } : {}),
      ...(state ? { state } : {}),
    });
    return dataResponse(c.get('requestId'), 200, pageJson(page, deliveryJson));
  });

  app.get('/v1/subscriptions/:id/deliveries/:target', async (c) => {
    const who = await authorize(c.req.raw, 'GetEventDelivery');
    parseQuery(c.req.url, []);
    const subscription = parseTarget(c.req.param('id'), []);
    const { id, action } = parseTarget(c.req.param('target'), []);
    if (action !== null || subscription.action !== null) throw new OrbitError('NOT_FOUND', 'no such resource');
    const { delivery, event } = await store.getDelivery(who, subscription.id, id);
    return dataResponse(c.get('requestId'), 200, { delivery: deliveryJson(delivery), event: eventJson(event) });
  });

  app.post('/v1/subscriptions/:id/deliveries/:target', async (c) => {
    const who = await authorize(c.req.raw, 'RetryEventDelivery');
    parseQuery(c.req.url, []);
    const subscription = parseTarget(c.req.param('id'), []);
    const { id, action } = parseTarget(c.req.param('target'), ['retry']);
    if (action !== 'retry' || subscription.action !== null) throw new OrbitError('NOT_FOUND', 'no such resource');
    const key = idempotencyKey(c.req.header('idempotency-key'));
    const body = await readJsonBody(c.req.raw, validateRetryDeliveryRequest);
    const ids = { subscriptionId: subscription.id, deliveryId: id };
    const written = await store.retryDelivery(
      who,
      ids,
      body.value,
      writeKey(key, body.digest, 200, (delivery: Delivery) => ({ delivery: deliveryJson(delivery) })),
    );
    return writtenResponse(c.get('requestId'), written);
  });
}

/**
 * @module
 * Orbit's read-only views of the caller's own scope and of the node (spec/README.md, The
 * credential's own view): the queues the credential may name, the credential itself, and the
 * node's effective settings with its secrets already replaced.
 */
import type { Setting } from '@orbit/generated';
import type { Hono } from 'hono';
import { dataResponse } from '../wire/envelope.ts';
import { credentialJson, queueJson } from '../wire/json.ts';
import { pageJson } from '../wire/page.ts';
import type { AppEnv, RouteContext } from './context.ts';
import { noQuery, parseCursor, parseLimit, parseQuery } from './request.ts';

/** `settings`: what `GET /v1/settings` answers, made once by whoever resolved the settings. */
export function accessRoutes(app: Hono<AppEnv>, { store, authorize }: RouteContext, settings: readonly Setting[]): void {
  app.get('/v1/queues', async (c) => {
    const who = await authorize(c.req.raw, 'ListQueues');
    const query = parseQuery(c.req.url, ['limit', 'cursor']);
    const limit = parseLimit(query.limit);
    const cursor = parseCursor(query.cursor);
    const page = await store.listQueues(who, { limit, ...(cursor ? { cursor } : {}) });
    return dataResponse(c.get('requestId'), 200, pageJson(page, queueJson));
  });

  app.get('/v1/credential', async (c) => {
    const who = await authorize(c.req.raw, 'GetCredential');
    noQuery(c.req.url);
    return dataResponse(c.get('requestId'), 200, credentialJson(who));
  });

  app.get('/v1/settings', async (c) => {
    await authorize(c.req.raw, 'GetSettings');
    noQuery(c.req.url);
    return dataResponse(c.get('requestId'), 200, { items: settings });
  });
}

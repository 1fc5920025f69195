/**
 * @module
 * The management API as a Hono app (seed §1–§4 and the brief's result seam). Cross-cutting rules
 * live here: request ids, the envelope on every answer, the server-side timeout. Routes are in one
 * file per resource.
 */
import { Hono } from 'hono';
import { OrbitError } from '@orbit/spec/errors';
import { newId } from '../crypto.ts';
import type { Principal, Store } from '../store/store.ts';
import { authenticate, requirePermission } from './auth.ts';
import { dataResponse, errorResponse, toOrbitError } from './envelope.ts';
import { deliveryRoutes } from './deliveries.ts';
import { resultRoutes } from './results.ts';
import { subscriptionRoutes } from './subscriptions.ts';

export interface HttpSettings {
  /** Server-side limit for one management request (seed §1: 8 s). */
  readonly requestTimeoutMs: number;
}

export interface AppEnv {
  Variables: { requestId: string };
}

/** What every route handler gets: the store and a way to authenticate with a permission. */
export interface RouteContext {
  readonly store: Store;
  /** Authenticates the request's bearer token and checks the permission. */
  principal(request: Request, permission: string): Promise<Principal>;
}

export function createHttpApp(store: Store, settings: HttpSettings, onError: (error: unknown, requestId: string) => void = () => {}): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const routes: RouteContext = {
    store,
    async principal(request, permission) {
      const principal = await authenticate(store, request.headers.get('authorization'));
      requirePermission(principal, permission);
      return principal;
    },
  };

  app.use('*', async (c, next) => {
    const requestId = newId();
    c.set('requestId', requestId);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), settings.requestTimeoutMs)));
    try {
      const outcome = await Promise.race([next().then(() => 'done' as const), timeout]);
      if (outcome === 'timeout') {
        c.res = errorResponse(requestId, new OrbitError('UNAVAILABLE', `the request did not finish within ${settings.requestTimeoutMs} ms; retry with the same Idempotency-Key`));
      }
    } finally {
      clearTimeout(timer);
    }
  });

  app.onError((error, c) => {
    const orbitError = toOrbitError(error);
    if (!(error instanceof OrbitError)) onError(error, c.get('requestId'));
    return errorResponse(c.get('requestId'), orbitError);
  });

  app.notFound((c) => errorResponse(c.get('requestId'), new OrbitError('NOT_FOUND', `no route for ${c.req.method} ${new URL(c.req.url).pathname}`)));

  app.get('/healthz', (c) => {
    if (new URL(c.req.url).search !== '') throw new OrbitError('INVALID_ARGUMENT', 'this operation takes no query parameters');
    return dataResponse(c.get('requestId'), 200, { status: 'ok' });
  });

  subscriptionRoutes(app, routes);
  deliveryRoutes(app, routes);
  resultRoutes(app, routes);
  return app;
}

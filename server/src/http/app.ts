/**
 * @module
 * The management API as a Hono app (spec/rules.md#s1-9 to #s1-23; spec/README.md, The result log).
 * Cross-cutting rules live here: request ids, the envelope on every answer, the server-side
 * timeout. Routes are in one file per resource.
 */
import { Hono, type Context, type MiddlewareHandler } from 'hono';
export type { AppEnv } from './context.ts';
import { matchedRoutes } from 'hono/route';
import type { Setting } from '@orbit/generated';
import { OrbitError } from '@orbit/spec/errors';
import { digestsEqual, newId, sha256Hex } from '../crypto.ts';
import type { Log } from '../ops/log.ts';
import type { Readiness, Store } from '../store/store.ts';
import { authorize } from '../wire/auth.ts';
import { dataResponse, errorResponse, toOrbitError } from '../wire/envelope.ts';
import { accessRoutes } from './access.ts';
import { connectRoutes } from './connect.ts';
import type { AppEnv, RouteContext } from './context.ts';
import { deliveryRoutes } from './deliveries.ts';
import { resultRoutes } from './results.ts';
import { resultBatchRoutes } from './results-batch.ts';
import { consoleRoutes } from '../console/routes.ts';
import { openApiRoute } from './openapi.ts';
import { noQuery } from './request.ts';
import { subscriptionRoutes } from './subscriptions.ts';
import { traceRequests } from './tracing.ts';

export interface HttpSettings {
  /** Server-side limit for one management request (spec/rules.md#s1-19: 8 s). */
  readonly requestTimeoutMs: number;
  /** A node silent for this long is gone: its sessions are no longer listed (default 15 s). */
  readonly nodeTtlMs?: number;
  /** `GET /v1/settings`: the node's effective settings, secrets already replaced (`settingValues`). */
  readonly effective: readonly Setting[];
}

/** Serves `GET /metrics` (Prometheus text); `token` set means `Authorization: Bearer <token>` is required. */
export interface MetricsEndpoint {
  readonly token: string | null;
  exposition(): Promise<{ contentType: string; body: string }>;
}

export interface HttpOptions {
  /**
   * The path prefix every route is served under (`/orbit`), or `''` (the default) for the root.
   * Orbit's not-found envelope covers only this prefix, so a host app keeps its own 404s.
   */
  readonly basePath?: string;
  /** Unforeseen failures (answered with UNAVAILABLE); the details go to the log only. */
  readonly onError?: (error: unknown, requestId: string) => void;
  /** One line per request: request_id, method, route, status, duration. */
  readonly log?: Log;
  /** Counts every request by route template and status. */
  readonly observe?: (method: string, route: string, code: number, seconds: number) => void;
  /** `/readyz`: the database answers and migrations are current; absent means always ready. */
  readonly readiness?: () => Promise<Readiness>;
  /** `/metrics` on this app; null or absent answers NOT_FOUND like any unknown route. */
  readonly metrics?: MetricsEndpoint | null;
}

/** `/readyz` answers 503 when the database does not answer within this time. */
const READINESS_TIMEOUT_MS = 2_000;

/**
 * The route template of the handler that answered, without the base path (`/v1/subscriptions/:target`),
 * or `unmatched`; the middleware and the not-found route (both `<base>/*`) are not handlers.
 */
function routeLabel(c: Context, basePath: string): string {
  const catchAll = `${basePath}/*`;
  const routes = matchedRoutes(c).filter((r) => r.path !== '*' && r.path !== '/*' && r.path !== catchAll);
  return routes.length > 0 ? routes[routes.length - 1]!.path.slice(basePath.length) : 'unmatched';
}

/** `''` or `/a/b`: a leading slash, no trailing one, no query or fragment. */
export function normalizeBasePath(basePath: string | undefined): string {
  const path = (basePath ?? '').replace(/\/+$/, '');
  if (path !== '' && !/^(\/[A-Za-z0-9._~!$&'()*+,;=:@%-]+)+$/.test(path))
    throw new Error(`basePath must be empty or a path such as /orbit, got ${JSON.stringify(basePath)}`);
  return path;
}

/**
 * The cross-cutting rules every response passes through: a request id, the server-side timeout,
 * and (when configured) the request log line and the request metrics.
 */
function envelopeMiddleware(
  settings: Pick<HttpSettings, 'requestTimeoutMs'>,
  options: HttpOptions,
  basePath: string,
): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const requestId = newId();
    const started = performance.now();
    c.set('requestId', requestId);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), settings.requestTimeoutMs)));
    try {
      const outcome = await Promise.race([next().then(() => 'done' as const), timeout]);
      if (outcome === 'timeout') {
        c.res = errorResponse(
          requestId,
          new OrbitError(
            'UNAVAILABLE',
            `the request did not finish within ${settings.requestTimeoutMs} ms; retry with the same Idempotency-Key`,
          ),
        );
      }
    } finally {
      clearTimeout(timer);
    }
    const seconds = (performance.now() - started) / 1000;
    const route = routeLabel(c, basePath);
    const status = c.res.status;
    options.observe?.(c.req.method, route, status, seconds);
    if (options.log) {
      const quiet = route === '/healthz' || route === '/readyz' || route === '/metrics';
      options.log(quiet ? 'debug' : 'info', 'request', {
        request_id: requestId,
        method: c.req.method,
        route,
        status,
        duration_ms: Math.round(seconds * 1000),
      });
    }
  };
}

/** `GET /metrics`: the Prometheus text, not an envelope; refusals are envelopes like everywhere. */
function mountMetrics(app: Hono<AppEnv>, endpoint: MetricsEndpoint): void {
  const expected = endpoint.token === null ? null : sha256Hex(endpoint.token);
  app.get('/metrics', async (c) => {
    noQuery(c.req.url);
    if (expected !== null) {
      const match = /^Bearer ([\x21-\x7E]+)$/.exec(c.req.header('authorization') ?? '');
      if (!match || !digestsEqual(sha256Hex(match[1]!), expected))
        throw new OrbitError('UNAUTHENTICATED', 'the metrics endpoint requires Authorization: Bearer <metrics token>');
    }
    const { contentType, body } = await endpoint.exposition();
    return new Response(body, {
      status: 200,
      headers: { 'content-type': contentType, 'cache-control': 'no-store', 'x-request-id': c.get('requestId') },
    });
  });
}

function errorHandler(app: Hono<AppEnv>, options: HttpOptions): void {
  app.onError((error, c) => {
    const orbitError = toOrbitError(error);
    if (!(error instanceof OrbitError)) options.onError?.(error, c.get('requestId'));
    return errorResponse(c.get('requestId'), orbitError);
  });
}

/**
 * Unknown routes and methods under the base path get the NOT_FOUND envelope. A route (added last)
 * rather than `app.notFound`, so that it travels with the routes when a host app mounts Orbit with
 * `host.route('/', orbit.app)` and covers only Orbit's prefix; the host's own 404s stay the host's.
 */
function notFoundRoute(app: Hono<AppEnv>): void {
  app.all('/*', (c) =>
    errorResponse(c.get('requestId'), new OrbitError('NOT_FOUND', `no route for ${c.req.method} ${new URL(c.req.url).pathname}`)),
  );
}

/** The app of a separate metrics listener (`metrics_listen`): `/metrics` and nothing else. */
export function createMetricsApp(
  settings: Pick<HttpSettings, 'requestTimeoutMs'>,
  endpoint: MetricsEndpoint,
  options: HttpOptions = {},
): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.use('*', envelopeMiddleware(settings, options, ''));
  errorHandler(app, options);
  mountMetrics(app, endpoint);
  notFoundRoute(app);
  return app;
}

export function createHttpApp(store: Store, settings: HttpSettings, options: HttpOptions = {}): Hono<AppEnv> {
  const basePath = normalizeBasePath(options.basePath);
  const app = basePath === '' ? new Hono<AppEnv>() : new Hono<AppEnv>().basePath(basePath);
  const routes: RouteContext = {
    store,
    nodeTtlMs: settings.nodeTtlMs ?? 15_000,
    authorize: (request, operation) => authorize(store.authenticator, request.headers.get('authorization'), operation),
  };

  app.use(
    '/*',
    traceRequests((c) => routeLabel(c, basePath)),
  );
  app.use('/*', envelopeMiddleware(settings, options, basePath));
  errorHandler(app, options);

  app.get('/healthz', (c) => {
    noQuery(c.req.url);
    return dataResponse(c.get('requestId'), 200, { status: 'ok' });
  });

  app.get('/readyz', async (c) => {
    noQuery(c.req.url);
    if (options.readiness) {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<Readiness>(
        (resolve) =>
          (timer = setTimeout(
            () => resolve({ ready: false, reason: 'the database is unreachable', detail: `no answer within ${READINESS_TIMEOUT_MS} ms` }),
            READINESS_TIMEOUT_MS,
          )),
      );
      let state: Readiness;
      try {
        const check = options.readiness().catch(
          (error: unknown): Readiness => ({
            ready: false,
            reason: 'the database is unreachable',
            detail: String((error as Error)?.message ?? error),
          }),
        );
        state = await Promise.race([check, timeout]);
      } finally {
        clearTimeout(timer);
      }
      if (!state.ready) {
        // The reason is generic; details (driver messages) go to the log only.
        options.log?.('warn', 'not ready', { request_id: c.get('requestId'), reason: state.reason, detail: state.detail });
        throw new OrbitError('UNAVAILABLE', `not ready: ${state.reason ?? 'unknown'}`);
      }
    }
    return dataResponse(c.get('requestId'), 200, { status: 'ready' });
  });

  if (options.metrics) mountMetrics(app, options.metrics);

  subscriptionRoutes(app, routes);
  deliveryRoutes(app, routes);
  resultRoutes(app, routes);
  resultBatchRoutes(app, routes);
  accessRoutes(app, routes, settings.effective);
  connectRoutes(app);
  openApiRoute(app, basePath);
  consoleRoutes(app, basePath);
  notFoundRoute(app);
  return app;
}

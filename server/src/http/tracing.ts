/**
 * @module
 * The server span of each HTTP request (docs/operations.md, Tracing), when an application has
 * registered a tracer provider; otherwise the middleware only asks `tracingOn()` and passes on.
 * The parent is the span already active (a host app's own HTTP instrumentation) or else the
 * request's W3C `traceparent` and `tracestate` headers, so the publish span inside it joins the
 * caller's trace.
 */
import { context, trace } from '@opentelemetry/api';
import type { Context, MiddlewareHandler } from 'hono';
import { parentOfHeaders, SpanKind, traced, tracingOn } from '../tracing.ts';
import type { AppEnv } from './context.ts';

export function traceRequests(routeLabel: (c: Context<AppEnv>) => string): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    if (!tracingOn()) return next();
    const active = context.active();
    const parent = trace.getSpan(active) ? active : parentOfHeaders(c.req.raw.headers);
    const method = c.req.method;
    await traced(
      method,
      { kind: SpanKind.SERVER, parent, attributes: { 'http.request.method': method, 'url.path': new URL(c.req.url).pathname } },
      () => next(),
      (span) => {
        const route = routeLabel(c);
        span.updateName(`${method} ${route}`);
        span.setAttributes({ 'http.route': route, 'http.response.status_code': c.res.status, 'orbit.request.id': c.get('requestId') });
      },
    );
  };
}

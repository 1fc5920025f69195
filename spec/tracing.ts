/**
 * @module
 * The OpenTelemetry wiring that the server and the SDK share (spec/README.md, Trace context): the
 * check whether tracing is on, the span wrapper, and the turn of a contract `TraceContext` into a
 * span context and back. Both packages import it from here because the SDK never imports the
 * server (the `client-not-server` rule of `npm run deps`).
 *
 * This is the one module of @orbit/spec that loads `@opentelemetry/api`, an optional peer
 * dependency: the contract's other entry points (`codec`, `errors`, `protocol`) work without it
 * installed, and the server and the SDK, which import this one, depend on it themselves.
 *
 * Free when off: until an application registers a tracer provider, `tracingOn()` is false, and
 * callers write `tracingOn() ? traced(...) : work()`, so no tracer is asked for, no span created
 * and no attributes object built.
 */
import {
  type Attributes,
  type Context,
  context,
  createTraceState,
  type Link,
  ProxyTracerProvider,
  ROOT_CONTEXT,
  type Span,
  type SpanContext,
  SpanKind,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api';
import { formatTraceparent, parseTraceparent } from './codec/traceparent.ts';

/** The W3C text a `TraceContext` carries (the contract type, without a dependency on @orbit/generated). */
export interface TraceContextText {
  readonly traceparent: string;
  readonly tracestate?: string;
}

/** The API's own no-op provider: what an unregistered global provider delegates to. */
const NOOP_PROVIDER = new ProxyTracerProvider().getDelegate();

/**
 * Whether an application registered a tracer provider: the one cheap check on the hot path (a
 * global lookup and a comparison, no allocation). It is asked at every call, so a provider
 * registered after Orbit started is picked up.
 */
export function tracingOn(): boolean {
  const provider = trace.getTracerProvider() as Partial<ProxyTracerProvider>;
  return provider.getDelegate === undefined || provider.getDelegate() !== NOOP_PROVIDER;
}

export interface SpanOptions {
  readonly kind?: SpanKind;
  readonly attributes?: Attributes;
  readonly links?: Link[];
  /** The parent; default the active context. */
  readonly parent?: Context;
}

/**
 * Runs `work` in a new active span named `name` of the tracer `scope` (the package's name, so a
 * user tells the server's spans from the SDK's), ends it when the promise settles and records a
 * thrown error on it. `after` adds what only the answer knows (ids the store assigned).
 */
export async function traced<T>(
  scope: string,
  name: string,
  options: SpanOptions,
  work: (span: Span) => Promise<T>,
  after?: (span: Span, value: T) => void,
): Promise<T> {
  // Asked here, not once at load: a tracer of the no-op provider would stay a no-op after an
  // application registers its own, and with tracing off this line is never reached.
  const tracer = trace.getTracer(scope);
  const parent = options.parent ?? context.active();
  const span = tracer.startSpan(
    name,
    {
      kind: options.kind ?? SpanKind.INTERNAL,
      ...(options.attributes ? { attributes: options.attributes } : {}),
      ...(options.links ? { links: options.links } : {}),
    },
    parent,
  );
  try {
    const value = await context.with(trace.setSpan(parent, span), () => work(span));
    after?.(span, value);
    return value;
  } catch (error) {
    span.recordException(error as Error);
    span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
    throw error;
  } finally {
    span.end();
  }
}

/** A trace context as it is read: a stored row's columns or a request's headers may be null. */
export interface TraceContextInput {
  readonly traceparent: string | null;
  readonly tracestate?: string | null | undefined;
}

/** The remote span context a stored or received W3C trace context names, or undefined. */
export function spanContextOf(traceContext: TraceContextInput): SpanContext | undefined {
  const parts = traceContext.traceparent === null ? undefined : parseTraceparent(traceContext.traceparent);
  if (!parts) return undefined;
  return { ...parts, isRemote: true, ...(traceContext.tracestate ? { traceState: createTraceState(traceContext.tracestate) } : {}) };
}

/** The context whose parent is the remote span a trace context names, or the root when it names none. */
export function parentOf(traceContext: TraceContextInput | undefined): Context {
  const spanContext = traceContext && spanContextOf(traceContext);
  return spanContext ? trace.setSpanContext(ROOT_CONTEXT, spanContext) : ROOT_CONTEXT;
}

/** The W3C text of a span context, as the contract's `trace_context` carries it. */
export function traceContextOf(spanContext: SpanContext): TraceContextText {
  const traceparent = formatTraceparent(spanContext);
  const tracestate = spanContext.traceState?.serialize();
  return tracestate ? { traceparent, tracestate } : { traceparent };
}

export { SpanKind };

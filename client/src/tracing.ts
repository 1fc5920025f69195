/**
 * @module
 * The SDK's OpenTelemetry spans (docs/sdk.md, Tracing), off by default and free when off: the SDK
 * depends only on `@opentelemetry/api`, and until an application registers a tracer provider
 * `tracingOn()` is false and the consumer and the client take their untraced paths.
 *
 * With tracing on, the consumer's handler span is a child of the trace context the event carries
 * (spec/README.md, Trace context), which the server stored from the publish, and its ACK span a
 * child of the handler span: one trace from publish to ACK across processes. `publishResult` and
 * `publishResults` send their own span's context in `trace_context` when the caller gave none.
 * The W3C text is read and written by `@orbit/spec/codec` for both packages; the check and the span
 * wrapper are a few lines the server has too (`server/src/tracing.ts`), since the client never
 * imports the server.
 */
import {
  type Attributes,
  type Context,
  context,
  createTraceState,
  ProxyTracerProvider,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api';
import type { TraceContext } from '@orbit/generated';
import { formatTraceparent, parseTraceparent } from '@orbit/spec/codec';

const NOOP_PROVIDER = new ProxyTracerProvider().getDelegate();

/** Whether an application registered a tracer provider: one global lookup and a comparison. */
export function tracingOn(): boolean {
  const provider = trace.getTracerProvider() as Partial<ProxyTracerProvider>;
  return provider.getDelegate === undefined || provider.getDelegate() !== NOOP_PROVIDER;
}

/** Runs `work` in a new active span, ends it when the promise settles, and records a thrown error. */
export async function traced<T>(
  name: string,
  options: { kind: SpanKind; attributes: Attributes; parent?: Context },
  work: (span: Span) => Promise<T>,
): Promise<T> {
  const parent = options.parent ?? context.active();
  const span = trace.getTracer('@orbit/client').startSpan(name, { kind: options.kind, attributes: options.attributes }, parent);
  try {
    return await context.with(trace.setSpan(parent, span), () => work(span));
  } catch (error) {
    span.recordException(error as Error);
    span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
    throw error;
  } finally {
    span.end();
  }
}

/** The remote parent an event's trace context names, or the root when it has none. */
export function parentOf(traceContext: TraceContext | undefined): Context {
  const parts = traceContext && parseTraceparent(traceContext.traceparent);
  if (!parts) return ROOT_CONTEXT;
  const traceState = traceContext.tracestate ? { traceState: createTraceState(traceContext.tracestate) } : {};
  return trace.setSpanContext(ROOT_CONTEXT, { ...parts, isRemote: true, ...traceState });
}

/** The W3C text of a span's context, as `trace_context` carries it. */
export function traceContextOf(span: Span): TraceContext {
  const spanContext = span.spanContext();
  const traceparent = formatTraceparent(spanContext);
  const tracestate = spanContext.traceState?.serialize();
  return tracestate ? { traceparent, tracestate } : { traceparent };
}

/**
 * A publish's span (a PRODUCER span, child of the active one): `send` gets the span's own context
 * for the results that carry none, so their deliveries join this trace.
 */
export function publishSpan<T>(queueId: string, count: number, send: (own: TraceContext) => Promise<T>): Promise<T> {
  return traced(
    'orbit.publish',
    { kind: SpanKind.PRODUCER, attributes: { 'orbit.queue.id': queueId, 'orbit.batch.size': count } },
    (span) => send(traceContextOf(span)),
  );
}

export { SpanKind };

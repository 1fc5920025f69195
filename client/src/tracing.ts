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
 * The check, the span wrapper and the reading and writing of a trace context are
 * `@orbit/spec/tracing`, shared with the server (the SDK never imports the server); this module
 * names the SDK's tracer and adds the publish span.
 */
import type { Span } from '@opentelemetry/api';
import type { TraceContext } from '@orbit/generated';
import { type SpanOptions, SpanKind, traceContextOf, traced as tracedIn } from '@orbit/spec/tracing';

export { parentOf, SpanKind, tracingOn } from '@orbit/spec/tracing';

/** A span of the SDK's tracer, `@orbit/client` (see `traced` of `@orbit/spec/tracing`). */
export function traced<T>(name: string, options: SpanOptions, work: (span: Span) => Promise<T>): Promise<T> {
  return tracedIn('@orbit/client', name, options, work);
}

/**
 * A publish's span (a PRODUCER span, child of the active one): `send` gets the span's own context
 * for the results that carry none, so their deliveries join this trace.
 */
export function publishSpan<T>(queueId: string, count: number, send: (own: TraceContext) => Promise<T>): Promise<T> {
  return traced(
    'orbit.publish',
    { kind: SpanKind.PRODUCER, attributes: { 'orbit.queue.id': queueId, 'orbit.batch.size': count } },
    (span) => send(traceContextOf(span.spanContext())),
  );
}

/**
 * @module
 * OpenTelemetry spans of the server, off by default and free when off (docs/operations.md,
 * Tracing). Orbit depends only on `@opentelemetry/api`: an application registers its own SDK and
 * exporter, and until it does, `tracingOn()` is false and every call site takes its untraced
 * branch, which creates no span and allocates nothing for tracing. Callers write
 * `tracingOn() ? traced(...) : work()`, so the attributes object is built only when tracing.
 *
 * The check, the span wrapper and the reading and writing of a trace context (spec/README.md,
 * Trace context) are `@orbit/spec/tracing`, shared with the SDK; this module names the server's
 * tracer and adds the server's own spans: a request's remote parent, a publish, a commit.
 */
import { type Context, type Link, type Span, SpanKind } from '@opentelemetry/api';
import type { TraceContext } from '@orbit/generated';
import { parentOf, type SpanOptions, spanContextOf, traceContextOf, traced as tracedIn } from '@orbit/spec/tracing';
import type { ResultRecord } from './store/records.ts';
import type { ResultInput } from './store/results.ts';

export { SpanKind, spanContextOf };
export { tracingOn } from '@orbit/spec/tracing';

/** Attribute names of Orbit's spans, one spelling everywhere (docs/operations.md, Tracing). */
export const ATTR = {
  queue: 'orbit.queue.id',
  subscription: 'orbit.subscription.id',
  event: 'orbit.event.id',
  sequence: 'orbit.event.sequence',
  delivery: 'orbit.delivery.id',
  count: 'orbit.batch.size',
} as const;

/** A span of the server's tracer, `@orbit/server` (see `traced` of `@orbit/spec/tracing`). */
export function traced<T>(
  name: string,
  options: SpanOptions,
  work: (span: Span) => Promise<T>,
  after?: (span: Span, value: T) => void,
): Promise<T> {
  return tracedIn('@orbit/server', name, options, work, after);
}

/** The remote parent that the W3C `traceparent` and `tracestate` headers of a request name, or the root. */
export function parentOfHeaders(headers: Headers): Context {
  return parentOf({ traceparent: headers.get('traceparent'), tracestate: headers.get('tracestate') });
}

/**
 * A publish's span (HTTP single or batch, or in-process), a child of the active span: an input
 * without a trace context takes the span's own, so its deliveries join this trace.
 */
export function tracedPublish<T>(
  inputs: readonly ResultInput[],
  publish: (inputs: readonly ResultInput[]) => Promise<T>,
  events: (answer: T) => readonly ResultRecord[],
): Promise<T> {
  return traced(
    'orbit.publish',
    { kind: SpanKind.PRODUCER, attributes: { [ATTR.queue]: [...new Set(inputs.map((i) => i.queueId))], [ATTR.count]: inputs.length } },
    (span) => {
      const own = traceContextOf(span.spanContext());
      return publish(inputs.map((input) => (input.traceContext === undefined ? { ...input, traceContext: own } : input)));
    },
    (span, answer) => {
      const records = events(answer);
      span.setAttribute(
        ATTR.event,
        records.map((r) => r.id),
      );
      span.setAttribute(
        ATTR.sequence,
        records.map((r) => r.sequence.toString()),
      );
    },
  );
}

/**
 * The span of one commit of the result log: a group of the HTTP seam, a batch, or an in-process
 * append. It links every publish it commits by that publish's trace context, since a group commits
 * publishes of many traces in one transaction.
 */
export function tracedCommit<T>(contexts: readonly (TraceContext | undefined)[], work: () => Promise<T>): Promise<T> {
  const links: Link[] = [];
  for (const traceContext of contexts) {
    const spanContext = traceContext && spanContextOf(traceContext);
    if (spanContext) links.push({ context: spanContext });
  }
  return traced('orbit.publish.commit', { attributes: { [ATTR.count]: contexts.length }, links }, work);
}

/**
 * @module
 * OpenTelemetry spans of the server, off by default and free when off (docs/operations.md,
 * Tracing). Orbit depends only on `@opentelemetry/api`: an application registers its own SDK and
 * exporter, and until it does, `tracingOn()` is false and every call site takes its untraced
 * branch, which creates no span and allocates nothing for tracing. Callers write
 * `tracingOn() ? traced(...) : work()`, so the attributes object is built only when tracing.
 *
 * The trace context a publish carries (spec/README.md, Trace context) is the W3C text of
 * `TraceContext`; this module turns it into a span context and back, so the result log links a
 * publish to its deliveries with no propagator registered.
 */
import {
  type Attributes,
  type Context,
  type Link,
  ProxyTracerProvider,
  ROOT_CONTEXT,
  type Span,
  type SpanContext,
  SpanKind,
  SpanStatusCode,
  context,
  createTraceState,
  trace,
} from '@opentelemetry/api';
import type { TraceContext } from '@orbit/generated';
import { formatTraceparent, parseTraceparent } from '@orbit/spec/codec';
import type { ResultRecord } from './store/records.ts';
import type { ResultInput } from './store/results.ts';

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

/** Attribute names of Orbit's spans, one spelling everywhere (docs/operations.md, Tracing). */
export const ATTR = {
  queue: 'orbit.queue.id',
  subscription: 'orbit.subscription.id',
  event: 'orbit.event.id',
  sequence: 'orbit.event.sequence',
  delivery: 'orbit.delivery.id',
  count: 'orbit.batch.size',
} as const;

export interface SpanOptions {
  readonly kind?: SpanKind;
  readonly attributes?: Attributes;
  readonly links?: Link[];
  /** The parent; default the active context. */
  readonly parent?: Context;
}

/**
 * Runs `work` in a new active span named `name`, ends it when the promise settles and records a
 * thrown error on it. `after` adds what only the answer knows (ids the store assigned).
 */
export async function traced<T>(
  name: string,
  options: SpanOptions,
  work: (span: Span) => Promise<T>,
  after?: (span: Span, value: T) => void,
): Promise<T> {
  const tracer = trace.getTracer('@orbit/server');
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

/** The span context a stored or received W3C trace context names, or undefined. */
export function spanContextOf(
  traceContext: TraceContext | { traceparent: string | null; tracestate?: string | null },
): SpanContext | undefined {
  const parts = traceContext.traceparent === null ? undefined : parseTraceparent(traceContext.traceparent);
  if (!parts) return undefined;
  return { ...parts, isRemote: true, ...(traceContext.tracestate ? { traceState: createTraceState(traceContext.tracestate) } : {}) };
}

/** The W3C text of a span context, as the contract stores it. */
export function traceContextOf(spanContext: SpanContext): TraceContext {
  const traceparent = formatTraceparent(spanContext);
  const tracestate = spanContext.traceState?.serialize();
  return tracestate ? { traceparent, tracestate } : { traceparent };
}

/** The remote parent that the W3C `traceparent` and `tracestate` headers of a request name, or the root. */
export function parentOfHeaders(headers: Headers): Context {
  const traceparent = headers.get('traceparent');
  if (traceparent === null) return ROOT_CONTEXT;
  const spanContext = spanContextOf({ traceparent, tracestate: headers.get('tracestate') });
  return spanContext ? trace.setSpanContext(ROOT_CONTEXT, spanContext) : ROOT_CONTEXT;
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

export { SpanKind };

/**
 * @module
 * An in-memory OpenTelemetry SDK for tests: registers a tracer provider that keeps every ended
 * span, and an AsyncLocalStorage context manager, as an application would register its own SDK
 * (docs/operations.md, Tracing). `stop()` unregisters both, so tracing is off again ("free when
 * off" is then testable in the same process).
 */
import { context, trace, type SpanContext } from '@opentelemetry/api';
import { formatTraceparent } from '@orbit/spec/codec';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';

export interface SpanRecorder {
  /** The spans ended so far, in the order they ended. */
  spans(): ReadableSpan[];
  /** The ended spans named `name`. */
  named(name: string): ReadableSpan[];
  reset(): void;
  stop(): Promise<void>;
}

export function recordSpans(): SpanRecorder {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const contextManager = new AsyncLocalStorageContextManager().enable();
  if (!trace.setGlobalTracerProvider(provider) || !context.setGlobalContextManager(contextManager))
    throw new Error('another tracer provider or context manager is registered; stop() the previous recorder first');
  return {
    spans: () => exporter.getFinishedSpans().slice(),
    named: (name) => exporter.getFinishedSpans().filter((s) => s.name === name),
    reset: () => exporter.reset(),
    async stop() {
      await provider.shutdown();
      contextManager.disable();
      trace.disable();
      context.disable();
    },
  };
}

/** The parent span id of a recorded span (SDK 2.x keeps it in `parentSpanContext`). */
export function parentSpanId(span: ReadableSpan): string | undefined {
  return span.parentSpanContext?.spanId;
}

/** The W3C `traceparent` of a span context. */
export function traceparentOf(spanContext: SpanContext): string {
  return formatTraceparent(spanContext);
}

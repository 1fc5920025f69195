/**
 * @module
 * The W3C `traceparent` text (https://www.w3.org/TR/trace-context/, version 00) of the contract's
 * `TraceContext` (spec/README.md, Trace context), read and written in one place for the server
 * and the SDK. Plain strings and numbers: the packages turn them into OpenTelemetry span contexts.
 */

/** The ids and flags a version-00 `traceparent` names. */
export interface Traceparent {
  /** 32 lower-case hex digits, not all zero. */
  readonly traceId: string;
  /** 16 lower-case hex digits, not all zero. */
  readonly spanId: string;
  /** 0..255 (bit 0: sampled). */
  readonly traceFlags: number;
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** The parts of a version-00 `traceparent`, or undefined when it is not one (or an id is all zero). */
export function parseTraceparent(text: string): Traceparent | undefined {
  const m = TRACEPARENT.exec(text);
  if (!m || /^0+$/.test(m[1]!) || /^0+$/.test(m[2]!)) return undefined;
  return { traceId: m[1]!, spanId: m[2]!, traceFlags: Number.parseInt(m[3]!, 16) };
}

/** The version-00 `traceparent` text of ids and flags. */
export function formatTraceparent(parts: Traceparent): string {
  return `00-${parts.traceId}-${parts.spanId}-${(parts.traceFlags & 0xff).toString(16).padStart(2, '0')}`;
}

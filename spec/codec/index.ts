/**
 * @module @orbit/spec/codec
 * The strict codec of the Orbit wire formats: strict JSON with duplicate-key rejection and
 * raw passthrough, canonical uint64 decimal strings and canonical base64url.
 */

export { CodecError, StrictJsonError, type StrictJsonErrorReason } from './errors.ts';
export {
  DEFAULT_MAX_DEPTH,
  MAX_DEPTH_LIMIT,
  RawJson,
  isRawJson,
  parseStrict,
  stringify,
  type ParseStrictOptions,
} from './json.ts';
/**
 * Wraps text that was already checked as strict JSON (for example when it was stored), without
 * parsing it again. Never use it on text from the network.
 */
export { trustedRawJson } from './json-raw.ts';
export { UINT64_MAX, compareUint64, formatUint64, isCanonicalUint64, parseUint64 } from './uint64.ts';
export {
  LEASE_SECRET_BYTES,
  base64urlLength,
  decodeBase64url,
  encodeBase64url,
  isCanonicalBase64url,
} from './base64url.ts';
export { formatTraceparent, parseTraceparent, type Traceparent } from './traceparent.ts';

/**
 * @module
 * Counters and versions travel as canonical uint64 decimal strings (spec/rules.md#s1-21). These
 * helpers convert them to and from `bigint`; they throw `CodecError` for anything non-canonical or
 * out of range, never round.
 */
import { compareUint64, formatUint64, isCanonicalUint64, parseUint64 } from '@orbit/spec/codec';

/** `"42"` → `42n`. Throws `CodecError` for `"+1"`, `"01"`, `"1.0"`, a value above 2^64-1, .... */
export function toBigInt(value: string): bigint {
  return parseUint64(value);
}

/** `42n` → `"42"`. Throws `CodecError` for a negative value or one above 2^64-1. */
export function fromBigInt(value: bigint): string {
  return formatUint64(value);
}

export { compareUint64, isCanonicalUint64 };

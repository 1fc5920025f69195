/**
 * @module uint64
 * Canonical uint64 decimal strings: how counters, sequences, revisions and epochs travel on
 * the wire. Canonical means ASCII digits only, no sign, no leading zero (except `"0"`), no
 * fraction, exponent or whitespace, and at most 18446744073709551615.
 */

import { CodecError } from './errors.ts';

/** 2^64 - 1. */
export const UINT64_MAX = 18446744073709551615n;

const UINT64_MAX_TEXT = '18446744073709551615';
const CANONICAL = /^(?:0|[1-9][0-9]{0,19})$/;

/** Whether `s` is a canonical uint64 decimal string. */
export function isCanonicalUint64(s: unknown): s is string {
  if (typeof s !== 'string' || !CANONICAL.test(s)) return false;
  // Same length, no leading zeros: string order is numeric order.
  return s.length < UINT64_MAX_TEXT.length || s <= UINT64_MAX_TEXT;
}

function describe(s: unknown): string {
  if (typeof s !== 'string') return `a ${s === null ? 'null' : typeof s}`;
  return s.length > 40 ? `${JSON.stringify(s.slice(0, 40))}…` : JSON.stringify(s);
}

/** Parses a canonical uint64 decimal string; throws `CodecError` for anything else. */
export function parseUint64(s: string): bigint {
  if (!isCanonicalUint64(s)) throw new CodecError(`not a canonical uint64 decimal string: ${describe(s)}`);
  return BigInt(s);
}

/** Formats `n` as a canonical uint64 string; throws `CodecError` unless 0 ≤ n ≤ UINT64_MAX. */
export function formatUint64(n: bigint): string {
  if (typeof n !== 'bigint') throw new CodecError(`uint64 must be a bigint, got ${describe(n)}`);
  if (n < 0n || n > UINT64_MAX) throw new CodecError(`out of the uint64 range: ${n}`);
  return n.toString();
}

function toText(v: string | bigint): string {
  if (typeof v === 'bigint') return formatUint64(v);
  if (!isCanonicalUint64(v)) throw new CodecError(`not a canonical uint64 decimal string: ${describe(v)}`);
  return v;
}

/**
 * Compares two uint64 values, each a canonical decimal string or a bigint in range;
 * returns -1, 0 or 1. Throws `CodecError` for a non-canonical or out-of-range operand.
 */
export function compareUint64(a: string | bigint, b: string | bigint): -1 | 0 | 1 {
  if (typeof a === 'bigint' && typeof b === 'bigint') {
    toText(a);
    toText(b);
    return a < b ? -1 : a > b ? 1 : 0;
  }
  const x = toText(a);
  const y = toText(b);
  if (x.length !== y.length) return x.length < y.length ? -1 : 1;
  return x < y ? -1 : x > y ? 1 : 0;
}

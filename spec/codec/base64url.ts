/**
 * @module base64url
 * Canonical unpadded base64url (RFC 4648 §5): the encoding of lease secrets. Exactly one
 * text encodes a byte string: no padding, only `A-Z a-z 0-9 - _`, never a length ≡ 1 (mod 4),
 * unused trailing bits zero, and (when a byte length is expected) exactly the length that
 * byte count needs. Pure JS, no `Buffer`, so it runs in browsers too.
 */

import { CodecError } from './errors.ts';

/** Lease secrets are 32 random bytes: 43 base64url characters. */
export const LEASE_SECRET_BYTES = 32;

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const DECODE = new Int8Array(128).fill(-1);
for (let i = 0; i < ALPHABET.length; i++) DECODE[ALPHABET.charCodeAt(i)] = i;

/** Number of characters of the unpadded base64url encoding of `byteLength` bytes. */
export function base64urlLength(byteLength: number): number {
  checkByteLength(byteLength);
  return Math.floor((byteLength * 4 + 2) / 3);
}

function checkByteLength(byteLength: number): void {
  if (!Number.isSafeInteger(byteLength) || byteLength < 0) {
    throw new RangeError(`byteLength must be a non-negative integer, got ${String(byteLength)}`);
  }
}

/** Encodes bytes as unpadded base64url. */
export function encodeBase64url(bytes: Uint8Array): string {
  let out = '';
  const n = bytes.length;
  let i = 0;
  for (; i + 2 < n; i += 3) {
    const v = ((bytes[i] as number) << 16) | ((bytes[i + 1] as number) << 8) | (bytes[i + 2] as number);
    out += ALPHABET[v >> 18]! + ALPHABET[(v >> 12) & 63]! + ALPHABET[(v >> 6) & 63]! + ALPHABET[v & 63]!;
  }
  if (n - i === 1) {
    const v = bytes[i] as number;
    out += ALPHABET[v >> 2]! + ALPHABET[(v & 3) << 4]!;
  } else if (n - i === 2) {
    const v = ((bytes[i] as number) << 8) | (bytes[i + 1] as number);
    out += ALPHABET[v >> 10]! + ALPHABET[(v >> 4) & 63]! + ALPHABET[(v & 15) << 2]!;
  }
  return out;
}

/** Why `s` is not canonical, or `null` when it is. */
function problem(s: unknown, byteLength: number | undefined): string | null {
  if (typeof s !== 'string') return `expected a string, got ${s === null ? 'null' : typeof s}`;
  if (byteLength !== undefined) {
    const want = base64urlLength(byteLength);
    if (s.length !== want) return `expected ${want} characters for ${byteLength} bytes, got ${s.length}`;
  }
  if (s.length % 4 === 1) return `length ${s.length} is impossible (≡ 1 mod 4)`;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 128 || DECODE[c] === -1) {
      const shown = c === 0x3d ? "padding '='" : `character ${JSON.stringify(s[i])}`;
      return `${shown} at index ${i} is not allowed`;
    }
  }
  const last = s.length === 0 ? 0 : (DECODE[s.charCodeAt(s.length - 1)] as number);
  if (s.length % 4 === 2 && (last & 15) !== 0) return 'unused trailing bits are not zero';
  if (s.length % 4 === 3 && (last & 3) !== 0) return 'unused trailing bits are not zero';
  return null;
}

/**
 * Whether `s` is the canonical unpadded base64url encoding of some byte string (of exactly
 * `byteLength` bytes when given).
 */
export function isCanonicalBase64url(s: unknown, byteLength?: number): boolean {
  if (byteLength !== undefined) checkByteLength(byteLength);
  return problem(s, byteLength) === null;
}

/** Decodes canonical unpadded base64url; throws `CodecError` for any other text. */
export function decodeBase64url(s: string, byteLength?: number): Uint8Array {
  if (byteLength !== undefined) checkByteLength(byteLength);
  const why = problem(s, byteLength);
  if (why !== null) throw new CodecError(`not canonical base64url: ${why}`);
  const n = s.length;
  const out = new Uint8Array(Math.floor((n * 3) / 4));
  let o = 0;
  let i = 0;
  const at = (k: number): number => DECODE[s.charCodeAt(k)] as number;
  for (; i + 3 < n; i += 4) {
    const v = (at(i) << 18) | (at(i + 1) << 12) | (at(i + 2) << 6) | at(i + 3);
    out[o++] = v >> 16;
    out[o++] = (v >> 8) & 255;
    out[o++] = v & 255;
  }
  if (n - i === 2) {
    out[o++] = (at(i) << 2) | (at(i + 1) >> 4);
  } else if (n - i === 3) {
    const v = (at(i) << 10) | (at(i + 1) << 4) | (at(i + 2) >> 2);
    out[o++] = v >> 8;
    out[o++] = v & 255;
  }
  return out;
}

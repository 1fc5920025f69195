/**
 * @module
 * Identifiers, secrets and digests. Tokens and lease secrets are random, shown once, and stored
 * only as SHA-256 digests; digests are compared in constant time.
 */
import * as nodeCrypto from 'node:crypto';
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { encodeBase64url, LEASE_SECRET_BYTES } from '@orbit/spec/codec';

/**
 * Random bytes drawn from a pooled buffer: one call to the kernel's generator serves many ids and
 * secrets (a claim makes dozens). Each slice is handed out once and never reused.
 */
const POOL_BYTES = 4096;
let pool = Buffer.alloc(0);
let offset = 0;

function random(bytes: number): Buffer {
  if (offset + bytes > pool.length) {
    pool = randomBytes(POOL_BYTES);
    offset = 0;
  }
  const slice = pool.subarray(offset, offset + bytes);
  offset += bytes;
  return slice;
}

/**
 * A 32-character lower-case hex identifier: the time in milliseconds (48 bits) and 80 random bits,
 * so ids made later sort later, as UUIDv7 and ULID do. The hot tables are keyed by id (deliveries;
 * results by event id), and InnoDB keeps rows in key order: a random key lands every insert on a
 * random page of a growing index, an ordered one appends to the last page (docs/benchmarks.md).
 * Nothing may rely on the order; 80 random bits keep ids unguessable.
 */
export function newId(): string {
  return Date.now().toString(16).padStart(12, '0').slice(-12) + random(10).toString('hex');
}

/** A lease secret: 32 random bytes, base64url without padding (43 characters). */
export function newLeaseSecret(): string {
  return encodeBase64url(random(LEASE_SECRET_BYTES));
}

export const TOKEN_PREFIX = 'orbit_';
/** A token's random bytes: 43 base64url characters after the prefix. */
export const TOKEN_BYTES = 32;

/** A bearer token: a recognizable prefix and 32 random bytes. */
export function newToken(): string {
  return TOKEN_PREFIX + encodeBase64url(randomBytes(TOKEN_BYTES));
}

/**
 * Node's one-shot digest (`crypto.hash`, Node 20.12 and later): a third of the time of a `Hash`
 * object for the short texts hashed on every request, lease and ACK. Read from the namespace, so
 * that an earlier Node 20 without it still loads this module and uses `createHash`.
 */
const oneShot = (nodeCrypto as { hash?: (algorithm: string, data: string, encoding: 'hex') => string }).hash;

/** SHA-256 of the UTF-8 text, as 64 lower-case hex digits. */
export function sha256Hex(text: string): string {
  return oneShot ? oneShot('sha256', text, 'hex') : createHash('sha256').update(text, 'utf8').digest('hex');
}

export function digestsEqual(a: string, b: string): boolean {
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * @module
 * What the SDK reads from the wire: every HTTP body and every WebSocket frame goes through
 * `parseStrict` (duplicate keys refused; `event.details` and `event.snapshot.result` kept as
 * `RawJson`, byte for byte), the generated validator of its shape, and the checks a schema cannot
 * express (spec/rules.md#s8-9): uint64 range and canonical base64url lease secrets.
 */
import { isCanonicalBase64url, isCanonicalUint64, isRawJson, parseStrict, LEASE_SECRET_BYTES, type RawJson } from '@orbit/spec/codec';
import type { EventDelivery, ResultEvent as WireResultEvent, ResultSnapshot, Subscription } from '@orbit/generated';
import { PATTERNS, RAW_JSON_PATHS, UINT64_MEMBERS, type Validator } from '@orbit/generated';

/** The immutable task snapshot of a result event; `result` is the exact JSON text that was published. */
export interface ResultEventSnapshot extends Omit<ResultSnapshot, 'result'> {
  readonly result?: RawJson;
}

/**
 * One entry of the result log, as the SDK returns it: the generated `ResultEvent` with
 * `details` and `snapshot.result` kept as `RawJson` (read `.text`, or parse it with
 * `parseStrict`), so a 20-digit integer or `1.10` comes back exactly as it was published.
 */
export interface ResultEvent extends Omit<WireResultEvent, 'details' | 'snapshot'> {
  readonly details: RawJson;
  readonly snapshot: ResultEventSnapshot;
}

export type { EventDelivery, Subscription };

/** Where a document of `schema` keeps members as exact JSON text, below `prefix` (an envelope's `data`). */
export function rawPaths(schema: keyof typeof RAW_JSON_PATHS, prefix: readonly string[] = []): string[][] {
  return RAW_JSON_PATHS[schema].map((path) => [...prefix, ...path]);
}

/**
 * Finds a contract rule the generated validator cannot check in an already validated value:
 * a uint64 above 18446744073709551615, a lease secret that is not the canonical encoding of 32
 * bytes, or `details` that is not an object. Returns a description, or null when all is well.
 */
export function beyondSchema(value: unknown, path = ''): string | null {
  if (value === null || typeof value !== 'object' || isRawJson(value)) return null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const problem = beyondSchema(value[i], `${path}/${i}`);
      if (problem) return problem;
    }
    return null;
  }
  for (const [key, member] of Object.entries(value as Record<string, unknown>)) {
    const at = `${path}/${key}`;
    if (UINT64_MEMBERS.has(key) && typeof member === 'string' && !isCanonicalUint64(member)) return `${at} is not a uint64 in range`;
    if (key === 'lease_secret' && typeof member === 'string' && !isCanonicalBase64url(member, LEASE_SECRET_BYTES))
      return `${at} is not canonical base64url of 32 bytes`;
    if (key === 'details' && isRawJson(member) && !member.text.trimStart().startsWith('{')) return `${at} must be an object`;
    const problem = beyondSchema(member, at);
    if (problem) return problem;
  }
  return null;
}

export type ReadResult<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly problem: string };

/** Strict parse, validate, check the rules beyond the schema. Never throws. */
export function readDocument<T>(
  text: string,
  validator: Validator<unknown>,
  raw: ReadonlyArray<ReadonlyArray<string>> = [],
): ReadResult<T> {
  let value: unknown;
  try {
    value = parseStrict(text, raw.length > 0 ? { raw } : undefined);
  } catch (error) {
    return { ok: false, problem: `not strict JSON: ${(error as Error).message}` };
  }
  if (!validator(value)) {
    const first = validator.errors?.[0];
    return { ok: false, problem: `${first?.instancePath || '(root)'} ${first?.message ?? 'does not match the contract'}` };
  }
  const problem = beyondSchema(value);
  if (problem) return { ok: false, problem };
  return { ok: true, value: value as T };
}

/** Whether `value` is a contract id: 32 lower-case hexadecimal characters. */
export function isId(value: unknown): value is string {
  return typeof value === 'string' && PATTERNS.id.test(value);
}

/**
 * @module
 * The idempotency content identity of a request body (spec/README.md, Idempotency): SHA-256 of its
 * canonical form, so that the same content sent with other key order or spacing is the same write.
 */
import { isRawJson } from '@orbit/spec/codec';
import { sha256Hex } from '../crypto.ts';

/** The idempotency content identity of a request body: SHA-256 of its canonical form. */
export function contentDigest(value: unknown): string {
  return sha256Hex(canonicalJson(value));
}

/** Sorted keys, no spaces, raw JSON verbatim: equal content gives equal text. */
export function canonicalJson(value: unknown): string {
  if (isRawJson(value)) return value.text;
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value);
}

/**
 * `value` without the top-level members `names` (members of a body that are not its content, such
 * as a publish's `trace_context`): the same object when it has none of them.
 */
export function withoutMembers(value: unknown, names: readonly string[]): unknown {
  if (names.length === 0 || value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  if (!names.some((name) => Object.hasOwn(value, name))) return value;
  return Object.fromEntries(Object.entries(value).filter(([name]) => !names.includes(name)));
}

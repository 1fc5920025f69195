/**
 * @module json-stringify
 * `stringify`: `JSON.stringify` without indentation that emits every `RawJson` verbatim.
 *
 * The native `JSON.stringify` does the work in every common case:
 * - no `RawJson` in the value (found by a quick walk): the value is serialized as is;
 * - some `RawJson`: the containers on the way to each of them are shallow-copied with the
 *   `RawJson` replaced by a unique placeholder string (random per process), the copy is
 *   serialized natively, and each placeholder is replaced by the raw text. Should the output
 *   hold any placeholder-like text other than the expected ones, it is discarded.
 * Otherwise (a `toJSON` method on the way, nesting beyond 512 levels, a cycle, or the
 * discarded case) a JS serializer that follows the `JSON.stringify` algorithm builds the text:
 * toJSON, boxed primitives, omitted `undefined`/functions/symbols, non-finite numbers as
 * `null`, `TypeError` on BigInt and cycles.
 */

import { isRawJson } from './json-raw.ts';

/** Depth beyond which the walks stop and leave the value to the JS serializer. */
const WALK_DEPTH_LIMIT = 512;

/** Returned by {@link withPlaceholders} when the value needs the JS serializer. */
const UNSUPPORTED: unique symbol = Symbol('unsupported');

const PLACEHOLDER = `\u0000orbit.codec.raw.${Math.random().toString(36).slice(2)}.`;
/** How `JSON.stringify` writes the start of a placeholder string, opening quote included. */
const QUOTED_PLACEHOLDER = JSON.stringify(PLACEHOLDER).slice(0, -1);

const hasOwn = Object.prototype.hasOwnProperty;

function hasToJSON(value: object): boolean {
  return typeof (value as { toJSON?: unknown }).toJSON === 'function';
}

/** Sets an own data property, even one named `__proto__` (plain assignment would not). */
function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') {
    Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
  } else {
    target[key] = value;
  }
}

/** A plain-object copy of the own enumerable string-keyed properties `JSON.stringify` uses. */
function copyRecord(record: Record<string, unknown>): Record<string, unknown> {
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(record)) setOwn(copy, key, record[key]);
  return copy;
}

/**
 * `value` itself when it holds no `RawJson`; otherwise a copy of the containers leading to
 * each `RawJson`, which is replaced by a placeholder string and its text appended to `raws`.
 * `UNSUPPORTED` when a `toJSON` method is on the way or nesting exceeds `budget`.
 */
function withPlaceholders(value: object, budget: number, raws: string[]): unknown {
  if (budget === 0) return UNSUPPORTED;
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      if (typeof item !== 'object' || item === null) continue;
      const replaced = withPlaceholders(item, budget - 1, raws);
      if (replaced === UNSUPPORTED) return UNSUPPORTED;
      if (replaced !== item) {
        copy ??= value.slice();
        copy[i] = replaced;
      }
    }
    return copy ?? value;
  }
  if (isRawJson(value)) {
    raws.push(value.text);
    return PLACEHOLDER + (raws.length - 1);
  }
  if (hasToJSON(value)) return UNSUPPORTED;
  const record = value as Record<string, unknown>;
  let copy: Record<string, unknown> | undefined;
  for (const key in record) {
    if (!hasOwn.call(record, key)) continue;
    const item = record[key];
    if (typeof item !== 'object' || item === null) continue;
    const replaced = withPlaceholders(item, budget - 1, raws);
    if (replaced === UNSUPPORTED) return UNSUPPORTED;
    if (replaced !== item) {
      copy ??= copyRecord(record);
      setOwn(copy, key, replaced);
    }
  }
  return copy ?? value;
}

/** Puts the raw texts in place of their placeholders, or `undefined` if anything is off. */
function substitute(text: string, raws: readonly string[]): string | undefined {
  let out = '';
  let from = 0;
  let seen = 0;
  for (let at = text.indexOf(QUOTED_PLACEHOLDER); at !== -1; at = text.indexOf(QUOTED_PLACEHOLDER, from)) {
    const digits = at + QUOTED_PLACEHOLDER.length;
    const close = text.indexOf('"', digits);
    const index = text.slice(digits, close);
    if (!/^(?:0|[1-9][0-9]*)$/.test(index) || Number(index) !== seen || seen >= raws.length) return undefined;
    out += text.slice(from, at) + (raws[seen] as string);
    from = close + 1;
    seen++;
  }
  return seen === raws.length ? out + text.slice(from) : undefined;
}

/** Whether the JS serializer must take over for `value`: a `RawJson` or `toJSON` below it. */
function needsCustom(value: object, budget: number): boolean {
  if (budget === 0) return true;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      if (typeof item === 'object' && item !== null && needsCustom(item, budget - 1)) return true;
    }
    return false;
  }
  if (isRawJson(value) || hasToJSON(value)) return true;
  const record = value as Record<string, unknown>;
  for (const key in record) {
    const item = record[key];
    if (typeof item === 'object' && item !== null && needsCustom(item, budget - 1)) return true;
  }
  return false;
}

/** Serializes one value following `JSON.stringify`; `undefined` means "omit". */
function serialize(holderKey: string, input: unknown, ancestors: object[]): string | undefined {
  let value = input;
  if ((typeof value === 'object' && value !== null) || typeof value === 'bigint') {
    if (!isRawJson(value)) {
      const toJSON = (value as { toJSON?: unknown }).toJSON;
      if (typeof toJSON === 'function') value = toJSON.call(value, holderKey) as unknown;
    }
  }
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'number':
      return Number.isFinite(value) ? String(value) : 'null';
    case 'boolean':
      return value ? 'true' : 'false';
    case 'bigint':
      throw new TypeError('Do not know how to serialize a BigInt');
    case 'object':
      break;
    default:
      return undefined; // undefined, function, symbol
  }
  if (value === null) return 'null';
  if (isRawJson(value)) return value.text;
  if (value instanceof Number) return serialize(holderKey, Number(value), ancestors);
  if (value instanceof String) return JSON.stringify(String(value));
  if (value instanceof Boolean) return value.valueOf() ? 'true' : 'false';
  if (value instanceof BigInt) throw new TypeError('Do not know how to serialize a BigInt');
  if (!needsCustom(value, WALK_DEPTH_LIMIT)) return JSON.stringify(value);
  if (ancestors.includes(value)) throw new TypeError('Converting circular structure to JSON');
  ancestors.push(value);
  let out: string;
  if (Array.isArray(value)) {
    out = '[';
    for (let i = 0; i < value.length; i++) {
      if (i > 0) out += ',';
      out += serialize(String(i), value[i], ancestors) ?? 'null';
    }
    out += ']';
  } else {
    out = '{';
    const record = value as Record<string, unknown>;
    let first = true;
    for (const key of Object.keys(record)) {
      const member = serialize(key, record[key], ancestors);
      if (member === undefined) continue;
      out += `${(first ? '' : ',') + JSON.stringify(key)}:${member}`;
      first = false;
    }
    out += '}';
  }
  ancestors.pop();
  return out;
}

/**
 * `JSON.stringify(value)` (no indentation), except that every `RawJson` at any depth is
 * emitted as its exact text. Throws `TypeError` where `JSON.stringify` would (BigInt,
 * cycles) and when the value has no JSON form at all (`undefined`, a function, a symbol).
 */
export function stringify(value: unknown): string {
  let out: string | undefined;
  if (typeof value !== 'object' || value === null) {
    out = JSON.stringify(value) as string | undefined;
  } else {
    const raws: string[] = [];
    const prepared = withPlaceholders(value, WALK_DEPTH_LIMIT, raws);
    if (prepared !== UNSUPPORTED) {
      out = JSON.stringify(prepared);
      if (raws.length > 0) out = substitute(out, raws);
    }
    if (out === undefined || prepared === UNSUPPORTED) out = serialize('', value, []);
  }
  if (out === undefined) throw new TypeError(`${typeof value} has no JSON representation`);
  return out;
}

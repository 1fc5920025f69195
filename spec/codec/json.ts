/**
 * @module json
 * Strict JSON for the wire: `parseStrict` accepts exactly the RFC 8259 texts `JSON.parse`
 * accepts, minus duplicate object keys (at any depth, compared after unescaping) and minus
 * nesting deeper than `maxDepth`; it can keep chosen values as exact source text
 * (`RawJson`), which `stringify` writes back verbatim.
 */

import { parseChecked, resolveMaxDepth } from './json-check.ts';
import { type RawJson, trustedRawJson } from './json-raw.ts';
import type { ValueSpan } from './json-scan.ts';

export { DEFAULT_MAX_DEPTH, MAX_DEPTH_LIMIT } from './json-check.ts';
export { RawJson, isRawJson } from './json-raw.ts';
export { stringify } from './json-stringify.ts';

/** Options of {@link parseStrict}. */
export interface ParseStrictOptions {
  /**
   * Property paths (object member names from the top level, e.g.
   * `[['body', 'event', 'snapshot', 'result']]`) whose values are returned as `RawJson`
   * holding the exact source slice instead of being converted to JS values. They are still
   * validated as strict JSON (duplicate keys and depth included). The segment `'*'` stands for
   * every element of an array (`[['items', '*', 'result']]`) and is followed by a member name.
   * Paths that are absent from the document, or that cross an array other than at a `'*'` or a
   * scalar, are ignored; an empty path stands for the whole document.
   */
  readonly raw?: ReadonlyArray<ReadonlyArray<string>>;
  /** Maximum container nesting (`{}` and `[]` count one level each); default 64, at most 1000. */
  readonly maxDepth?: number;
}

function checkRawPaths(raw: unknown): ReadonlyArray<ReadonlyArray<string>> {
  if (Array.isArray(raw)) {
    let ok = true;
    for (const path of raw) {
      if (!Array.isArray(path)) ok = false;
      else for (const segment of path) if (typeof segment !== 'string') ok = false;
    }
    if (ok) return raw as ReadonlyArray<ReadonlyArray<string>>;
  }
  throw new TypeError('raw must be an array of property paths (arrays of strings)');
}

const hasOwn = Object.prototype.hasOwnProperty;

/**
 * Own property `key` of `holder`, or `undefined`. For an own `"__proto__"` member, `holder[key]`
 * reads the own data property, which shadows the inherited accessor.
 */
function ownValue(holder: unknown, key: string): unknown {
  if (typeof holder !== 'object' || holder === null || !hasOwn.call(holder, key)) return undefined;
  return (holder as Record<string, unknown>)[key];
}

/** Replaces the value at `path` (which exists: the scan found it) by `replacement`. */
function replaceAt(root: unknown, path: ReadonlyArray<string>, replacement: RawJson): void {
  let holder = root;
  for (let i = 0; i < path.length - 1; i++) holder = ownValue(holder, path[i] as string);
  const key = path[path.length - 1] as string;
  if (typeof holder !== 'object' || holder === null || !hasOwn.call(holder, key)) {
    throw new Error('parseStrict: a raw path found in the text is missing from the value');
  }
  // The member is an own writable data property (JSON.parse made it), so assignment updates
  // it, "__proto__" included; defineProperty keeps that obvious for the one special name.
  if (key === '__proto__') {
    Object.defineProperty(holder, key, { value: replacement, writable: true, enumerable: true, configurable: true });
  } else {
    (holder as Record<string, unknown>)[key] = replacement;
  }
}

/**
 * Parses `text` as strict JSON and returns its value; objects are plain objects whose members
 * are all own data properties (a `"__proto__"` member included: it never sets a prototype).
 *
 * Throws `StrictJsonError` with `reason` `'syntax'` (anything `JSON.parse` rejects),
 * `'duplicate_key'` or `'depth'`, plus `offset` and `path`; throws `TypeError` when `text` is
 * not a string or `raw` is malformed, and `RangeError` for a bad `maxDepth`.
 */
export function parseStrict(text: string, options?: ParseStrictOptions): unknown {
  if (typeof text !== 'string') throw new TypeError('parseStrict expects a string');
  const maxDepth = resolveMaxDepth(options?.maxDepth);
  const raw = options?.raw;
  if (raw === undefined || raw.length === 0) return parseChecked(text, maxDepth);
  const paths = checkRawPaths(raw);
  if (paths.some((path) => path.length === 0)) {
    parseChecked(text, maxDepth);
    return trustedRawJson(text.trim());
  }
  const spans: ValueSpan[] = [];
  const value = parseChecked(text, maxDepth, paths, spans);
  for (const { path, start, end } of spans) replaceAt(value, path, trustedRawJson(text.slice(start, end)));
  return value;
}

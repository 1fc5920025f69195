/**
 * @module json-check
 * The fast path of strict parsing. `JSON.parse` (native, exact RFC 8259 grammar, iterative,
 * safe for `__proto__`) parses the text; then two cheap checks prove that nothing was lost:
 *
 * - a duplicate key collapses into one property, so the text has a duplicate iff the number
 *   of members in the text (counted by `countMembers`) exceeds the number of own keys in the
 *   parsed tree (counted by a walk that also measures nesting depth);
 * - the same walk stops as soon as a container is nested deeper than `maxDepth`.
 *
 * Whenever `JSON.parse` throws or a check fails, the reference validator re-reads the text to
 * produce the exact error (reason, offset, path). Bad input thus costs more than good input,
 * but stays linear in the text length.
 */

import { StrictJsonError } from './errors.ts';
import { countMembers, scanMembers, type ValueSpan } from './json-scan.ts';
import { findStrictJsonError } from './json-validate.ts';

/** Nesting levels allowed when the caller does not say (`{}` and `[]` are one level). */
export const DEFAULT_MAX_DEPTH = 64;
/** Largest accepted `maxDepth`: bounds the recursion of the checking walk. */
export const MAX_DEPTH_LIMIT = 1000;

/** Validates a `maxDepth` option and applies the default. */
export function resolveMaxDepth(maxDepth: number | undefined): number {
  if (maxDepth === undefined) return DEFAULT_MAX_DEPTH;
  if (!Number.isInteger(maxDepth) || maxDepth < 0 || maxDepth > MAX_DEPTH_LIMIT) {
    throw new RangeError(`maxDepth must be an integer from 0 to ${MAX_DEPTH_LIMIT}, got ${String(maxDepth)}`);
  }
  return maxDepth;
}

const TOO_DEEP = -1;
const hasOwn = Object.prototype.hasOwnProperty;

/**
 * Number of own keys in the container `node` and all containers below it, or `TOO_DEEP`
 * when `node` sits deeper than `budget` allows (`budget` is the number of levels still
 * allowed, counting `node`'s own). Own keys only, so that enumerable properties added to
 * `Object.prototype` by someone else can never mask a duplicate.
 */
function countKeys(node: object, budget: number): number {
  if (budget <= 0) return TOO_DEEP;
  let total = 0;
  if (Array.isArray(node)) {
    for (let i = 0; i < node.length; i++) {
      const child: unknown = node[i];
      if (typeof child === 'object' && child !== null) {
        const sub = countKeys(child, budget - 1);
        if (sub === TOO_DEEP) return TOO_DEEP;
        total += sub;
      }
    }
    return total;
  }
  const record = node as Record<string, unknown>;
  for (const key in record) {
    if (!hasOwn.call(record, key)) continue;
    total++;
    const child = record[key];
    if (typeof child === 'object' && child !== null) {
      const sub = countKeys(child, budget - 1);
      if (sub === TOO_DEEP) return TOO_DEEP;
      total += sub;
    }
  }
  return total;
}

function reject(text: string, maxDepth: number): never {
  // The validator accepts exactly what JSON.parse accepts; should it not, fail closed.
  throw findStrictJsonError(text, maxDepth) ?? new StrictJsonError('syntax', 'Invalid JSON', 0, '');
}

/**
 * Parses `text` as strict JSON (see `parseStrict`); throws `StrictJsonError`. With `paths`
 * (all non-empty), also appends to `spans` the source spans of the values at those paths.
 */
export function parseChecked(text: string, maxDepth: number, paths?: ReadonlyArray<ReadonlyArray<string>>, spans?: ValueSpan[]): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    reject(text, maxDepth);
  }
  if (typeof value === 'object' && value !== null) {
    const keys = countKeys(value, maxDepth);
    const members =
      keys === TOO_DEEP
        ? Number.NaN // never equal: go to the validator
        : paths === undefined || spans === undefined
          ? countMembers(text)
          : scanMembers(text, paths, spans);
    if (keys !== members) {
      // A duplicate key or excessive depth: the validator says which and where. Both checks
      // are exact, so it always finds one; should it not, fail closed all the same.
      throw findStrictJsonError(text, maxDepth) ?? new Error('parseStrict: fast check and validator disagree');
    }
  }
  return value;
}

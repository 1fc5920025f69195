/**
 * @module
 * Looking into a JSON value of unknown shape: a response or a frame that may break the contract,
 * read without claiming a shape for it. Where a body is checked, a generated validator of
 * `@orbit/generated` does it; these only look.
 */

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The value at `path` (member names, outermost first), or undefined where a step is not a member of an object. */
export function memberAt(value: unknown, ...path: readonly string[]): unknown {
  let at = value;
  for (const name of path) {
    if (!isObject(at) || !Object.hasOwn(at, name)) return undefined;
    at = at[name];
  }
  return at;
}

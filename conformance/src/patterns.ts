/**
 * @module
 * Case-id patterns, as used by `--only`, `--skip` and the known-failing files: `*` matches any run
 * of characters, everything else is literal.
 */

export function globToRegExp(pattern: string): RegExp {
  const escaped = pattern.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(`^${escaped.join('.*')}$`);
}

/** Whether `id` matches any of the patterns. */
export function matchesAny(id: string, patterns: readonly string[]): boolean {
  return patterns.some((p) => globToRegExp(p).test(id));
}

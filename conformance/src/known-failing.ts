/**
 * @module
 * The expected-failures ratchet (as in connectrpc/conformance): a text file of case-id patterns
 * (`*` is a wildcard), one per line, each with a reason, either after `#` on the same line or in
 * the comment lines directly above it. A listed case that fails is reported as known; a listed
 * case that passes fails the run as stale, so the list only ever shrinks. An entry that matches
 * no case is an error (a typo would silently list nothing).
 */
import { readFileSync } from 'node:fs';
import { globToRegExp } from './case.ts';

export interface KnownFailingEntry {
  readonly pattern: string;
  readonly reason: string;
  readonly line: number;
}

export class KnownFailingError extends Error {
  override readonly name = 'KnownFailingError';
}

const PATTERN = /^[a-z*][a-z0-9.*-]*$/;

export function parseKnownFailing(text: string, source = 'known-failing'): KnownFailingEntry[] {
  const entries: KnownFailingEntry[] = [];
  let pendingComment: string[] = [];
  for (const [index, rawLine] of text.split(/\r?\n/).entries()) {
    const line = rawLine.trim();
    if (line === '') {
      pendingComment = [];
      continue;
    }
    if (line.startsWith('#')) {
      pendingComment.push(line.replace(/^#+\s*/, ''));
      continue;
    }
    const hash = line.indexOf('#');
    const pattern = (hash < 0 ? line : line.slice(0, hash)).trim();
    const inline = hash < 0 ? '' : line.slice(hash + 1).trim();
    if (!PATTERN.test(pattern)) throw new KnownFailingError(`${source}:${index + 1}: "${pattern}" is not a case-id pattern`);
    const reason = inline || pendingComment.join(' ').trim();
    if (!reason)
      throw new KnownFailingError(`${source}:${index + 1}: "${pattern}" needs a reason (a # comment on the line or directly above)`);
    entries.push({ pattern, reason, line: index + 1 });
  }
  return entries;
}

export function loadKnownFailing(path: string): KnownFailingEntry[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new KnownFailingError(`cannot read ${path}: ${(error as Error).message}`);
  }
  return parseKnownFailing(text, path);
}

/** The entry that lists `id`, if any. */
export function knownFailingEntry(entries: readonly KnownFailingEntry[], id: string): KnownFailingEntry | undefined {
  return entries.find((e) => globToRegExp(e.pattern).test(id));
}

/** Throws when an entry matches none of `ids`. */
export function checkEntriesMatch(entries: readonly KnownFailingEntry[], ids: readonly string[]): void {
  for (const entry of entries) {
    const re = globToRegExp(entry.pattern);
    if (!ids.some((id) => re.test(id))) throw new KnownFailingError(`known-failing line ${entry.line}: "${entry.pattern}" matches no case`);
  }
}

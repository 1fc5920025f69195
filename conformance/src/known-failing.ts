/**
 * @module
 * The expected-failures ratchet (as in connectrpc/conformance), made precise: each line names a
 * case (a case-id pattern, `*` a wildcard) and the failure it expects, either a message pattern
 * (`/regex/flags`, matched against the failure message) or a failure kind (`timeout`, `network`,
 * `frames`, `setup`, `assert`), and gives a reason after `#` on the same line or in the comment
 * lines directly above it.
 *
 * A listed case that fails *as listed* is known; one that fails in another way is a new failure;
 * one that passes fails the run as stale, so the list only ever shrinks. An entry that matches no
 * case is an error (a typo would silently list nothing). The known-flaky file has the same format:
 * a matching failure is reported as flaky and does not fail the run, and a pass is just a pass.
 */
import { readFileSync } from 'node:fs';
import { FAILURE_KINDS, type FailureKind } from './errors.ts';
import { globToRegExp } from './patterns.ts';

export type FailureMatcher =
  | { readonly kind: 'message'; readonly regex: RegExp }
  | { readonly kind: 'failure'; readonly failure: FailureKind };

export interface KnownFailingEntry {
  readonly pattern: string;
  readonly matcher: FailureMatcher;
  readonly reason: string;
  readonly line: number;
  readonly source: string;
}

/** What a failed case reports, for matching. */
export interface FailureFacts {
  readonly message: string;
  readonly kind: FailureKind;
}

export class KnownFailingError extends Error {
  override readonly name = 'KnownFailingError';
}

const PATTERN = /^[a-z*][a-z0-9.*-]*$/;

/** Splits `/regex/flags rest` (a `/` inside the regex is written `\/`). */
function splitRegex(text: string): { source: string; flags: string; rest: string } | null {
  for (let i = 1; i < text.length; i++) {
    if (text[i] === '\\') {
      i++;
      continue;
    }
    if (text[i] !== '/') continue;
    const flags = /^[a-z]*/.exec(text.slice(i + 1))![0];
    const rest = text.slice(i + 1 + flags.length);
    if (rest !== '' && !/^\s/.test(rest)) return null;
    return { source: text.slice(1, i), flags, rest: rest.trim() };
  }
  return null;
}

export function parseKnownFailing(text: string, source = 'known-failing'): KnownFailingEntry[] {
  const entries: KnownFailingEntry[] = [];
  let pendingComment: string[] = [];
  for (const [index, rawLine] of text.split(/\r?\n/).entries()) {
    const where = `${source}:${index + 1}`;
    const line = rawLine.trim();
    if (line === '') {
      pendingComment = [];
      continue;
    }
    if (line.startsWith('#')) {
      pendingComment.push(line.replace(/^#+\s*/, ''));
      continue;
    }
    const space = line.search(/\s/);
    const pattern = space < 0 ? line : line.slice(0, space);
    if (!PATTERN.test(pattern)) throw new KnownFailingError(`${where}: "${pattern}" is not a case-id pattern`);
    let rest = space < 0 ? '' : line.slice(space).trim();
    let matcher: FailureMatcher;
    if (rest.startsWith('/')) {
      const split = splitRegex(rest);
      if (!split) throw new KnownFailingError(`${where}: the message pattern ${rest} does not end with "/"`);
      try {
        matcher = { kind: 'message', regex: new RegExp(split.source, split.flags) };
      } catch (error) {
        throw new KnownFailingError(
          `${where}: the message pattern /${split.source}/ is not a valid regular expression: ${(error as Error).message}`,
        );
      }
      rest = split.rest;
    } else {
      const word = /^[a-z]+/.exec(rest)?.[0];
      if (!word || !(FAILURE_KINDS as readonly string[]).includes(word))
        throw new KnownFailingError(
          `${where}: "${pattern}" must name the failure it expects: a /message pattern/ or one of ${FAILURE_KINDS.join(', ')}`,
        );
      matcher = { kind: 'failure', failure: word as FailureKind };
      rest = rest.slice(word.length).trim();
    }
    if (rest !== '' && !rest.startsWith('#')) throw new KnownFailingError(`${where}: unexpected "${rest}" (a reason starts with #)`);
    const reason = rest.replace(/^#\s*/, '') || pendingComment.join(' ').trim();
    if (!reason) throw new KnownFailingError(`${where}: "${pattern}" needs a reason (a # comment on the line or directly above)`);
    entries.push({ pattern, matcher, reason, line: index + 1, source });
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

/** How an entry reads in a message: `line 3: /Cache-Control/`. */
export function describeEntry(entry: KnownFailingEntry): string {
  const what = entry.matcher.kind === 'message' ? String(entry.matcher.regex) : `a ${entry.matcher.failure} failure`;
  return `${entry.source}:${entry.line} ${what}`;
}

/** The entries that list case `id`. */
export function entriesFor(entries: readonly KnownFailingEntry[], id: string): KnownFailingEntry[] {
  return entries.filter((e) => globToRegExp(e.pattern).test(id));
}

export function matchesFailure(entry: KnownFailingEntry, failure: FailureFacts): boolean {
  return entry.matcher.kind === 'message' ? entry.matcher.regex.test(failure.message) : entry.matcher.failure === failure.kind;
}

/** Throws when an entry matches none of `ids`. */
export function checkEntriesMatch(entries: readonly KnownFailingEntry[], ids: readonly string[]): void {
  for (const entry of entries) {
    const re = globToRegExp(entry.pattern);
    if (!ids.some((id) => re.test(id))) throw new KnownFailingError(`${entry.source}:${entry.line}: "${entry.pattern}" matches no case`);
  }
}

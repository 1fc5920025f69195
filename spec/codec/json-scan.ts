/**
 * @module json-scan
 * Fast scans over text already known to be valid JSON (because `JSON.parse` accepted it);
 * they never validate, and on other text their results are meaningless.
 *
 * Strings are skipped with `indexOf` (much faster than a char loop); every other character
 * is looked at once. A member name is a string followed by `:`, and `:` appears nowhere else
 * outside strings, so counting colons outside strings counts object members.
 */

/** A property path and the source span of its value, found by {@link scanMembers}. */
export interface ValueSpan {
  readonly path: ReadonlyArray<string>;
  readonly start: number;
  readonly end: number;
}

/** Index of the closing quote of the JSON string whose opening quote is at `open`. */
function closingQuote(text: string, open: number): number {
  let close = text.indexOf('"', open + 1);
  while (text.charCodeAt(close - 1) === 0x5c) {
    // The quote is escaped iff an odd number of backslashes precede it.
    let b = close - 2;
    while (text.charCodeAt(b) === 0x5c) b--;
    if (((close - 1 - b) & 1) === 0) break;
    close = text.indexOf('"', close + 1);
  }
  return close;
}

/** Index just after the scalar (string, number, literal) that starts at `start`. */
function scalarEnd(text: string, start: number): number {
  if (text.charCodeAt(start) === 0x22) return closingQuote(text, start) + 1;
  const n = text.length;
  let i = start + 1;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 0x2c || c === 0x7d || c === 0x5d || c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) break;
    i++;
  }
  return i;
}

/**
 * Whether the member name whose quotes are at `open` and `end - 1` equals `name` once
 * unescaped. An escape always makes the source longer than its value, so a source of the
 * same length matches only literally, and a shorter one never does.
 */
function nameEquals(text: string, open: number, end: number, name: string): boolean {
  const length = end - open - 2;
  if (length === name.length) return text.startsWith(name, open + 1) && name.indexOf('\\') === -1;
  if (length < name.length) return false;
  return text.slice(open + 1, end - 1).indexOf('\\') !== -1 && JSON.parse(text.slice(open, end)) === name;
}

/** Number of object members in the valid JSON `text`, duplicates included. */
export function countMembers(text: string): number {
  let count = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) i = closingQuote(text, i);
    else if (c === 0x3a) count++;
  }
  return count;
}

/**
 * The path segment that stands for every element of an array (`['items', '*', 'result']`); it
 * never matches a member name, and a path must not end with it.
 */
export const ANY_INDEX = '*';

/** `path` with each {@link ANY_INDEX} replaced by the index of the element being scanned. */
function concrete(path: ReadonlyArray<string>, index: readonly number[]): string[] {
  return path.map((segment, k) => (segment === ANY_INDEX ? String(index[k + 1]) : segment));
}

/**
 * Like {@link countMembers}, and also appends to `spans` the source span of the value at each
 * of the non-empty `paths` (member names from the top level, or {@link ANY_INDEX} for the
 * elements of an array). Paths that are absent or cross an array (other than at an
 * `ANY_INDEX`) or a scalar yield nothing; a path inside another wanted value is subsumed by it.
 * A span's `path` names the array indices it went through.
 *
 * While scanning, `matched[p]` is how many leading segments of path p the enclosing members
 * match: a name at nesting depth d is compared with segment d - 1 only when the d - 1
 * enclosing levels all matched. Segment k is the level of the container at depth k + 1, so an
 * `ANY_INDEX` there matches when that container is an array.
 */
export function scanMembers(text: string, paths: ReadonlyArray<ReadonlyArray<string>>, spans: ValueSpan[]): number {
  const n = text.length;
  const matched = new Array<number>(paths.length).fill(0);
  let count = 0;
  let depth = 0;
  let nameOpen = 0;
  let nameEnd = 0;
  let openRaw = -1; // the path whose object/array value is being passed over, if any
  let openPath: ReadonlyArray<string> = [];
  let rawStart = 0;
  let rawDepth = 0;
  // Only paths with ANY_INDEX need to know, per depth, whether the container is an array and
  // which element is being read.
  const wild = paths.some((path) => path.includes(ANY_INDEX));
  const inArray: boolean[] = [false];
  const index: number[] = [0];
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      nameOpen = i;
      i = closingQuote(text, i);
      nameEnd = i + 1;
    } else if (c === 0x3a) {
      count++;
      if (openRaw !== -1) continue;
      for (let p = 0; p < paths.length; p++) {
        const path = paths[p] as ReadonlyArray<string>;
        let m = matched[p] as number;
        if (m >= depth) matched[p] = m = depth - 1; // a later member of the same object
        if (wild) {
          while (m < depth - 1 && path[m] === ANY_INDEX && inArray[m + 1] === true) m++;
          matched[p] = m;
        }
        if (m !== depth - 1 || m >= path.length || path[m] === ANY_INDEX || !nameEquals(text, nameOpen, nameEnd, path[m] as string))
          continue;
        if (depth < path.length) {
          matched[p] = depth;
          continue;
        }
        let start = i + 1;
        let s = text.charCodeAt(start);
        while (s === 0x20 || s === 0x0a || s === 0x0d || s === 0x09) s = text.charCodeAt(++start);
        if (s === 0x7b || s === 0x5b) {
          openRaw = p;
          openPath = wild ? concrete(path, index) : path;
          rawStart = start;
          rawDepth = depth;
        } else {
          spans.push({ path: wild ? concrete(path, index) : path, start, end: scalarEnd(text, start) });
        }
        break;
      }
    } else if (c === 0x7b || c === 0x5b) {
      depth++;
      if (wild) {
        inArray[depth] = c === 0x5b;
        index[depth] = 0;
      }
    } else if (c === 0x7d || c === 0x5d) {
      depth--;
      if (openRaw !== -1 && depth === rawDepth) {
        spans.push({ path: openPath, start: rawStart, end: i + 1 });
        openRaw = -1;
      }
    } else if (c === 0x2c && wild && inArray[depth] === true) {
      index[depth] = (index[depth] as number) + 1;
    }
  }
  return count;
}

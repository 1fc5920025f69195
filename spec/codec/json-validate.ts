/**
 * @module json-validate
 * The reference strict JSON validator: a complete, iterative RFC 8259 recognizer that also
 * detects duplicate object keys (compared after unescaping) and excessive nesting. It builds
 * no values and is written for exact error locations rather than speed: `parseStrict` runs
 * it only when its fast path has found that a text is bad, so that the error says precisely
 * where. Being iterative, it cannot overflow the call stack whatever the nesting depth.
 *
 * Precedence: a syntax error anywhere wins; otherwise the first duplicate key or too-deep
 * container in document order is reported.
 */

import { StrictJsonError } from './errors.ts';
import { describeOffset, formatPointer } from './json-pointer.ts';

const VALUE = 0; // expecting a value
const FIRST_MEMBER = 1; // just after '{': a key or '}'
const MEMBER = 2; // after ',' in an object: a key
const FIRST_ELEMENT = 3; // just after '[': a value or ']'
const AFTER_VALUE = 4; // after a complete value

const OBJECT = 0;
const ARRAY = 1;

function isWhitespace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

function isHexDigit(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
}

function describeChar(text: string, offset: number): string {
  if (offset >= text.length) return 'end of input';
  const c = text.charCodeAt(offset);
  if (c < 0x20 || c === 0x7f || (c >= 0xd800 && c <= 0xdfff) || c === 0xfeff) {
    return `character U+${c.toString(16).toUpperCase().padStart(4, '0')}`;
  }
  return `character ${JSON.stringify(text[offset])}`;
}

/**
 * Checks `text` against strict JSON. Returns the error that `parseStrict` must throw, or
 * `null` when the text is strict JSON nested at most `maxDepth` levels (`Infinity` allowed).
 */
export function findStrictJsonError(text: string, maxDepth: number): StrictJsonError | null {
  const n = text.length;
  const kinds: number[] = []; // OBJECT | ARRAY per open container
  const segments: Array<string | number> = []; // current key / index per open container
  const keySets: Array<Set<string> | undefined> = [];
  let semantic: StrictJsonError | null = null;
  let state = VALUE;
  let afterComma = false;
  let i = 0;

  const syntax = (offset: number, detail: string): StrictJsonError => {
    const path = formatPointer(segments, kinds.length - 1);
    const where = path === '' ? '' : ` inside ${path}`;
    return new StrictJsonError('syntax', `Invalid JSON: ${detail} at ${describeOffset(text, offset)}${where}`, offset, path);
  };
  const unexpected = (offset: number, expected: string): StrictJsonError =>
    syntax(offset, `unexpected ${describeChar(text, offset)}, expected ${expected}`);

  /** Returns the index after the closing quote of the string opening at `start`, or an error. */
  const scanString = (start: number): number | StrictJsonError => {
    let j = start + 1;
    for (;;) {
      if (j >= n) return syntax(n, 'unterminated string');
      const c = text.charCodeAt(j);
      if (c === 0x22) return j + 1;
      if (c === 0x5c) {
        const e = j + 1 < n ? text.charCodeAt(j + 1) : -1;
        if (e === 0x75) {
          for (let h = j + 2; h < j + 6; h++) {
            if (h >= n || !isHexDigit(text.charCodeAt(h))) {
              return syntax(h, `invalid \\u escape: expected a hex digit, found ${describeChar(text, h)}`);
            }
          }
          j += 6;
        } else if (e === 0x22 || e === 0x5c || e === 0x2f || e === 0x62 || e === 0x66 || e === 0x6e || e === 0x72 || e === 0x74) {
          j += 2;
        } else {
          return syntax(j + 1, `invalid escape sequence: ${describeChar(text, j + 1)} after a backslash`);
        }
      } else if (c < 0x20) {
        return syntax(j, `unescaped control ${describeChar(text, j)} in string`);
      } else {
        j++;
      }
    }
  };

  const scanNumber = (start: number): number | StrictJsonError => {
    let j = start;
    if (text.charCodeAt(j) === 0x2d) j++;
    if (j >= n || !isDigit(text.charCodeAt(j))) return unexpected(j, 'a digit');
    if (text.charCodeAt(j) === 0x30) {
      j++;
      if (j < n && isDigit(text.charCodeAt(j))) return syntax(j, 'leading zeros are not allowed in numbers');
    } else {
      while (j < n && isDigit(text.charCodeAt(j))) j++;
    }
    if (j < n && text.charCodeAt(j) === 0x2e) {
      j++;
      if (j >= n || !isDigit(text.charCodeAt(j))) return unexpected(j, 'a digit after the decimal point');
      while (j < n && isDigit(text.charCodeAt(j))) j++;
    }
    if (j < n && (text.charCodeAt(j) | 0x20) === 0x65) {
      j++;
      const s = j < n ? text.charCodeAt(j) : -1;
      if (s === 0x2b || s === 0x2d) j++;
      if (j >= n || !isDigit(text.charCodeAt(j))) return unexpected(j, 'a digit in the exponent');
      while (j < n && isDigit(text.charCodeAt(j))) j++;
    }
    return j;
  };

  const scanLiteral = (start: number, word: string): number | StrictJsonError => {
    for (let k = 0; k < word.length; k++) {
      if (start + k >= n || text.charCodeAt(start + k) !== word.charCodeAt(k)) {
        return unexpected(start + k, k === 0 ? 'a value' : `${JSON.stringify(word)}`);
      }
    }
    return start + word.length;
  };

  const open = (kind: number, offset: number): void => {
    kinds.push(kind);
    segments.push(0);
    keySets.push(undefined);
    if (semantic === null && kinds.length > maxDepth) {
      const path = formatPointer(segments, kinds.length - 1);
      semantic = new StrictJsonError(
        'depth',
        `JSON nested deeper than ${maxDepth} levels at ${describeOffset(text, offset)}: the container at ${
          path === '' ? 'the top level' : path
        }`,
        offset,
        path,
      );
    }
  };

  const close = (): void => {
    kinds.pop();
    segments.pop();
    keySets.pop();
  };

  for (;;) {
    while (i < n && isWhitespace(text.charCodeAt(i))) i++;
    const c = i < n ? text.charCodeAt(i) : -1;

    if (state === VALUE || state === FIRST_ELEMENT) {
      if (state === FIRST_ELEMENT && c === 0x5d) {
        i++;
        close();
        state = AFTER_VALUE;
        continue;
      }
      let end: number | StrictJsonError;
      if (c === 0x7b) {
        open(OBJECT, i);
        i++;
        state = FIRST_MEMBER;
        afterComma = false;
        continue;
      } else if (c === 0x5b) {
        open(ARRAY, i);
        i++;
        state = FIRST_ELEMENT;
        afterComma = false;
        continue;
      } else if (c === 0x22) {
        end = scanString(i);
      } else if (c === 0x2d || isDigit(c)) {
        end = scanNumber(i);
      } else if (c === 0x74) {
        end = scanLiteral(i, 'true');
      } else if (c === 0x66) {
        end = scanLiteral(i, 'false');
      } else if (c === 0x6e) {
        end = scanLiteral(i, 'null');
      } else if (c === 0x5d && afterComma) {
        return syntax(i, "trailing comma: expected a value after ',' but found ']'");
      } else {
        return unexpected(i, 'a value');
      }
      if (typeof end !== 'number') return end;
      i = end;
      state = AFTER_VALUE;
      continue;
    }

    if (state === FIRST_MEMBER || state === MEMBER) {
      if (c === 0x7d) {
        if (state === FIRST_MEMBER) {
          i++;
          close();
          state = AFTER_VALUE;
          continue;
        }
        return syntax(i, "trailing comma: expected a property name after ',' but found '}'");
      }
      if (c !== 0x22) return unexpected(i, 'a double-quoted property name');
      const keyStart = i;
      const end = scanString(i);
      if (typeof end !== 'number') return end;
      let key = text.slice(keyStart + 1, end - 1);
      if (key.indexOf('\\') !== -1) key = JSON.parse(text.slice(keyStart, end)) as string;
      const top = kinds.length - 1;
      segments[top] = key;
      if (semantic === null) {
        let keys = keySets[top];
        if (keys === undefined) keySets[top] = keys = new Set();
        if (keys.has(key)) {
          const path = formatPointer(segments, top);
          semantic = new StrictJsonError(
            'duplicate_key',
            `Duplicate key ${JSON.stringify(key)} at ${describeOffset(text, keyStart)} in the object at ${
              path === '' ? 'the top level' : path
            }`,
            keyStart,
            path,
            key,
          );
        } else {
          keys.add(key);
        }
      }
      i = end;
      while (i < n && isWhitespace(text.charCodeAt(i))) i++;
      if (i >= n || text.charCodeAt(i) !== 0x3a) return unexpected(i, "':' after the property name");
      i++;
      state = VALUE;
      afterComma = false;
      continue;
    }

    // AFTER_VALUE
    const top = kinds.length - 1;
    if (top < 0) {
      if (c !== -1) return unexpected(i, 'end of input after the JSON value');
      return semantic;
    }
    if (kinds[top] === OBJECT) {
      if (c === 0x2c) {
        i++;
        state = MEMBER;
      } else if (c === 0x7d) {
        i++;
        close();
      } else {
        return unexpected(i, "',' or '}'");
      }
    } else {
      if (c === 0x2c) {
        i++;
        segments[top] = (segments[top] as number) + 1;
        state = VALUE;
        afterComma = true;
      } else if (c === 0x5d) {
        i++;
        close();
      } else {
        return unexpected(i, "',' or ']'");
      }
    }
  }
}

import { describe, expect, it } from 'vitest';
import { findStrictJsonError } from './json-validate.ts';

describe('findStrictJsonError (reference validator)', () => {
  it('returns null for strict JSON', () => {
    for (const text of ['0', '""', ' [ ] ', '{"a":[1,{"b":null}],"c":"\\u0000"}', '"\\ud800"']) {
      expect(findStrictJsonError(text, 64)).toBeNull();
    }
  });
  it('locates syntax errors at the offending character', () => {
    const cases: Array<[string, number, RegExp]> = [
      ['{"a":1,}', 7, /trailing comma/],
      ['[1,]', 3, /trailing comma/],
      ['01', 1, /leading zeros/],
      ['"a\u0001"', 2, /control character U\+0001/],
      ['"\\q"', 2, /invalid escape sequence/],
      ['"\\u00G0"', 5, /hex digit/],
      ['"abc', 4, /unterminated string/],
      ['[1 2]', 3, /expected ',' or ']'/],
      ['{"a" 1}', 5, /expected ':'/],
      ['{1:1}', 1, /double-quoted property name/],
      ['1.', 2, /after the decimal point/],
      ['1e+', 3, /in the exponent/],
      ['tru', 3, /expected "true"/],
      ['{} {}', 3, /end of input after the JSON value/],
      ['\ufeff1', 0, /U\+FEFF/],
      ['', 0, /end of input, expected a value/],
    ];
    for (const [text, offset, message] of cases) {
      const error = findStrictJsonError(text, 64);
      expect(error, text).not.toBeNull();
      expect(error?.reason, text).toBe('syntax');
      expect(error?.offset, text).toBe(offset);
      expect(error?.message, text).toMatch(message);
    }
  });
  it('gives the innermost open container as the path of a syntax error', () => {
    expect(findStrictJsonError('{"a":{"b":[1,}]}}', 64)?.path).toBe('/a/b');
    expect(findStrictJsonError('[0,[1,[2,x]]]', 64)?.path).toBe('/1/1');
    expect(findStrictJsonError('x', 64)?.path).toBe('');
  });
  it('finds duplicates after unescaping and names the object', () => {
    const error = findStrictJsonError('{"o":{"k":1,"\\u006b":2}}', 64);
    expect(error).toMatchObject({ reason: 'duplicate_key', offset: 12, path: '/o', key: 'k' });
  });
  it('points a depth error at the first too-deep container', () => {
    expect(findStrictJsonError('{"a":[{"b":[]}]}', 3)).toMatchObject({ reason: 'depth', offset: 11, path: '/a/0/b' });
    expect(findStrictJsonError('[[]]', Infinity)).toBeNull();
  });
  it('prefers a syntax error anywhere over an earlier duplicate or depth error', () => {
    expect(findStrictJsonError('[{"a":1,"a":1},', 64)?.reason).toBe('syntax');
    expect(findStrictJsonError('[[[[]]]] ]', 2)?.reason).toBe('syntax');
  });
  it('reports the first of several duplicate or depth errors', () => {
    expect(findStrictJsonError('[{"a":1,"a":1},{"b":1,"b":1}]', 64)?.key).toBe('a');
    expect(findStrictJsonError('[[[1]],{"a":1,"a":1}]', 2)?.reason).toBe('depth');
  });
  it('handles a million nesting levels without recursion', () => {
    const deep = '['.repeat(1_000_000) + ']'.repeat(1_000_000);
    expect(findStrictJsonError(deep, 64)?.reason).toBe('depth');
    expect(findStrictJsonError(deep.slice(0, -1), 64)?.reason).toBe('syntax');
  });
});

import { describe, expect, it } from 'vitest';
import { describeOffset, escapePointerToken, formatPointer } from './json-pointer.ts';

describe('json-pointer', () => {
  it('escapes ~ before / (RFC 6901)', () => {
    expect(escapePointerToken('a/b')).toBe('a~1b');
    expect(escapePointerToken('m~n')).toBe('m~0n');
    expect(escapePointerToken('~/')).toBe('~0~1');
    expect(escapePointerToken('~1')).toBe('~01');
    expect(escapePointerToken(3)).toBe('3');
  });
  it('formats the whole document as the empty pointer', () => {
    expect(formatPointer([])).toBe('');
  });
  it('formats segments, optionally only the first ones', () => {
    expect(formatPointer(['body', 'event', 0, ''])).toBe('/body/event/0/');
    expect(formatPointer(['body', 'event', 0], 2)).toBe('/body/event');
  });
  it('describes offsets with 1-based lines and columns', () => {
    expect(describeOffset('abc', 0)).toBe('offset 0 (line 1, column 1)');
    expect(describeOffset('a\nbc\nd', 3)).toBe('offset 3 (line 2, column 2)');
    expect(describeOffset('a\n', 2)).toBe('offset 2 (line 2, column 1)');
  });
});

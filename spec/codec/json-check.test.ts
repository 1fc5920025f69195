import { afterEach, describe, expect, it } from 'vitest';
import { StrictJsonError } from './errors.ts';
import { DEFAULT_MAX_DEPTH, MAX_DEPTH_LIMIT, parseChecked, resolveMaxDepth } from './json-check.ts';

describe('resolveMaxDepth', () => {
  it('defaults to 64 and accepts 0 to 1000', () => {
    expect(DEFAULT_MAX_DEPTH).toBe(64);
    expect(resolveMaxDepth(undefined)).toBe(64);
    expect(resolveMaxDepth(0)).toBe(0);
    expect(resolveMaxDepth(MAX_DEPTH_LIMIT)).toBe(1000);
  });
  it('refuses anything else', () => {
    for (const bad of [-1, 2.5, 1001, Number.NaN, Infinity]) expect(() => resolveMaxDepth(bad)).toThrow(RangeError);
  });
});

describe('parseChecked', () => {
  const polluted = '__orbitPolluted';
  afterEach(() => {
    delete (Object.prototype as Record<string, unknown>)[polluted];
  });

  it('is not fooled by enumerable properties added to Object.prototype', () => {
    Object.defineProperty(Object.prototype, polluted, { value: 1, enumerable: true, configurable: true, writable: true });
    expect(() => parseChecked('{"a":1,"a":2}', 64)).toThrow(StrictJsonError);
    expect(parseChecked('{"a":{"b":1}}', 64)).toEqual({ a: { b: 1 } });
  });
  it('counts keys only on objects, never on arrays or strings', () => {
    expect(parseChecked('[{"a":[]},"x:y",{"b":{"c":"d"}}]', 64)).toEqual([{ a: [] }, 'x:y', { b: { c: 'd' } }]);
  });
  it('fails closed on depth with no duplicate', () => {
    expect(() => parseChecked('[[[]]]', 2)).toThrow(expect.objectContaining({ reason: 'depth' }));
  });
});

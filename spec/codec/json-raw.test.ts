import { describe, expect, it } from 'vitest';
import { StrictJsonError } from './errors.ts';
import { RawJson, isRawJson, trustedRawJson } from './json-raw.ts';

describe('RawJson', () => {
  it('wraps strict JSON text unchanged and is frozen', () => {
    const raw = new RawJson(' [1, 2.50] ');
    expect(raw.text).toBe(' [1, 2.50] ');
    expect(Object.isFrozen(raw)).toBe(true);
    expect(() => {
      (raw as { text: string }).text = '0';
    }).toThrow(TypeError);
  });
  it('refuses text that is not strict JSON', () => {
    expect(() => new RawJson('{"a":1,"a":2}')).toThrow(StrictJsonError);
    expect(() => new RawJson('[1,]')).toThrow(StrictJsonError);
    expect(() => new RawJson('')).toThrow(StrictJsonError);
    expect(() => new RawJson(1 as unknown as string)).toThrow(TypeError);
  });
  it('is recognised by isRawJson, also across module copies', () => {
    expect(isRawJson(new RawJson('1'))).toBe(true);
    expect(isRawJson(trustedRawJson('1'))).toBe(true);
    expect(trustedRawJson('1')).toBeInstanceOf(RawJson);
    expect(isRawJson({ text: '1' })).toBe(false);
    expect(isRawJson(null)).toBe(false);
    expect(isRawJson('1')).toBe(false);
    const foreign = { text: '2', [Symbol.for('orbit.codec.RawJson')]: true };
    expect(isRawJson(foreign)).toBe(true);
  });
  it('has no toJSON (JSON.stringify would quote it; use stringify)', () => {
    expect('toJSON' in new RawJson('1')).toBe(false);
  });
});

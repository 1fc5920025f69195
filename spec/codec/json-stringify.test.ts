import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RawJson } from './json-raw.ts';
import { stringify } from './json-stringify.ts';

const big = new RawJson('123456789012345678901234567890');

describe('stringify without RawJson: same as JSON.stringify', () => {
  it.each([
    [{ a: 1, b: [true, null, 'x'] }],
    [[undefined, () => 1, Symbol('s')]],
    [{ u: undefined, f: () => 1, s: Symbol('s'), n: 1 }],
    [{ d: new Date(0) }],
    [[Number.NaN, Infinity, -Infinity, -0]],
    [{ boxed: [new Number(1), new String('s'), new Boolean(false)] }],
    [{ toJSON: () => ({ replaced: true }) }],
    ['str'],
    [0],
    [null],
    [Object.assign(Object.create({ inherited: 1 }) as object, { own: 2 })],
    [JSON.parse('{"__proto__":{"x":1}}') as unknown],
  ])('%#', (value) => {
    expect(stringify(value)).toBe(JSON.stringify(value));
  });
  it('throws where JSON.stringify throws', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => stringify(cyclic)).toThrow(TypeError);
    expect(() => stringify({ n: 1n })).toThrow(TypeError);
  });
  it('throws a TypeError for values with no JSON text', () => {
    expect(() => stringify(undefined)).toThrow(TypeError);
    expect(() => stringify(() => 1)).toThrow(TypeError);
    expect(() => stringify(Symbol('s'))).toThrow(TypeError);
  });
  it('agrees with JSON.stringify on arbitrary values', () => {
    fc.assert(
      fc.property(fc.anything({ withBoxedValues: true, withNullPrototype: true, withSparseArray: true, withDate: true }), (value) => {
        let expected: string | undefined;
        try {
          expected = JSON.stringify(value);
        } catch {
          expect(() => stringify(value)).toThrow();
          return;
        }
        if (expected === undefined) expect(() => stringify(value)).toThrow(TypeError);
        else expect(stringify(value)).toBe(expected);
      }),
      { numRuns: 1000 },
    );
  });
});

describe('stringify with RawJson', () => {
  it('writes RawJson verbatim at the top, in arrays and in nested objects', () => {
    expect(stringify(big)).toBe('123456789012345678901234567890');
    expect(stringify([1, big, [big]])).toBe('[1,123456789012345678901234567890,[123456789012345678901234567890]]');
    expect(stringify({ a: { b: new RawJson(' { "x" : 1 } ') }, c: 2 })).toBe('{"a":{"b": { "x" : 1 } },"c":2}');
  });
  it('does not modify the value', () => {
    const value = { a: { b: big }, list: [big] };
    stringify(value);
    expect(value.a.b).toBe(big);
    expect(value.list[0]).toBe(big);
  });
  it('keeps JSON.stringify semantics around RawJson', () => {
    const value = {
      u: undefined,
      f: () => 1,
      n: Number.NaN,
      list: [undefined, big],
      d: new Date(0),
      boxed: new String('s'),
      custom: { toJSON: (key: string) => ({ key, raw: big }) },
    };
    expect(stringify(value)).toBe(
      '{"n":null,"list":[null,123456789012345678901234567890],"d":"1970-01-01T00:00:00.000Z","boxed":"s",' +
        '"custom":{"key":"custom","raw":123456789012345678901234567890}}',
    );
  });
  it('keeps a "__proto__" member next to a RawJson', () => {
    const value = JSON.parse('{"__proto__":{"x":1},"r":0}') as Record<string, unknown>;
    value.r = big;
    expect(stringify(value)).toBe('{"__proto__":{"x":1},"r":123456789012345678901234567890}');
    const nested = JSON.parse('{"__proto__":{"r":0}}') as Record<string, Record<string, unknown>>;
    Object.getOwnPropertyDescriptor(nested, '__proto__')!.value.r = big;
    expect(stringify(nested)).toBe('{"__proto__":{"r":123456789012345678901234567890}}');
  });
  it('is not fooled by strings that look like its placeholders', () => {
    const lookalike = '\u0000orbit.codec.raw.';
    const value = { s: lookalike, t: `"${lookalike}0"`, r: big, u: [`${lookalike}0`] };
    expect(stringify(value)).toBe(JSON.stringify({ ...value, r: 0 }).replace('"r":0', '"r":123456789012345678901234567890'));
  });
  it('detects cycles that go through a RawJson-holding container', () => {
    const cyclic: Record<string, unknown> = { r: big };
    cyclic.self = { back: cyclic };
    expect(() => stringify(cyclic)).toThrow(TypeError);
  });
  it('serializes the same RawJson used many times', () => {
    expect(stringify({ a: big, b: [big, big] })).toBe(
      '{"a":123456789012345678901234567890,"b":[123456789012345678901234567890,123456789012345678901234567890]}',
    );
  });
  it('handles deep nesting around RawJson', () => {
    let value: unknown = big;
    for (let i = 0; i < 600; i++) value = [value];
    expect(stringify(value)).toBe('['.repeat(600) + big.text + ']'.repeat(600));
  });
});

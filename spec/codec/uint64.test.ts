import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CodecError } from './errors.ts';
import { UINT64_MAX, compareUint64, formatUint64, isCanonicalUint64, parseUint64 } from './uint64.ts';

const RUNS = { numRuns: 1000 };
const uint64Arb = fc.bigInt({ min: 0n, max: UINT64_MAX });

describe('uint64: examples', () => {
  it('UINT64_MAX is 2^64 - 1', () => {
    expect(UINT64_MAX).toBe(2n ** 64n - 1n);
  });
  it('accepts canonical strings from 0 to the maximum', () => {
    for (const s of ['0', '1', '13', '9007199254740993', '18446744073709551615']) {
      expect(isCanonicalUint64(s)).toBe(true);
      expect(parseUint64(s)).toBe(BigInt(s));
    }
  });
  const rejects = (label: string, values: unknown[]): void => {
    it(`rejects ${label}`, () => {
      for (const value of values) {
        expect(isCanonicalUint64(value), String(value)).toBe(false);
        expect(() => parseUint64(value as string), String(value)).toThrow(CodecError);
      }
    });
  };
  rejects('the empty string', ['']);
  rejects('leading zeros', ['00', '01', '007', '018446744073709551615']);
  rejects('a sign', ['+1', '-1', '-0', '+0']);
  rejects('fractions', ['1.0', '1.', '.5', '0.0']);
  rejects('exponents', ['1e3', '1E3', '1e+3', '0e0']);
  rejects('whitespace', [' 1', '1 ', '\t1', '1\n', '1 000', '\u00a01']);
  rejects('values above the maximum', ['18446744073709551616', '18446744073709551619', '99999999999999999999', '100000000000000000000']);
  rejects('non-ASCII digits and other characters', ['١', '１', '0x10', '1_000', 'NaN', 'Infinity', '1n']);
  rejects('non-strings', [1, 1n, null, undefined, ['1'], { toString: () => '1' }]);
  it('formats bigints in range and refuses the rest', () => {
    expect(formatUint64(0n)).toBe('0');
    expect(formatUint64(UINT64_MAX)).toBe('18446744073709551615');
    expect(() => formatUint64(-1n)).toThrow(CodecError);
    expect(() => formatUint64(UINT64_MAX + 1n)).toThrow(CodecError);
    expect(() => formatUint64(1 as unknown as bigint)).toThrow(CodecError);
  });
  it('compares strings and bigints numerically', () => {
    expect(compareUint64('9', '10')).toBe(-1);
    expect(compareUint64('10', '9')).toBe(1);
    expect(compareUint64('18446744073709551615', UINT64_MAX)).toBe(0);
    expect(compareUint64(2n, '10')).toBe(-1);
    expect(() => compareUint64('01', '1')).toThrow(CodecError);
    expect(() => compareUint64(-1n, 1n)).toThrow(CodecError);
  });
});

describe('uint64: properties', () => {
  it('round-trips every value in [0, 2^64 - 1]', () => {
    fc.assert(
      fc.property(uint64Arb, (n) => {
        const s = formatUint64(n);
        expect(isCanonicalUint64(s)).toBe(true);
        expect(parseUint64(s)).toBe(n);
        expect(s).toBe(n.toString());
      }),
      RUNS,
    );
  });
  it('rejects every non-canonical variant of every value', () => {
    const variantArb = fc.oneof(
      fc.integer({ min: 1, max: 3 }).map((k) => (s: string) => '0'.repeat(k) + s),
      fc.constantFrom('+', '-').map((sign) => (s: string) => sign + s),
      fc.stringMatching(/^[0-9]{0,4}$/).map((digits) => (s: string) => `${s}.${digits}`),
      fc.tuple(fc.constantFrom('e', 'E'), fc.constantFrom('', '+', '-'), fc.stringMatching(/^[0-9]{1,3}$/)).map(
        ([e, sign, digits]) =>
          (s: string) =>
            s + e + sign + digits,
      ),
      fc.tuple(fc.constantFrom(' ', '\t', '\n', '\r', '\u00a0', '\ufeff'), fc.boolean()).map(
        ([ws, before]) =>
          (s: string) =>
            before ? ws + s : s + ws,
      ),
    );
    fc.assert(
      fc.property(uint64Arb, variantArb, (n, variant) => {
        const s = variant(n.toString());
        expect(isCanonicalUint64(s)).toBe(false);
        expect(() => parseUint64(s)).toThrow(CodecError);
      }),
      RUNS,
    );
  });
  it('rejects every value from 2^64 to 2^65 - 1', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: UINT64_MAX + 1n, max: UINT64_MAX + 2n ** 64n }), (n) => {
        expect(isCanonicalUint64(n.toString())).toBe(false);
        expect(() => parseUint64(n.toString())).toThrow(CodecError);
        expect(() => formatUint64(n)).toThrow(CodecError);
      }),
      RUNS,
    );
  });
  it('rejects every negative value', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(2n ** 64n), max: -1n }), (n) => {
        expect(isCanonicalUint64(n.toString())).toBe(false);
        expect(() => formatUint64(n)).toThrow(CodecError);
      }),
      RUNS,
    );
  });
  it('compares like bigint comparison', () => {
    fc.assert(
      fc.property(uint64Arb, uint64Arb, fc.boolean(), (a, b, asText) => {
        const expected = a < b ? -1 : a > b ? 1 : 0;
        expect(asText ? compareUint64(a.toString(), b.toString()) : compareUint64(a, b)).toBe(expected);
      }),
      RUNS,
    );
  });
});

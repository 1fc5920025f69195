import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LEASE_SECRET_BYTES, base64urlLength, decodeBase64url, encodeBase64url, isCanonicalBase64url } from './base64url.ts';
import { CodecError } from './errors.ts';

const RUNS = { numRuns: 1000 };
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const bytesArb = fc.uint8Array({ minLength: 0, maxLength: 96 });

function expectRejected(s: string, byteLength?: number): void {
  expect(isCanonicalBase64url(s, byteLength), s).toBe(false);
  expect(() => decodeBase64url(s, byteLength), s).toThrow(CodecError);
}

describe('base64url: examples', () => {
  it('encodes the seed lease secret placeholder: 32 zero bytes are 43 "A"', () => {
    expect(LEASE_SECRET_BYTES).toBe(32);
    const text = encodeBase64url(new Uint8Array(32));
    expect(text).toBe('A'.repeat(43));
    expect(isCanonicalBase64url(text, LEASE_SECRET_BYTES)).toBe(true);
    expect(decodeBase64url(text, LEASE_SECRET_BYTES)).toStrictEqual(new Uint8Array(32));
  });
  it('matches RFC 4648 test vectors (unpadded)', () => {
    const vectors: Array<[string, string]> = [
      ['', ''],
      ['f', 'Zg'],
      ['fo', 'Zm8'],
      ['foo', 'Zm9v'],
      ['foob', 'Zm9vYg'],
      ['fooba', 'Zm9vYmE'],
      ['foobar', 'Zm9vYmFy'],
    ];
    for (const [plain, encoded] of vectors) {
      expect(encodeBase64url(new TextEncoder().encode(plain))).toBe(encoded);
      expect(new TextDecoder().decode(decodeBase64url(encoded))).toBe(plain);
    }
  });
  it('uses "-" and "_" for 62 and 63', () => {
    expect(encodeBase64url(new Uint8Array([0xfb, 0xff]))).toBe('-_8');
  });
  it('rejects padding', () => {
    expectRejected('Zg==');
    expectRejected('Zm8=');
    expectRejected(`${'A'.repeat(43)}=`, 32);
  });
  it('rejects the standard alphabet characters "+" and "/"', () => {
    expectRejected('+_8');
    expectRejected('-/8');
  });
  it('rejects whitespace and any other character', () => {
    expectRejected(' Zm9v');
    expectRejected('Zm9v\n');
    expectRejected('Zm 9v');
    expectRejected('Zm9.');
    expectRejected('Zm9é');
    expectRejected('Zm9\u0000');
  });
  it('rejects a length of 1 mod 4', () => {
    expectRejected('A');
    expectRejected('AAAAA');
  });
  it('rejects non-zero unused trailing bits', () => {
    expectRejected('Zh'); // "f" is Zg
    expectRejected('Zm9'); // "fo" is Zm8
    expectRejected(`${'A'.repeat(42)}B`, 32);
  });
  it('rejects a length that does not match the expected byte count', () => {
    expectRejected('A'.repeat(42), 32);
    expectRejected('A'.repeat(44), 32);
    expectRejected('Zm9v', 2);
  });
  it('rejects non-strings and bad byte counts', () => {
    expect(isCanonicalBase64url(null)).toBe(false);
    expect(isCanonicalBase64url(42)).toBe(false);
    expect(() => isCanonicalBase64url('AA', -1)).toThrow(RangeError);
    expect(() => decodeBase64url('AA', 1.5)).toThrow(RangeError);
  });
  it('computes encoded lengths', () => {
    expect([0, 1, 2, 3, 4, 32].map(base64urlLength)).toStrictEqual([0, 2, 3, 4, 6, 43]);
  });
});

describe('base64url: properties', () => {
  it('round-trips random byte strings of 0 to 96 bytes', () => {
    fc.assert(
      fc.property(bytesArb, (bytes) => {
        const text = encodeBase64url(bytes);
        expect(text).toBe(Buffer.from(bytes).toString('base64url'));
        expect(text.length).toBe(base64urlLength(bytes.length));
        expect(isCanonicalBase64url(text)).toBe(true);
        expect(isCanonicalBase64url(text, bytes.length)).toBe(true);
        expect(decodeBase64url(text, bytes.length)).toStrictEqual(new Uint8Array(bytes));
      }),
      RUNS,
    );
  });
  it('rejects added padding', () => {
    fc.assert(
      fc.property(bytesArb, fc.integer({ min: 1, max: 3 }), (bytes, pads) => {
        const text = encodeBase64url(bytes);
        const standardPadding = (4 - (text.length % 4)) % 4;
        expectRejected(text + '='.repeat(standardPadding === 0 ? pads : standardPadding));
        expectRejected(text + '='.repeat(pads), bytes.length);
      }),
      RUNS,
    );
  });
  it('rejects "+" or "/" in place of any character', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 1, maxLength: 96 }), fc.nat(), fc.constantFrom('+', '/'), (bytes, at, bad) => {
        const text = encodeBase64url(bytes);
        const i = at % text.length;
        expectRejected(text.slice(0, i) + bad + text.slice(i + 1));
        // The standard alphabet's spelling of the same bytes is refused too.
        const standard = Buffer.from(bytes).toString('base64').replace(/=+$/, '');
        if (standard !== text) expectRejected(standard, bytes.length);
      }),
      RUNS,
    );
  });
  it('rejects flipped unused trailing bits', () => {
    fc.assert(
      fc.property(
        bytesArb.filter((b) => b.length % 3 !== 0),
        fc.integer({ min: 1, max: 15 }),
        (bytes, flip) => {
          const text = encodeBase64url(bytes);
          const unusedBits = bytes.length % 3 === 1 ? 4 : 2;
          const mask = flip & ((1 << unusedBits) - 1);
          fc.pre(mask !== 0);
          const last = ALPHABET.indexOf(text[text.length - 1]!);
          const flipped = text.slice(0, -1) + ALPHABET[last ^ mask];
          expectRejected(flipped);
          expectRejected(flipped, bytes.length);
        },
      ),
      RUNS,
    );
  });
  it('rejects an encoding whose length does not match the byte count', () => {
    fc.assert(
      fc.property(
        bytesArb,
        fc.integer({ min: -3, max: 3 }).filter((d) => d !== 0),
        (bytes, delta) => {
          const text = encodeBase64url(bytes);
          fc.pre(bytes.length + delta >= 0);
          expectRejected(text, bytes.length + delta);
          // Longer or shorter texts for the right byte count are refused as well.
          const longer = text + 'A'.repeat(Math.abs(delta));
          expectRejected(longer, bytes.length);
          if (text.length > 0) expectRejected(text.slice(0, -1), bytes.length);
        },
      ),
      RUNS,
    );
  });
  it('rejects inserted whitespace and any character outside the alphabet', () => {
    fc.assert(
      fc.property(
        bytesArb,
        fc.nat(),
        fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }).filter((c) => !ALPHABET.includes(c)),
        (bytes, at, bad) => {
          const text = encodeBase64url(bytes);
          const i = at % (text.length + 1);
          expectRejected(text.slice(0, i) + bad + text.slice(i));
        },
      ),
      RUNS,
    );
  });
  it('accepts exactly the canonical encodings of the byte count', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[A-Za-z0-9_-]{0,12}$/), (text) => {
        const canonical = text.length % 4 !== 1 && encodeBase64url(Buffer.from(text, 'base64url')) === text;
        expect(isCanonicalBase64url(text)).toBe(canonical);
      }),
      RUNS,
    );
  });
});

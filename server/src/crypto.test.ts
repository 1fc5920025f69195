import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sha256Hex } from './crypto.ts';

describe('sha256Hex', () => {
  it('MUST give the SHA-256 of the UTF-8 text in lower-case hex (FIPS 180-2 test vector)', () => {
    expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });

  it('MUST equal a Hash object over the UTF-8 bytes for any text (property)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 300 }), (text) => {
        expect(sha256Hex(text)).toBe(createHash('sha256').update(Buffer.from(text, 'utf8')).digest('hex'));
      }),
    );
  });
});

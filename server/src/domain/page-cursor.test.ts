import fc from 'fast-check';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { PageCursors } from './page-cursor.ts';

// Records every constant-time comparison (the lengths of both sides) and still compares for real.
const compared = vi.hoisted((): Array<[number, number]> => []);
vi.mock('node:crypto', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:crypto')>();
  return {
    ...actual,
    timingSafeEqual: (a: NodeJS.ArrayBufferView, b: NodeJS.ArrayBufferView) => {
      compared.push([a.byteLength, b.byteLength]);
      return actual.timingSafeEqual(a, b);
    },
  };
});

describe('page cursors', () => {
  const cursors = new PageCursors('secret');
  const position = { createdAt: 1_700_000_000_000, id: 'a'.repeat(32) };

  beforeEach(() => {
    compared.length = 0;
  });

  it('round-trips within its scope and is refused in another', () => {
    const c = cursors.encode('scope-a', position);
    expect(cursors.decode('scope-a', c)).toEqual(position);
    expect(cursors.decode('scope-b', c)).toBeNull();
    expect(new PageCursors('other-secret').decode('scope-a', c)).toBeNull();
  });

  it('refuses every single-character change (property)', () => {
    const c = cursors.encode('s', position);
    fc.assert(
      fc.property(fc.nat({ max: c.length - 1 }), fc.constantFrom(...'ABCabc012-_.'), (at, ch) => {
        fc.pre(c[at] !== ch);
        const tampered = c.slice(0, at) + ch + c.slice(at + 1);
        expect(cursors.decode('s', tampered)).toBeNull();
      }),
      { numRuns: 1000 },
    );
  });

  it('compares a signature of the right length in constant time, on buffers of equal length', () => {
    const c = cursors.encode('s', position);
    const [payload, signature] = c.split('.') as [string, string];
    const forged = `${payload}.${signature.startsWith('A') ? 'B' : 'A'}${signature.slice(1)}`;
    expect(cursors.decode('s', forged)).toBeNull();
    expect(cursors.decode('s', c)).toEqual(position);
    expect(compared).toEqual([
      [43, 43],
      [43, 43],
    ]);
  });

  it('refuses malformed and short signatures without throwing (property)', () => {
    const [payload, signature] = cursors.encode('s', position).split('.') as [string, string];
    const fixed = ['', 'A', signature.slice(0, -1), `${signature}A`, `${signature}.${signature}`, 'é'.repeat(22), '\u0000'.repeat(43)];
    for (const bad of fixed) expect(cursors.decode('s', `${payload}.${bad}`)).toBeNull();
    fc.assert(
      fc.property(fc.string({ maxLength: 100, unit: 'binary' }), (bad) => {
        fc.pre(bad !== signature);
        expect(cursors.decode('s', `${payload}.${bad}`)).toBeNull();
      }),
      { numRuns: 500 },
    );
    for (const [a, b] of compared) expect(a).toBe(b);
  });
});

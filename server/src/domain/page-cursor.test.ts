import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PageCursors } from './page-cursor.ts';

describe('page cursors', () => {
  const cursors = new PageCursors('secret');
  const position = { createdAt: 1_700_000_000_000, id: 'a'.repeat(32) };

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
});

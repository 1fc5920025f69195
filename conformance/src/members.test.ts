import { describe, expect, it } from 'vitest';
import { memberAt } from './members.ts';

describe('memberAt', () => {
  it('follows member names into nested objects', () => {
    expect(memberAt({ error: { code: 'NOT_FOUND' } }, 'error', 'code')).toBe('NOT_FOUND');
    expect(memberAt({ data: null }, 'data')).toBeNull();
    expect(memberAt('text')).toBe('text');
  });

  it('is undefined where a step is missing, inherited, or not an object', () => {
    expect(memberAt({ error: 'NOT_FOUND' }, 'error', 'code')).toBeUndefined();
    expect(memberAt([{ code: 'x' }], '0', 'code')).toBeUndefined();
    expect(memberAt({}, 'toString')).toBeUndefined();
    expect(memberAt(undefined, 'data')).toBeUndefined();
    expect(memberAt(null, 'data')).toBeUndefined();
  });
});

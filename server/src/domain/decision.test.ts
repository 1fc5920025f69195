import { OrbitError } from '@orbit/spec/errors';
import { describe, expect, it } from 'vitest';
import { checkRevision, isRefused, orThrow, refuse } from './decision.ts';

describe('decisions', () => {
  it('isRefused tells a refusal from any accepted value, bigints and nulls included', () => {
    expect(isRefused(refuse('NOT_FOUND', 'x'))).toBe(true);
    for (const accepted of [0n, 5n, null, 0, 'conflict', { id: 'a' }]) expect(isRefused(accepted)).toBe(false);
  });

  it('orThrow returns the accepted value and throws a refusal as an OrbitError with its code and message', () => {
    expect(orThrow(7n)).toBe(7n);
    let thrown: unknown;
    try {
      orThrow(refuse('SUBSCRIPTION_LIMIT', 'full'));
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(OrbitError);
    expect(thrown).toMatchObject({ code: 'SUBSCRIPTION_LIMIT', message: 'full' });
  });

  it('checkRevision accepts only the current revision', () => {
    expect(checkRevision('delivery', 3n, '3')).toBeNull();
    expect(checkRevision('delivery', 3n, '2')).toEqual({ conflict: { code: 'STATE_CONFLICT', message: 'delivery revision is 3, not 2' } });
  });
});

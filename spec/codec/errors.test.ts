import { describe, expect, it } from 'vitest';
import { CodecError, StrictJsonError } from './errors.ts';

describe('errors', () => {
  it('CodecError is an Error with its own name', () => {
    const error = new CodecError('bad input');
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe('CodecError');
    expect(error.message).toBe('bad input');
  });
  it('StrictJsonError is a CodecError carrying reason, offset, path and key', () => {
    const error = new StrictJsonError('duplicate_key', 'Duplicate key "a"', 7, '/body', 'a');
    expect(error).toBeInstanceOf(CodecError);
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe('StrictJsonError');
    expect(error).toMatchObject({ reason: 'duplicate_key', offset: 7, path: '/body', key: 'a' });
    expect(new StrictJsonError('syntax', 'x', 0, '').key).toBeUndefined();
  });
  it('keeps a cause', () => {
    const cause = new Error('inner');
    expect(new CodecError('outer', { cause }).cause).toBe(cause);
  });
});

/**
 * How the end of an event connection reads as an error (spec/README.md, Close codes): the contract
 * code wins when the server named one; otherwise the close code decides whether to reconnect. And
 * what a transport failure's message says of its cause.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES, OrbitError } from '@orbit/spec/errors';
import { causeText, closedError, ConnectionClosedError, OrbitTransportError, RETRYABLE_CLOSE_CODES, reconnectsAfter } from './errors.ts';

describe('closedError', () => {
  it('MUST read each close code of the table', () => {
    const cases: Array<[number, string, string, boolean]> = [
      [1001, 'server shutting down', 'UNAVAILABLE', true],
      [1006, '', 'UNAVAILABLE', true],
      [1011, '', 'UNAVAILABLE', true],
      [1012, '', 'UNAVAILABLE', true],
      [1013, '', 'UNAVAILABLE', true],
      [1013, 'UNAVAILABLE', 'UNAVAILABLE', true],
      [1008, 'UNAUTHENTICATED', 'UNAUTHENTICATED', false],
      [1008, 'PERMISSION_DENIED', 'PERMISSION_DENIED', false],
      [1008, 'NOT_FOUND', 'NOT_FOUND', false],
      [1008, 'EVENT_HISTORY_EXPIRED', 'EVENT_HISTORY_EXPIRED', false],
      [1008, 'no events.hello in time', 'INVALID_ARGUMENT', false],
      [1008, 'binary frames are not allowed', 'INVALID_ARGUMENT', false],
      [1009, '', 'INVALID_ARGUMENT', false],
      [1002, '', 'INVALID_ARGUMENT', false],
      [1000, '', 'UNAVAILABLE', false],
      [1005, '', 'UNAVAILABLE', false],
      [4000, 'custom', 'UNAVAILABLE', false],
      // A server that still closes after UNAVAILABLE with 1008: the code it names decides.
      [1008, 'UNAVAILABLE', 'UNAVAILABLE', true],
    ];
    for (const [closeCode, reason, code, retryable] of cases) {
      const error = closedError(closeCode, reason, null);
      expect(error, `${closeCode} ${reason}`).toBeInstanceOf(ConnectionClosedError);
      expect([error.code, error.retryable, error.closeCode, error.closeReason], `${closeCode} ${reason}`).toEqual([
        code,
        retryable,
        closeCode,
        reason,
      ]);
      expect(reconnectsAfter(error), `${closeCode} ${reason}`).toBe(retryable);
    }
  });

  it('MUST let the error frame that preceded the close decide, whatever the close code', () => {
    const unavailable = closedError(1008, 'UNAVAILABLE', new OrbitError('UNAVAILABLE', 'database down', { status: null }));
    expect([unavailable.code, unavailable.message, unavailable.retryable]).toEqual(['UNAVAILABLE', 'database down', true]);
    const gone = closedError(1013, 'NOT_FOUND', new OrbitError('NOT_FOUND', 'retired', { status: null }));
    expect([gone.code, gone.retryable]).toEqual(['NOT_FOUND', false]);
  });

  it('MUST retry exactly the retryable close codes when no contract code is named (property)', () => {
    const notACode = fc.string({ maxLength: 40 }).filter((s) => !(ERROR_CODES as readonly string[]).includes(s));
    fc.assert(
      fc.property(fc.integer({ min: 1000, max: 4999 }), notACode, (closeCode, reason) => {
        expect(closedError(closeCode, reason, null).retryable).toBe(RETRYABLE_CLOSE_CODES.has(closeCode));
      }),
      { numRuns: 2000 },
    );
    expect([...RETRYABLE_CLOSE_CODES].sort()).toEqual([1001, 1006, 1011, 1012, 1013]);
  });

  it('MUST reconnect after transport failures and stop after the fatal codes', () => {
    expect(reconnectsAfter(new OrbitTransportError('network', 'reset'))).toBe(true);
    expect(reconnectsAfter(new OrbitTransportError('timeout', 'no answer'))).toBe(true);
    expect(reconnectsAfter(new OrbitTransportError('bad_response', 'frame broke the schema'))).toBe(true);
    for (const code of ['EVENT_HISTORY_EXPIRED', 'PERMISSION_DENIED', 'NOT_FOUND', 'UNAUTHENTICATED'] as const)
      expect(reconnectsAfter(new OrbitError(code, 'x', { status: null }))).toBe(false);
  });
});

describe('causeText', () => {
  it('MUST find the reason inside the cause chain, and join the failures of an AggregateError', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:8080'), { code: 'ECONNREFUSED' });
    expect(causeText(new TypeError('fetch failed', { cause: refused }))).toBe('connect ECONNREFUSED 127.0.0.1:8080');
    // Several addresses tried (localhost as ::1 and 127.0.0.1): an empty message, one failure each.
    const both = new AggregateError([new Error('connect ECONNREFUSED ::1:8080'), new Error('connect ECONNREFUSED 127.0.0.1:8080')], '');
    expect(causeText(new TypeError('fetch failed', { cause: both }))).toBe(
      'connect ECONNREFUSED ::1:8080; connect ECONNREFUSED 127.0.0.1:8080',
    );
    expect(causeText(new TypeError('fetch failed'))).toBe('fetch failed');
    expect(causeText('a string')).toBe('a string');
  });
});

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type AccessState, decideConsumeAccess, type SessionToken, tokenValid } from './access.ts';

const digest = fc.constantFrom('current', 'previous', 'other');

const credential = fc.record({
  revoked: fc.boolean(),
  permissions: fc.subarray(['events:consume', 'events:read', 'events:manage']).map((p) => new Set(p)),
  tokenDigest: fc.constant('current'),
  previousTokenDigest: fc.option(fc.constant('previous'), { nil: null }),
  previousExpiresAt: fc.option(fc.integer({ min: 0, max: 2000 }), { nil: null }),
});

const state = fc.record({
  credential: fc.option(credential, { nil: null }),
  subscription: fc.option(fc.record({ retired: fc.boolean(), enabled: fc.boolean() }), { nil: null }),
  queueInScope: fc.boolean(),
}) as fc.Arbitrary<AccessState>;

const token = fc.option(fc.record({ digest, now: fc.integer({ min: 0, max: 2000 }) }), { nil: undefined }) as fc.Arbitrary<
  SessionToken | undefined
>;

describe('decideConsumeAccess', () => {
  it('allows exactly a live credential and token with events:consume, its queue in scope, on a live subscription (property)', () => {
    fc.assert(
      fc.property(state, token, (s, t) => {
        const allowed =
          s.subscription !== null &&
          s.credential !== null &&
          !s.credential.revoked &&
          (t === undefined || tokenValid(s.credential, t)) &&
          s.credential.permissions.has('events:consume') &&
          s.queueInScope &&
          !s.subscription.retired;
        expect(decideConsumeAccess(s, t).ok).toBe(allowed);
      }),
      { numRuns: 1000 },
    );
  });

  it('names the first rule that fails: subscription, credential and token, permission, then scope (property)', () => {
    fc.assert(
      fc.property(state, token, (s, t) => {
        const verdict = decideConsumeAccess(s, t);
        if (verdict.ok) return;
        if (s.subscription === null) expect(verdict.code).toBe('NOT_FOUND');
        else if (s.credential === null || s.credential.revoked || (t !== undefined && !tokenValid(s.credential, t))) {
          expect(verdict.code).toBe('UNAUTHENTICATED');
        } else if (!s.credential.permissions.has('events:consume')) expect(verdict.code).toBe('PERMISSION_DENIED');
        else expect(verdict.code).toBe('NOT_FOUND');
      }),
      { numRuns: 1000 },
    );
  });

  it('accepts the current token always, the replaced one only before its grace period ends (property)', () => {
    fc.assert(
      fc.property(credential, digest, fc.integer({ min: 0, max: 2000 }), (c, d, now) => {
        const expected =
          d === 'current' ||
          (d === 'previous' && c.previousTokenDigest === 'previous' && c.previousExpiresAt !== null && c.previousExpiresAt > now);
        expect(tokenValid(c, { digest: d, now })).toBe(expected);
      }),
      { numRuns: 1000 },
    );
  });

  it('says why: a revoked credential, a rotated-out token, a lost permission, a retired subscription', () => {
    const live = {
      credential: {
        revoked: false,
        permissions: new Set(['events:consume']),
        tokenDigest: 'a',
        previousTokenDigest: 'b',
        previousExpiresAt: 10,
      },
      subscription: { retired: false, enabled: true },
      queueInScope: true,
    };
    expect(decideConsumeAccess(live)).toEqual({ ok: true });
    expect(decideConsumeAccess(live, { digest: 'b', now: 5 })).toEqual({ ok: true });
    expect(decideConsumeAccess(live, { digest: 'b', now: 10 })).toMatchObject({
      code: 'UNAUTHENTICATED',
      message: expect.stringContaining('rotation'),
    });
    expect(decideConsumeAccess({ ...live, credential: { ...live.credential, revoked: true } })).toMatchObject({
      message: 'the credential was revoked',
    });
    expect(decideConsumeAccess({ ...live, credential: { ...live.credential, permissions: new Set() } })).toMatchObject({
      code: 'PERMISSION_DENIED',
    });
    expect(decideConsumeAccess({ ...live, subscription: { retired: true, enabled: false } })).toMatchObject({
      message: 'the subscription was retired',
    });
  });
});

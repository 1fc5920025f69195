import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type AccessState, decideConsumeAccess } from './access.ts';

const state = fc.record({
  credential: fc.option(
    fc.record({
      revoked: fc.boolean(),
      permissions: fc.subarray(['events:consume', 'events:read', 'events:manage']).map((p) => new Set(p)),
    }),
    {
      nil: null,
    },
  ),
  subscription: fc.option(fc.record({ retired: fc.boolean(), enabled: fc.boolean() }), { nil: null }),
  queueInScope: fc.boolean(),
}) as fc.Arbitrary<AccessState>;

describe('decideConsumeAccess', () => {
  it('allows exactly a live credential with events:consume, its queue in scope, on a live subscription (property)', () => {
    fc.assert(
      fc.property(state, (s) => {
        const allowed =
          s.credential !== null &&
          !s.credential.revoked &&
          s.credential.permissions.has('events:consume') &&
          s.queueInScope &&
          s.subscription !== null &&
          !s.subscription.retired;
        expect(decideConsumeAccess(s).ok).toBe(allowed);
      }),
      { numRuns: 1000 },
    );
  });

  it('names the first rule that fails: subscription, credential, permission, then scope (property)', () => {
    fc.assert(
      fc.property(state, (s) => {
        const verdict = decideConsumeAccess(s);
        if (verdict.ok) return;
        if (s.subscription === null) expect(verdict.code).toBe('NOT_FOUND');
        else if (s.credential === null || s.credential.revoked) expect(verdict.code).toBe('UNAUTHENTICATED');
        else if (!s.credential.permissions.has('events:consume')) expect(verdict.code).toBe('PERMISSION_DENIED');
        else expect(verdict.code).toBe('NOT_FOUND');
      }),
      { numRuns: 1000 },
    );
  });

  it('says why: a revoked credential, a lost permission, a retired subscription', () => {
    const live = {
      credential: { revoked: false, permissions: new Set(['events:consume']) },
      subscription: { retired: false, enabled: true },
      queueInScope: true,
    };
    expect(decideConsumeAccess(live)).toEqual({ ok: true });
    expect(decideConsumeAccess({ ...live, credential: { ...live.credential, revoked: true } })).toMatchObject({
      message: 'the credential was revoked',
    });
    expect(decideConsumeAccess({ ...live, credential: { revoked: false, permissions: new Set() } })).toMatchObject({
      code: 'PERMISSION_DENIED',
    });
    expect(decideConsumeAccess({ ...live, subscription: { retired: true, enabled: false } })).toMatchObject({
      message: 'the subscription was retired',
    });
  });
});

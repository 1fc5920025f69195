/**
 * The pure half of `ensureSubscription`: which settings of an existing subscription differ from a
 * create request (after the contract's defaults and type order), and the default key. Property
 * tests with fast-check; client/test/ensure.test.ts runs the calls against a real server.
 */
import { ENUM_VALUES, type CreateSubscriptionRequest, type ResultType } from '@orbit/generated';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ensureKey, requestedSettings, subscriptionDifferences } from './ensure.ts';
import type { Subscription } from './wire.ts';

const ID = 'a'.repeat(32);

const request: fc.Arbitrary<CreateSubscriptionRequest> = fc.record(
  {
    name: fc.stringMatching(/^[a-z0-9][a-z0-9._-]{0,20}$/),
    queue_id: fc.constant(ID),
    types: fc.subarray([...ENUM_VALUES.ResultType] as ResultType[]).chain((t) => fc.shuffledSubarray(t, { minLength: t.length })),
    max_pending: fc.integer({ min: 0, max: 1000 }),
    max_attempts: fc.integer({ min: 0, max: 100 }),
    from_sequence: fc.option(fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }).map(String)),
  },
  { requiredKeys: ['name', 'queue_id'] },
);

/** The subscription the server makes from `body` (what GET would show). */
function made(body: CreateSubscriptionRequest): Subscription {
  return {
    id: ID,
    queue_id: body.queue_id,
    credential_id: ID,
    name: body.name,
    revision: '1',
    enabled: true,
    cursor_sequence: '0',
    pending_count: 0,
    created_at: '2026-01-01T00:00:00.000Z',
    updated_at: '2026-01-01T00:00:00.000Z',
    ...requestedSettings(body),
  };
}

describe('subscriptionDifferences', () => {
  it('finds none between a request and what it made, whatever the type order, defaults or from_sequence', () => {
    fc.assert(
      fc.property(request, (body) => {
        expect(subscriptionDifferences(made(body), body)).toEqual([]);
      }),
    );
  });

  it('applies the contract defaults: omitted, 0 and the default value ask for the same', () => {
    const base = { name: 'n', queue_id: ID };
    const existing = made({ ...base, types: [...ENUM_VALUES.ResultType], max_pending: 100, max_attempts: 20 });
    for (const body of [base, { ...base, types: [], max_pending: 0, max_attempts: 0 }])
      expect(subscriptionDifferences(existing, body)).toEqual([]);
  });

  it('names each setting that differs, with both values, and only those', () => {
    fc.assert(
      fc.property(request, request, (a, b) => {
        const before = requestedSettings(a);
        const after = requestedSettings(b);
        const fields = subscriptionDifferences(made(a), { ...b, name: a.name }).map((d) => d.field);
        expect(fields).toEqual(
          (['types', 'max_pending', 'max_attempts'] as const).filter((f) => JSON.stringify(before[f]) !== JSON.stringify(after[f])),
        );
      }),
    );
    expect(
      subscriptionDifferences(made({ name: 'n', queue_id: ID }), { name: 'n', queue_id: ID, types: ['task.failed'], max_pending: 5 }),
    ).toEqual([
      { field: 'types', existing: ['task.cancelled', 'task.failed', 'task.needs_review', 'task.succeeded'], requested: ['task.failed'] },
      { field: 'max_pending', existing: 100, requested: 5 },
    ]);
  });
});

describe('ensureKey', () => {
  it('is the same for the same request in any key order, a valid Idempotency-Key, and differs for another request', () => {
    fc.assert(
      fc.property(request, request, (a, b) => {
        const reversed = Object.fromEntries(Object.entries(a).reverse()) as CreateSubscriptionRequest;
        expect(ensureKey(reversed)).toBe(ensureKey(a));
        expect(ensureKey(a)).toMatch(/^ensure-[0-9a-f]{64}$/);
        if (JSON.stringify(a, Object.keys(a).sort()) !== JSON.stringify(b, Object.keys(b).sort()))
          expect(ensureKey(a)).not.toBe(ensureKey(b));
      }),
    );
  });
});

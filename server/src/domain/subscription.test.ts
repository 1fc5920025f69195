import type { CreateSubscriptionRequest } from '@orbit/generated';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isRefused } from './decision.ts';
import {
  decideConfigure,
  decideCreate,
  decideRetire,
  RESULT_TYPES,
  startCursor,
  SUBSCRIPTION_LIMIT,
  type CreateState,
  type SubscriptionRecord,
} from './subscription.ts';

const UINT64_MAX = 2n ** 64n - 1n;

/** A log position: boundary ≤ head, as the store keeps them; small, so cursors often meet the edges. */
const position = fc
  .tuple(fc.bigInt({ min: 0n, max: 20n }), fc.bigInt({ min: 0n, max: 20n }))
  .map(([a, b]) => (a <= b ? { boundary: a, head: b } : { boundary: b, head: a }));

/** Every kind of `from_sequence` a validated request can carry. */
const fromSequence = fc.oneof(
  fc.constant(undefined),
  fc.constant(null),
  fc.constant('0'),
  fc.bigInt({ min: 1n, max: 25n }).map(String),
  fc.constant(UINT64_MAX.toString()),
);

const record: fc.Arbitrary<SubscriptionRecord> = fc.record({
  id: fc.constant('a'.repeat(32)),
  namespaceId: fc.constant('n'.repeat(32)),
  applicationId: fc.constant('p'.repeat(32)),
  credentialId: fc.constant('c'.repeat(32)),
  queueId: fc.constant('q'.repeat(32)),
  name: fc.constantFrom('orders', 'billing.v2'),
  revision: fc.bigInt({ min: 1n, max: 50n }),
  enabled: fc.boolean(),
  types: fc.subarray([...RESULT_TYPES], { minLength: 1 }),
  cursorSequence: fc.bigInt({ min: 0n, max: 25n }),
  pendingCount: fc.integer({ min: 0, max: 1000 }),
  maxPending: fc.integer({ min: 1, max: 1000 }),
  maxAttempts: fc.integer({ min: 1, max: 100 }),
  createdAt: fc.integer({ min: 0, max: 1e12 }),
  updatedAt: fc.integer({ min: 0, max: 1e12 }),
  retiredAt: fc.option(fc.integer({ min: 0, max: 1e12 }), { nil: null }),
  retiredSequence: fc.constant(null),
});

/** The current revision half of the time, another one otherwise. */
function expectedRevision(current: bigint): fc.Arbitrary<string> {
  return fc.oneof(fc.constant(current), fc.bigInt({ min: 0n, max: UINT64_MAX })).map(String);
}

const owner = { namespaceId: 'n'.repeat(32), applicationId: 'p'.repeat(32), credentialId: 'c'.repeat(32) };

function createState(overrides: Partial<CreateState> = {}): CreateState {
  return { id: 'a'.repeat(32), owner, activeCount: 0, nameTaken: false, head: 10n, boundary: 0n, now: 5000, ...overrides };
}

const createCommand: CreateSubscriptionRequest = { name: 'orders', queue_id: 'q'.repeat(32) };

describe('startCursor', () => {
  it('omitted or null is the head, "0" the boundary, any other value exact within [boundary, head] (property)', () => {
    fc.assert(
      fc.property(position, fromSequence, (pos, from) => {
        const cursor = startCursor(from, pos);
        const value = from === undefined || from === null ? pos.head : from === '0' ? pos.boundary : BigInt(from);
        if (value > pos.head) expect(cursor).toMatchObject({ conflict: { code: 'INVALID_ARGUMENT' } });
        else if (value < pos.boundary) expect(cursor).toMatchObject({ conflict: { code: 'EVENT_HISTORY_EXPIRED' } });
        else expect(cursor).toBe(value);
      }),
      { numRuns: 2000 },
    );
  });

  it('"0" after a prune starts at the boundary, not below it', () => {
    expect(startCursor('0', { head: 20n, boundary: 7n })).toBe(7n);
    expect(startCursor('6', { head: 20n, boundary: 7n })).toEqual({
      conflict: { code: 'EVENT_HISTORY_EXPIRED', message: 'from_sequence 6 is below the retention boundary 7' },
    });
    expect(startCursor('21', { head: 20n, boundary: 7n })).toEqual({
      conflict: { code: 'INVALID_ARGUMENT', message: 'from_sequence 21 is beyond the committed head 20' },
    });
  });
});

describe('decideCreate', () => {
  it('is accepted iff below the limit, the name is free and the start lies in the log; else the first rule that fails (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 100 }),
        fc.boolean(),
        position,
        fromSequence,
        fc.option(fc.subarray([...RESULT_TYPES]), { nil: undefined }),
        fc.constantFrom(undefined, 0, 1, 1000),
        fc.constantFrom(undefined, 0, 1, 100),
        (activeCount, nameTaken, pos, from, types, maxPending, maxAttempts) => {
          const command: CreateSubscriptionRequest = {
            ...createCommand,
            from_sequence: from,
            types,
            max_pending: maxPending,
            max_attempts: maxAttempts,
          };
          const decision = decideCreate(createState({ activeCount, nameTaken, ...pos }), command);
          const cursor = startCursor(from, pos);
          if (activeCount >= SUBSCRIPTION_LIMIT) expect(decision).toMatchObject({ conflict: { code: 'SUBSCRIPTION_LIMIT' } });
          else if (nameTaken) expect(decision).toMatchObject({ conflict: { code: 'STATE_CONFLICT' } });
          else if (isRefused(cursor)) expect(decision).toEqual(cursor);
          else
            expect(decision).toEqual({
              id: 'a'.repeat(32),
              ...owner,
              queueId: command.queue_id,
              name: 'orders',
              revision: 1n,
              enabled: true,
              types: RESULT_TYPES.filter((t) => !types || types.length === 0 || types.includes(t)),
              cursorSequence: cursor,
              pendingCount: 0,
              maxPending: maxPending === undefined || maxPending === 0 ? 100 : maxPending,
              maxAttempts: maxAttempts === undefined || maxAttempts === 0 ? 20 : maxAttempts,
              createdAt: 5000,
              updatedAt: 5000,
              retiredAt: null,
              retiredSequence: null,
            });
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('the 64th subscription is accepted, the 65th is SUBSCRIPTION_LIMIT', () => {
    expect(isRefused(decideCreate(createState({ activeCount: 63 }), createCommand))).toBe(false);
    expect(decideCreate(createState({ activeCount: 64 }), createCommand)).toEqual({
      conflict: { code: 'SUBSCRIPTION_LIMIT', message: 'the namespace already has 64 subscriptions that are not retired' },
    });
  });

  it('a name clash is STATE_CONFLICT and names the name', () => {
    expect(decideCreate(createState({ nameTaken: true }), createCommand)).toEqual({
      conflict: { code: 'STATE_CONFLICT', message: 'a subscription named "orders" already exists in this namespace' },
    });
  });
});

describe('decideConfigure', () => {
  it('is accepted iff not retired and the revision is current; then only enabled, revision and updatedAt change (property)', () => {
    fc.assert(
      fc.property(
        record.chain((r) => fc.tuple(fc.constant(r), expectedRevision(r.revision))),
        fc.boolean(),
        fc.integer({ min: 0, max: 1e12 }),
        ([current, expected], enabled, now) => {
          const before = structuredClone(current);
          const decision = decideConfigure(current, { expected_revision: expected, enabled, reason: 'r' }, now);
          expect(current).toEqual(before);
          const accepted = current.retiredAt === null && current.revision === BigInt(expected);
          expect(isRefused(decision)).toBe(!accepted);
          if (isRefused(decision)) expect(decision.conflict.code).toBe('STATE_CONFLICT');
          else expect(decision).toEqual({ ...current, enabled, revision: current.revision + 1n, updatedAt: now });
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('a stale revision names both revisions; a retired subscription is refused first', () => {
    const current = { ...fc.sample(record, 1)[0]!, revision: 3n, retiredAt: null };
    expect(decideConfigure(current, { expected_revision: '2', enabled: false, reason: 'r' }, 0)).toEqual({
      conflict: { code: 'STATE_CONFLICT', message: 'subscription revision is 3, not 2' },
    });
    expect(decideConfigure({ ...current, retiredAt: 1 }, { expected_revision: '2', enabled: false, reason: 'r' }, 0)).toEqual({
      conflict: { code: 'STATE_CONFLICT', message: 'the subscription is retired' },
    });
  });
});

describe('decideRetire', () => {
  it('is accepted iff not retired, at the current revision, nothing pending, and nothing unmaterialized unless the history expired (property)', () => {
    fc.assert(
      fc.property(
        record.chain((r) => fc.tuple(fc.constant(r), expectedRevision(r.revision))),
        fc.integer({ min: 0, max: 3 }),
        fc.boolean(),
        position,
        fc.integer({ min: 0, max: 1e12 }),
        ([current, expected], openDeliveries, hasUnmaterialized, pos, now) => {
          const before = structuredClone(current);
          const decision = decideRetire(
            { current, openDeliveries, hasUnmaterialized, ...pos, now },
            { expected_revision: expected, reason: 'r' },
          );
          expect(current).toEqual(before);
          const accepted =
            current.retiredAt === null &&
            current.revision === BigInt(expected) &&
            openDeliveries === 0 &&
            (!hasUnmaterialized || current.cursorSequence < pos.boundary);
          expect(isRefused(decision)).toBe(!accepted);
          if (isRefused(decision)) expect(decision.conflict.code).toBe('STATE_CONFLICT');
          else
            expect(decision).toEqual({
              ...current,
              enabled: false,
              revision: current.revision + 1n,
              updatedAt: now,
              retiredAt: now,
              retiredSequence: pos.head,
            });
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('says why it refuses', () => {
    const current = { ...fc.sample(record, 1)[0]!, revision: 1n, retiredAt: null, cursorSequence: 5n };
    const state = { current, openDeliveries: 0, hasUnmaterialized: false, head: 9n, boundary: 0n, now: 1 };
    const command = { expected_revision: '1', reason: 'r' };
    expect(decideRetire({ ...state, current: { ...current, retiredAt: 1 } }, command)).toMatchObject({
      conflict: { message: 'the subscription is already retired' },
    });
    expect(decideRetire({ ...state, openDeliveries: 2 }, command)).toMatchObject({
      conflict: { message: '2 deliveries are not acknowledged yet' },
    });
    expect(decideRetire({ ...state, hasUnmaterialized: true }, command)).toMatchObject({
      conflict: { message: 'matching results are not materialized yet; consume them first' },
    });
    // The cursor fell behind the boundary: what waits can never be materialized.
    expect(decideRetire({ ...state, hasUnmaterialized: true, boundary: 6n }, command)).toMatchObject({ retiredSequence: 9n });
  });
});

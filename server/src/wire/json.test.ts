import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { stringify } from '@orbit/spec/codec';
import type { ResultRecord } from '../store/records.ts';
import { eventJson, eventText, iso } from './json.ts';

const hex = fc.stringMatching(/^[0-9a-f]{32}$/);
/** JSON text as a publisher may send it: any value, spaced and with escapes as it was written. */
const jsonText = fc.jsonValue().map((v) => JSON.stringify(v, null, 1));

const record = fc.record({
  sequence: fc.bigInt({ min: 1n, max: 2n ** 64n - 1n }),
  id: hex,
  queueId: hex,
  type: fc.constantFrom('task.succeeded', 'task.failed', 'task.cancelled', 'task.needs_review', 'task.requeued'),
  taskId: hex,
  taskRevision: fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }).map(String),
  occurredAt: fc.integer({ min: 0, max: 4_102_444_800_000 }),
  details: fc.dictionary(fc.string(), fc.jsonValue()).map((d) => JSON.stringify(d, null, 2)),
  result: fc.option(jsonText, { nil: null }),
  effectUncertain: fc.boolean(),
  currentAttemptId: fc.option(hex, { nil: null }),
  traceparent: fc.option(
    fc.tuple(hex, fc.stringMatching(/^[0-9a-f]{16}$/)).map(([t, s]) => `00-${t}-${s}-01`),
    { nil: null },
  ),
  tracestate: fc.option(fc.stringMatching(/^[\x20-\x7E]{1,40}$/), { nil: null }),
}) as fc.Arbitrary<ResultRecord>;

describe('eventText', () => {
  it('writes what the generic serializer writes for eventJson, byte for byte (property)', () => {
    fc.assert(
      fc.property(record, (r) => {
        expect(eventText(r)).toBe(stringify(eventJson(r)));
      }),
    );
  });

  it('keeps the stored text of result and details, a 20-digit integer included', () => {
    const text = eventText({
      sequence: 7n,
      id: 'a'.repeat(32),
      queueId: 'b'.repeat(32),
      type: 'task.succeeded',
      taskId: 'c'.repeat(32),
      taskRevision: '1',
      occurredAt: 0,
      details: '{ "n" : 1.10 }',
      result: '{"bytes":12345678901234567890}',
      effectUncertain: false,
      currentAttemptId: null,
      traceparent: null,
      tracestate: null,
    });
    expect(text).toContain('"details":{ "n" : 1.10 }');
    expect(text).toContain('"result":{"bytes":12345678901234567890}');
  });
});

describe('iso', () => {
  it('renders any time as Date#toISOString does, whatever the cache holds (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 4_102_444_800_000 }), { maxLength: 50 }), (times) => {
        for (const ms of [...times, ...times]) expect(iso(ms)).toBe(new Date(ms).toISOString());
      }),
    );
  });
});

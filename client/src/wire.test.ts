/**
 * What the SDK accepts from the wire beyond the generated validators (spec/rules.md#s8-9): uint64
 * range, canonical lease secrets, raw event parts; and the uint64 helpers. Property tests with
 * fast-check.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { encodeBase64url, isRawJson } from '@orbit/spec/codec';
import { validateServerFrame } from '@orbit/generated';
import { backoffDelay, resolveBackoff } from './backoff.ts';
import { beyondSchema, rawPaths, readDocument } from './wire.ts';
import { fromBigInt, toBigInt } from './uint64.ts';
import { connectUrl } from './events.ts';
import deliverExample from '../../spec/examples/ws.deliver.json' with { type: 'json' };

const deliverText = JSON.stringify(deliverExample);

describe('wire checks', () => {
  it('MUST accept the seed’s event.deliver example and keep details and result raw', () => {
    const withResult = deliverText.replace('"effect_uncertain":false', '"effect_uncertain":false,"result":98765432109876543210987');
    const read = readDocument<any>(withResult, validateServerFrame, rawPaths('serverFrame'));
    expect(read.ok).toBe(true);
    if (!read.ok) return;
    expect(isRawJson(read.value.body.event.details)).toBe(true);
    expect(read.value.body.event.snapshot.result.text).toBe('98765432109876543210987');
  });

  it('MUST refuse a uint64 above 2^64-1 anywhere, and a lease secret with non-zero unused bits', () => {
    const tooBig = deliverText.replace('"lease_epoch":"1"', '"lease_epoch":"18446744073709551616"');
    expect(readDocument(tooBig, validateServerFrame, rawPaths('serverFrame'))).toMatchObject({ ok: false });
    const max = deliverText.replace('"lease_epoch":"1"', '"lease_epoch":"18446744073709551615"');
    expect(readDocument(max, validateServerFrame, rawPaths('serverFrame'))).toMatchObject({ ok: true });
    const badSecret = deliverText.replace(/"lease_secret":"[^"]+"/, `"lease_secret":"${'A'.repeat(42)}B"`);
    expect(readDocument(badSecret, validateServerFrame)).toMatchObject({ ok: false });
    const arrayDetails = deliverText.replace(/"details":\{[^}]*\}/, '"details":[1]');
    expect(readDocument(arrayDetails, validateServerFrame, rawPaths('serverFrame'))).toMatchObject({ ok: false });
    const duplicate = deliverText.replace('"type":"event.deliver"', '"type":"event.deliver","type":"event.deliver"');
    expect(readDocument(duplicate, validateServerFrame)).toMatchObject({ ok: false });
  });

  it('MUST accept exactly the canonical uint64 strings in counters (property)', () => {
    fc.assert(fc.property(fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }), (n) => beyondSchema({ revision: n.toString() }) === null));
    fc.assert(fc.property(fc.bigInt({ min: 1n << 64n, max: 1n << 66n }), (n) => beyondSchema({ sequence: n.toString() }) !== null));
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 32, maxLength: 32 }),
        (bytes) => beyondSchema({ lease_secret: encodeBase64url(bytes) }) === null,
      ),
    );
  });

  it('MUST round-trip uint64 through bigint and refuse non-canonical text', () => {
    fc.assert(fc.property(fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }), (n) => toBigInt(fromBigInt(n)) === n));
    for (const bad of ['+1', '01', '1.0', '-1', '', ' 1', '18446744073709551616']) expect(() => toBigInt(bad)).toThrow();
    expect(() => fromBigInt(-1n)).toThrow();
    expect(() => fromBigInt(1n << 64n)).toThrow();
  });

  it('MUST keep backoff delays within [base*(1-jitter), base] and under the cap (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 40 }),
        fc.double({ min: 0, max: 0.999, noNaN: true }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (attempt, r, jitter) => {
          const options = resolveBackoff(
            { random: () => r, jitter },
            { initialDelayMs: 100, maxDelayMs: 10_000, multiplier: 2, jitter: 0.5 },
          );
          const base = Math.min(10_000, 100 * 2 ** attempt);
          const delay = backoffDelay(attempt, options);
          return delay <= base && delay >= Math.floor(base * (1 - jitter)) - 1;
        },
      ),
    );
  });

  it('MUST build the connect URL from the base URL and never put credentials in it', () => {
    expect(connectUrl('http://127.0.0.1:8080')).toBe('ws://127.0.0.1:8080/v1/events/connect');
    expect(connectUrl('https://orbit.example/prefix/')).toBe('wss://orbit.example/prefix/v1/events/connect');
    expect(() => connectUrl('http://h/?access_token=x')).toThrow();
    expect(() => connectUrl('http://user:pw@h/')).toThrow();
  });
});

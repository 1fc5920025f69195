import type { DeliverFrame } from '@orbit/generated';
import { describe, expect, it } from 'vitest';
import { parseConfig } from './config.ts';
import { CaseContext, lastSent } from './context.ts';
import { CheckFailure, SkipSignal } from './errors.ts';
import type { Received } from './frames.ts';

const config = parseConfig({
  baseUrl: 'http://127.0.0.1:9',
  credentials: { full: 'token-full', publisher: 'token-pub' },
  queues: { primary: 'a'.repeat(32) },
});
const ctx = new CaseContext({ config, vars: {}, seed: 1, numRuns: 1, runTag: 'abc' }, 'ack.x');

function deliver(leaseMs: number): Received<DeliverFrame> {
  const created = Date.parse('2026-01-01T00:00:00.000Z');
  return {
    body: { delivery: { created_at: new Date(created).toISOString(), lease_until: new Date(created + leaseMs).toISOString() } },
    $at: Date.now(),
  } as unknown as Received<DeliverFrame>;
}

describe('CaseContext', () => {
  it('skips, never passes, a case that would have to wait for a lease longer than it can', () => {
    expect(() => ctx.requireLeaseWithin(deliver(1_000), 7_000)).not.toThrow();
    expect(() => ctx.requireLeaseWithin(deliver(30_000), 7_000)).toThrow(SkipSignal);
    expect(() => ctx.requireLeaseWithin(deliver(30_000), 7_000)).toThrow(/granted a lease of about 30000 ms .* this case can wait 7000 ms/);
  });

  it('fails a check with a CheckFailure of kind assert, or setup when the message says so', () => {
    expect(() => ctx.check(false, 'nope')).toThrow(new CheckFailure('nope'));
    expect(new CheckFailure('setup: publishing failed').kind).toBe('setup');
    expect(new CheckFailure('x').kind).toBe('assert');
  });

  it('makes names and Idempotency-Keys unique per run', () => {
    expect(ctx.key()).toMatch(/^cf-abc-[0-9a-f]{32}$/);
    expect(ctx.key()).not.toBe(ctx.key());
    expect(ctx.name()).toMatch(/^cf-abc-\d+$/);
  });

  it('shows the last thing a property run sent: an HTTP request or a frame', () => {
    expect(
      lastSent([
        { kind: 'http', at: 1, method: 'POST', target: '/v1/subscriptions', requestHeaders: {}, requestBody: '{"a":1}', durationMs: 1 },
        { kind: 'ws-frame', at: 2, conn: 1, direction: 'received', text: '{"type":"ack"}', binary: false },
      ]),
    ).toBe('POST /v1/subscriptions {"a":1}');
    expect(lastSent([{ kind: 'ws-frame', at: 2, conn: 1, direction: 'sent', text: '{"type":"event.ack"}', binary: false }])).toBe(
      'frame {"type":"event.ack"}',
    );
    expect(lastSent([])).toBe('(nothing was sent)');
  });
});

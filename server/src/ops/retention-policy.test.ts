import { describe, expect, it } from 'vitest';
import { planRetention } from './retention-policy.ts';

const base = { head: 10n, boundary: 0n, maxResults: 0, maxAgeMs: 0, now: 1_000_000, oldest: [], oldestTruncated: false };
const rows = (...ages: number[]) => ages.map((age, i) => ({ sequence: BigInt(i + 1), occurredAt: 1_000_000 - age }));

describe('planRetention', () => {
  it('does nothing when both limits are off', () => {
    expect(planRetention(base)).toEqual({ beforeSequence: null, more: false });
  });

  it('keeps the newest maxResults results', () => {
    expect(planRetention({ ...base, maxResults: 3 }).beforeSequence).toBe(8n); // boundary 7
    expect(planRetention({ ...base, maxResults: 10 }).beforeSequence).toBeNull();
    expect(planRetention({ ...base, maxResults: 3, boundary: 7n }).beforeSequence).toBeNull();
    expect(planRetention({ ...base, maxResults: 3, boundary: 9n }).beforeSequence).toBeNull(); // never moves back
  });

  it('prunes the leading run of results older than maxAgeMs, stopping at the first young one', () => {
    const plan = planRetention({ ...base, maxAgeMs: 100, oldest: rows(500, 400, 50, 300) });
    expect(plan).toEqual({ beforeSequence: 3n, more: false });
    expect(planRetention({ ...base, maxAgeMs: 100, oldest: rows(50, 500) }).beforeSequence).toBeNull();
    expect(planRetention({ ...base, maxAgeMs: 100, oldest: rows(100) }).beforeSequence).toBeNull(); // exactly max age stays
  });

  it('asks for another round when a full page was all old', () => {
    expect(planRetention({ ...base, maxAgeMs: 100, oldest: rows(500, 400), oldestTruncated: true })).toEqual({
      beforeSequence: 3n,
      more: true,
    });
  });

  it('takes the further of the two limits and never passes the head', () => {
    expect(planRetention({ ...base, maxResults: 8, maxAgeMs: 100, oldest: rows(500, 400, 300, 200, 50) }).beforeSequence).toBe(5n);
    expect(planRetention({ ...base, head: 2n, maxAgeMs: 100, oldest: rows(500, 400, 300) }).beforeSequence).toBe(3n);
  });
});

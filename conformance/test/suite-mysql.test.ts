/**
 * The whole suite (profile orbit) against our server on MySQL (MariaDB on 127.0.0.1:3306), through the library,
 * with retention declared. Every case must pass, except the server bugs listed with their reasons
 * in fixtures/orbit-known-failing.txt (the ratchet flags an entry as stale once the bug is fixed).
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALL_CASES, parseKnownFailing, renderSummary, runSuite } from '../src/index.ts';
import { startTarget, type Target } from './target.ts';

const KNOWN_FAILING = readFileSync(new URL('./fixtures/orbit-known-failing.txt', import.meta.url), 'utf8');

describe('the suite against our server on MySQL', () => {
  let target: Target;

  beforeAll(async () => {
    target = await startTarget('mysql', { retention: true });
  });

  afterAll(async () => {
    await target?.stop();
  });

  it('passes every case', async () => {
    const report = await runSuite({
      cases: ALL_CASES,
      env: target.env(),
      profile: 'orbit',
      knownFailing: parseKnownFailing(KNOWN_FAILING),
    });
    const summary = renderSummary(report);
    expect(report.results.length).toBe(ALL_CASES.length);
    expect(report.counts.skipped, summary).toBe(0);
    expect(report.counts.nonStrict, summary).toBe(0);
    expect(report.counts.unexpected, summary).toBe(0);
    expect(report.counts.info).toBe(ALL_CASES.filter((c) => c.level === 'MAY').length);
    expect(summary.trimEnd().split('\n').at(-1)).toBe(
      `${report.counts.passed} passed, ${report.counts.failed} failed, ${report.counts.info} info`,
    );
  });
});

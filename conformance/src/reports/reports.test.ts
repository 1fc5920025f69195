import { describe, expect, it } from 'vitest';
import type { CaseResult, RunReport } from '../runner.ts';
import { countResults } from '../runner.ts';
import { renderHtml } from './html.ts';
import { renderJunit } from './junit.ts';
import { renderSummary, tallyLine } from './summary.ts';

function result(id: string, outcome: CaseResult['outcome'], message?: string): CaseResult {
  return {
    id,
    area: id.split('.')[0]!,
    level: 'MUST',
    title: `MUST do <${id}> & more`,
    clause: { section: '§1', text: 'a "rule"' },
    kind: 'example',
    features: [],
    outcome,
    durationMs: 3,
    ...(message ? { message } : {}),
    evidence: [{ kind: 'note', at: 1, text: 'sent <frame>' }],
    evidenceDropped: 0,
    cleanupNotes: [],
  };
}

function report(results: CaseResult[]): RunReport {
  const counts = countResults(results);
  return {
    suite: '@orbit/conformance',
    baseUrl: 'http://x',
    startedAt: '2026-01-01T00:00:00.000Z',
    durationMs: 1234,
    seed: 5,
    numRuns: 25,
    features: [],
    only: [],
    results,
    counts,
    ok: counts.unexpected === 0,
  };
}

describe('reports', () => {
  const r = report([
    result('json.a', 'passed'),
    result('json.b', 'failed', 'expected 400 <got> 201'),
    result('retention.c', 'skipped', 'feature not declared: retention'),
    result('ack.d', 'known-failing', 'x'),
    result('ack.e', 'stale', 'listed'),
  ]);

  it('counts known failures and stale entries as failures; only failed and stale are unexpected', () => {
    expect(r.counts).toEqual({ total: 5, passed: 1, failed: 3, skipped: 1, knownFailing: 1, stale: 1, unexpected: 2 });
    expect(r.ok).toBe(false);
  });

  it('ends the summary with exactly "N passed, N failed[, N skipped]"', () => {
    expect(renderSummary(r).trimEnd().split('\n').at(-1)).toBe('1 passed, 3 failed, 1 skipped');
    expect(tallyLine(report([result('json.a', 'passed')]))).toBe('1 passed, 0 failed');
  });

  it('writes JUnit with failures, skips (known failures as skipped) and escaped text', () => {
    const xml = renderJunit(r);
    expect(xml).toContain('<testsuites name="orbit-conformance" tests="5" failures="2" skipped="2"');
    expect(xml).toContain('<failure message="expected 400 &lt;got&gt; 201" type="failed">');
    expect(xml).toContain('<skipped message="known failing: ');
    expect(xml).not.toMatch(/<got>|<frame>/);
  });

  it('writes a static HTML page with every case and escaped evidence', () => {
    const html = renderHtml(r);
    expect(html).toContain('<details id="json.b" class="failed" open>');
    expect(html).toContain('sent &lt;frame&gt;');
    expect(html).not.toContain('<script');
  });
});

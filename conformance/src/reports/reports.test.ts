import { describe, expect, it } from 'vitest';
import type { CaseResult, RunReport } from '../runner.ts';
import { countResults } from '../runner.ts';
import { renderHtml } from './html.ts';
import { renderJunit } from './junit.ts';
import { renderSummary, tallyLine } from './summary.ts';

function result(id: string, outcome: CaseResult['outcome'], message?: string, extra: Partial<CaseResult> = {}): CaseResult {
  return {
    id,
    area: id.split('.')[0]!,
    level: 'MUST',
    title: `MUST do <${id}> & more`,
    profile: 'seed',
    cites: [{ ref: '§1.20', href: 'spec/rules.md#s1-20', text: 'a "rule"' }],
    kind: 'example',
    features: [],
    outcome,
    durationMs: 3,
    ...(message ? { message } : {}),
    evidence: [{ kind: 'note', at: 1, text: 'sent <frame>' }],
    evidenceDropped: 0,
    cleanupNotes: [],
    ...extra,
  };
}

function report(results: CaseResult[], extra: Partial<RunReport> = {}): RunReport {
  const counts = countResults(results, { notRun: extra.aborted?.notRun.length ?? 0 });
  return {
    suite: '@orbit/conformance',
    baseUrl: 'http://x',
    startedAt: '2026-01-01T00:00:00.000Z',
    durationMs: 1234,
    seed: 5,
    numRuns: 25,
    profile: 'seed',
    strict: false,
    features: [],
    only: [],
    skip: [],
    preflight: null,
    results,
    counts,
    aborted: null,
    ok: counts.unexpected === 0 && !extra.aborted,
    ...extra,
  };
}

const listed = { listed: { entry: 'kf.txt:1 /x/', reason: 'bug 12' } };

describe('reports', () => {
  const r = report([
    result('json.a', 'passed'),
    result('json.b', 'failed', 'expected 400 <got> 201'),
    result('retention.c', 'skipped', 'feature not declared: retention'),
    result('ack.d', 'known-failing', 'x', listed),
    result('ack.e', 'stale', 'listed'),
    result('ack.f', 'non-strict', 'a SHOULD', { level: 'SHOULD', title: 'SHOULD f' }),
    result('ack.g', 'info', 'closed with 1009', { level: 'MAY', title: 'MAY g' }),
    result('ack.h', 'flaky', 'sometimes', listed),
  ]);

  it('counts known, flaky and stale as failures; only failed and stale are unexpected unless strict', () => {
    expect(r.counts).toEqual({
      total: 8,
      passed: 1,
      failed: 4,
      nonStrict: 1,
      info: 1,
      skipped: 1,
      knownFailing: 1,
      flaky: 1,
      stale: 1,
      unexpected: 2,
      notRun: 0,
    });
    expect(countResults(r.results, { strict: true }).unexpected).toBe(3);
    expect(r.ok).toBe(false);
  });

  it('ends the summary with exactly "N passed, N failed[, N non-strict][, N info][, N skipped]"', () => {
    expect(renderSummary(r).trimEnd().split('\n').at(-1)).toBe('1 passed, 4 failed, 1 non-strict, 1 info, 1 skipped');
    expect(tallyLine(report([result('json.a', 'passed')]))).toBe('1 passed, 0 failed');
  });

  it('writes JUnit with known failures and flaky ones as typed failures, not skips, and no doubled level', () => {
    const xml = renderJunit(r);
    expect(xml).toContain('<testsuites name="orbit-conformance" tests="8" failures="5" skipped="1"');
    expect(xml).toContain(
      '<failure message="expected 400 &lt;got&gt; 201" type="failed">MUST do &lt;json.b&gt; &amp; more\n§1.20: a &quot;rule&quot;',
    );
    expect(xml).toContain('<failure message="known failure (bug 12): x" type="known-failing">');
    expect(xml).toContain('<failure message="known flaky (bug 12): sometimes" type="flaky">');
    expect(xml).toContain('<failure message="non-strict (a SHOULD not met): a SHOULD" type="non-strict">');
    expect(xml).toContain('<system-out>info (§1.20): closed with 1009</system-out>');
    expect(xml).not.toMatch(/MUST MUST|SHOULD SHOULD/);
    expect(xml).not.toMatch(/<got>|<frame>/);
    expect(xml.match(/<skipped /g)).toHaveLength(1);
  });

  it('writes a small HTML page: the verdict, a summary by section, failures first, filters, evidence folded', () => {
    const html = renderHtml(r);
    expect(html).toContain('<b>NOT OK</b>: 1 passed, 4 failed, 1 non-strict, 1 info, 1 skipped');
    expect(html).toContain('<h2>By section</h2>');
    expect(html).toContain('<select id="fo">');
    expect(html).toContain('<select id="fs">');
    const order = [...html.matchAll(/<tr class="c ([a-z-]+)"/g)].map((m) => m[1]);
    expect(order).toEqual(['failed', 'stale', 'non-strict', 'known-failing', 'flaky', 'info', 'skipped', 'passed']);
    expect(html).toContain('<details><summary>evidence: the last 1 of 1 items');
    expect(html).toContain('sent &lt;frame&gt;');
    expect(html).not.toMatch(/<details[^>]* open/);
  });

  it('stays small with a large run: passed cases carry no evidence, failures only their last items', () => {
    const big = Array.from({ length: 400 }, (_, i) => ({ kind: 'note' as const, at: i, text: 'y'.repeat(2_000) }));
    const many = report(
      Array.from({ length: 200 }, (_, i) => result(`json.c${i}`, i % 20 === 0 ? 'failed' : 'passed', 'boom', { evidence: big })),
    );
    expect(renderHtml(many).length).toBeLessThan(300_000);
  });

  it('says why a run stopped when the server died, in the summary, the HTML and the JUnit XML', () => {
    const aborted = report([result('json.a', 'passed'), result('session.x', 'failed', 'the server stopped answering during this case')], {
      aborted: {
        during: 'session.x',
        lastPassed: 'json.a',
        probe: 'GET /healthz: connect ECONNREFUSED',
        server: { exit: 'exit code 3', outputTail: 'fixture: crashing on purpose' },
        notRun: ['session.y', 'session.z'],
      },
    });
    const summary = renderSummary(aborted);
    expect(summary).toContain('The server stopped answering during session.x (GET /healthz: connect ECONNREFUSED); the run stopped there.');
    expect(summary).toContain('last case that passed: json.a; 2 case(s) not run');
    expect(summary).toContain('the server process: exit code 3');
    expect(summary).toContain('| fixture: crashing on purpose');
    expect(renderHtml(aborted)).toContain('<pre class="abort">');
    expect(renderJunit(aborted)).toContain('<testcase classname="conformance.run" name="server-alive" time="0.000">');
  });
});

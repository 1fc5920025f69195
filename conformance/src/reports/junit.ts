/**
 * @module
 * JUnit XML: one testsuite per area, one testcase per case. Everything that failed is a
 * `<failure>`, typed by its outcome, so that CI dashboards show it: `failed` and `stale`, and also
 * `known-failing` and `flaky` (the message says they are expected and why) and `non-strict`.
 * Only cases that did not run are `<skipped>`. An `info` case passes and carries what it observed
 * in `<system-out>`. The run's exit code, not the XML, says whether the run is acceptable.
 */
import type { CaseResult, RunReport } from '../runner.ts';
import { citeRef, evidenceTail, renderAbort } from './summary.ts';

export function escapeXml(text: string): string {
  // XML 1.0 cannot carry most control characters, even escaped.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: these are exactly the characters XML 1.0 cannot carry
  const printable = text.replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g, '\ufffd');
  return printable.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

const FAILED_LIKE: ReadonlySet<CaseResult['outcome']> = new Set(['failed', 'stale', 'known-failing', 'flaky', 'non-strict']);

/** The one-line `message` attribute: expected failures say so first. */
function failureMessage(r: CaseResult): string {
  const first = (r.message ?? '').split('\n')[0]!.slice(0, 300);
  if (r.outcome === 'known-failing') return `known failure (${r.listed?.reason}): ${first}`;
  if (r.outcome === 'flaky') return `known flaky (${r.listed?.reason}): ${first}`;
  if (r.outcome === 'non-strict') return `non-strict (a SHOULD not met): ${first}`;
  return first;
}

function testcase(r: CaseResult): string[] {
  const out = [
    `    <testcase classname="conformance.${escapeXml(r.area)}" name="${escapeXml(r.id)}" time="${(r.durationMs / 1000).toFixed(3)}">`,
  ];
  if (FAILED_LIKE.has(r.outcome)) {
    const rules = r.cites.map((c) => `${c.ref}: ${c.text}`).join('\n');
    const body = `${r.title}\n${rules}\n\n${r.message ?? ''}\n\n${evidenceTail(r.evidence, 12)}`;
    out.push(`      <failure message="${escapeXml(failureMessage(r))}" type="${r.outcome}">${escapeXml(body)}</failure>`);
  } else if (r.outcome === 'skipped') {
    out.push(`      <skipped message="${escapeXml(r.message ?? '')}"/>`);
  } else if (r.outcome === 'info') {
    out.push(`      <system-out>${escapeXml(`info (${citeRef(r)}): ${r.message ?? ''}`)}</system-out>`);
  }
  out.push('    </testcase>');
  return out;
}

export function renderJunit(report: RunReport): string {
  const areas = [...new Set(report.results.map((r) => r.area))];
  const failures = (rs: readonly CaseResult[]) => rs.filter((r) => FAILED_LIKE.has(r.outcome)).length;
  const skipped = (rs: readonly CaseResult[]) => rs.filter((r) => r.outcome === 'skipped').length;
  const out: string[] = ['<?xml version="1.0" encoding="UTF-8"?>'];
  const run = report.aborted ? 1 : 0;
  out.push(
    `<testsuites name="orbit-conformance" tests="${report.results.length + run}" failures="${failures(report.results) + run}" ` +
      `skipped="${skipped(report.results)}" time="${(report.durationMs / 1000).toFixed(3)}">`,
  );
  for (const area of areas) {
    const rs = report.results.filter((r) => r.area === area);
    const time = rs.reduce((s, r) => s + r.durationMs, 0) / 1000;
    out.push(
      `  <testsuite name="${escapeXml(area)}" tests="${rs.length}" failures="${failures(rs)}" skipped="${skipped(rs)}" ` +
        `time="${time.toFixed(3)}">`,
    );
    for (const r of rs) out.push(...testcase(r));
    out.push('  </testsuite>');
  }
  if (report.aborted) {
    // The run itself failed: one synthetic case says so, with the server's exit and output.
    const text = renderAbort(report).join('\n');
    out.push('  <testsuite name="run" tests="1" failures="1" skipped="0" time="0.000">');
    out.push('    <testcase classname="conformance.run" name="server-alive" time="0.000">');
    out.push(`      <failure message="${escapeXml(text.split('\n')[0]!)}" type="server-gone">${escapeXml(text)}</failure>`);
    out.push('    </testcase>', '  </testsuite>');
  }
  out.push('</testsuites>');
  return `${out.join('\n')}\n`;
}

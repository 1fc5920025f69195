/**
 * @module
 * JUnit XML: one testsuite per area, one testcase per case. A known failure is reported as
 * skipped (with its reason), since it does not fail the run; a stale entry is a failure.
 */
import type { RunReport } from '../runner.ts';
import { evidenceTail } from './summary.ts';

export function escapeXml(text: string): string {
  // XML 1.0 cannot carry most control characters, even escaped.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: these are exactly the characters XML 1.0 cannot carry
  const printable = text.replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g, '\ufffd');
  return printable.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

export function renderJunit(report: RunReport): string {
  const areas = [...new Set(report.results.map((r) => r.area))];
  const out: string[] = ['<?xml version="1.0" encoding="UTF-8"?>'];
  const skippedLike = (o: string) => o === 'skipped' || o === 'known-failing';
  const failedLike = (o: string) => o === 'failed' || o === 'stale';
  out.push(
    `<testsuites name="orbit-conformance" tests="${report.results.length}" failures="${report.results.filter((r) => failedLike(r.outcome)).length}" skipped="${report.results.filter((r) => skippedLike(r.outcome)).length}" time="${(report.durationMs / 1000).toFixed(3)}">`,
  );
  for (const area of areas) {
    const rs = report.results.filter((r) => r.area === area);
    const time = rs.reduce((s, r) => s + r.durationMs, 0) / 1000;
    out.push(
      `  <testsuite name="${escapeXml(area)}" tests="${rs.length}" failures="${rs.filter((r) => failedLike(r.outcome)).length}" skipped="${rs.filter((r) => skippedLike(r.outcome)).length}" time="${time.toFixed(3)}">`,
    );
    for (const r of rs) {
      out.push(
        `    <testcase classname="conformance.${escapeXml(area)}" name="${escapeXml(r.id)}" time="${(r.durationMs / 1000).toFixed(3)}">`,
      );
      if (failedLike(r.outcome)) {
        const body = `${r.level} ${r.title}\n${r.clause.section}: ${r.clause.text}\n\n${r.message ?? ''}\n\n${evidenceTail(r.evidence, 12)}`;
        out.push(
          `      <failure message="${escapeXml((r.message ?? '').split('\n')[0]!.slice(0, 300))}" type="${r.outcome}">${escapeXml(body)}</failure>`,
        );
      } else if (r.outcome === 'skipped') {
        out.push(`      <skipped message="${escapeXml(r.message ?? '')}"/>`);
      } else if (r.outcome === 'known-failing') {
        out.push(`      <skipped message="${escapeXml(`known failing: ${r.knownFailingReason ?? ''}`)}"/>`);
        out.push(`      <system-out>${escapeXml(r.message ?? '')}</system-out>`);
      }
      out.push('    </testcase>');
    }
    out.push('  </testsuite>');
  }
  out.push('</testsuites>');
  return `${out.join('\n')}\n`;
}

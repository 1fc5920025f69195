/**
 * @module
 * The human summary: one line per case grouped by area, the failures with their evidence, why a
 * run stopped early, and a last line that is exactly `N passed, N failed` (plus `, N non-strict`,
 * `, N info` and `, N skipped` when there are any).
 */
import type { Evidence } from '../evidence.ts';
import type { CaseResult, RunReport } from '../runner.ts';

const MARK: Record<CaseResult['outcome'], string> = {
  passed: 'PASS ',
  failed: 'FAIL ',
  'non-strict': 'NONST',
  info: 'INFO ',
  skipped: 'SKIP ',
  'known-failing': 'KNOWN',
  flaky: 'FLAKY',
  stale: 'STALE',
};

/** The last line of every summary. */
export function tallyLine(report: Pick<RunReport, 'counts'>): string {
  const { passed, failed, nonStrict, info, skipped } = report.counts;
  const extra = [
    nonStrict > 0 ? `${nonStrict} non-strict` : '',
    info > 0 ? `${info} info` : '',
    skipped > 0 ? `${skipped} skipped` : '',
  ].filter(Boolean);
  return [`${passed} passed`, `${failed} failed`, ...extra].join(', ');
}

/** The first cited rule: `§2.5` or `README#anchor`. */
export function citeRef(r: Pick<CaseResult, 'cites'>): string {
  return r.cites.map((c) => c.ref).join(', ');
}

/** One progress line for a finished case. */
export function resultLine(r: CaseResult): string {
  const detail =
    r.outcome === 'skipped' || r.outcome === 'info'
      ? `  (${(r.message ?? '').split('\n')[0]})`
      : r.outcome === 'known-failing' || r.outcome === 'flaky'
        ? `  (${r.outcome === 'flaky' ? 'flaky' : 'known'}: ${r.listed?.reason})`
        : '';
  return `  ${MARK[r.outcome]} ${r.level.padEnd(6)} ${r.id} ${r.durationMs} ms${detail}`;
}

function indent(text: string, by = '      '): string {
  return text
    .split('\n')
    .map((l) => by + l)
    .join('\n');
}

/** A short text of the last few evidence items, for the failure listing. */
export function evidenceTail(evidence: readonly Evidence[], count = 6): string {
  return evidence
    .slice(-count)
    .map((e) => {
      switch (e.kind) {
        case 'http':
          return `${e.at} ms  ${e.method} ${e.target} -> ${e.status ?? e.error} ${e.responseBody?.slice(0, 160) ?? ''}`;
        case 'ws-open':
          return `${e.at} ms  [conn ${e.conn}] upgrade ${e.target} -> ${e.status}`;
        case 'ws-frame':
          return (
            `${e.at} ms  [conn ${e.conn}] ${e.direction === 'sent' ? '>>' : '<<'} ` +
            `${e.binary ? '(binary) ' : ''}${e.text.slice(0, 200)}`
          );
        case 'ws-close':
          return `${e.at} ms  [conn ${e.conn}] closed ${e.code} ${e.reason}`;
        case 'publish':
          return `${e.at} ms  publish ${e.request.slice(0, 120)} -> ${(e.response ?? e.error ?? '').slice(0, 120)}`;
        case 'note':
          return `${e.at} ms  note: ${e.text.slice(0, 200)}`;
        default:
          return '';
      }
    })
    .join('\n');
}

/** The header and one line per case, grouped by area. */
function renderCaseLines(report: RunReport): string[] {
  const lines: string[] = [];
  lines.push(`orbit conformance against ${report.baseUrl}, profile ${report.profile}${report.strict ? ' (strict)' : ''}`);
  lines.push(
    `seed ${report.seed} (replay with --seed ${report.seed}), ${report.numRuns} runs per property, features: ` +
      `${report.features.join(', ') || 'none'}`,
  );
  if (report.preflight) lines.push(`note: ${report.preflight}`);
  let area = '';
  for (const r of report.results) {
    if (r.area !== area) {
      area = r.area;
      lines.push('', area);
    }
    lines.push(resultLine(r));
  }
  return lines;
}

/** Why the run stopped, in a few lines. */
export function renderAbort(report: RunReport): string[] {
  const a = report.aborted;
  if (!a) return [];
  const lines = [
    `The server stopped answering during ${a.during} (${a.probe}); the run stopped there.`,
    `  last case that passed: ${a.lastPassed ?? 'none'}; ${a.notRun.length} case(s) not run`,
  ];
  if (a.server) {
    lines.push(`  the server process: ${a.server.exit ?? 'still running (but not answering)'}`);
    if (a.server.outputTail.trim()) lines.push('  the tail of its output:', indent(a.server.outputTail.trimEnd(), '    | '));
  }
  return [...lines, ''];
}

/** Failures with their evidence, cleanup notes, and the closing lines (the tally last). */
export function renderOutcome(report: RunReport): string {
  const lines: string[] = [];
  const bad = report.results.filter((r) => r.outcome === 'failed' || r.outcome === 'stale' || r.outcome === 'non-strict');
  if (bad.length > 0) {
    lines.push('Failures:');
    for (const r of bad) {
      lines.push('', `  ${MARK[r.outcome].trim()} ${r.id}: ${r.title}`);
      for (const c of r.cites) lines.push(`      ${c.ref}: ${c.text}`);
      lines.push(indent(r.message ?? ''));
      if (r.evidence.length > 0)
        lines.push('      evidence (last items; all of it in the JSON report):', indent(evidenceTail(r.evidence), '        '));
    }
    lines.push('');
  }
  lines.push(...renderAbort(report));
  const notes = report.results.flatMap((r) => r.cleanupNotes.map((n) => `${r.id}: ${n}`));
  if (notes.length > 0) lines.push('Cleanup notes:', ...notes.map((n) => `  ${n}`), '');
  const { knownFailing, flaky, stale } = report.counts;
  if (knownFailing > 0 || stale > 0 || flaky > 0)
    lines.push(`${knownFailing} known failing (expected), ${flaky} flaky, ${stale} stale known-failing entr${stale === 1 ? 'y' : 'ies'}`);
  lines.push(`${report.ok ? 'OK' : 'NOT OK'}: ${report.counts.unexpected} unexpected, ${(report.durationMs / 1000).toFixed(1)} s`);
  lines.push(tallyLine(report));
  return `${lines.join('\n')}\n`;
}

/** The whole human summary; its last line is exactly the tally. */
export function renderSummary(report: RunReport): string {
  return `${renderCaseLines(report).join('\n')}\n\n${renderOutcome(report)}`;
}

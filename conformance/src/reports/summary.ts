/**
 * @module
 * The human summary: one line per case grouped by area, the failure messages, and a last line
 * that is exactly `N passed, N failed` (plus `, N skipped` when cases were skipped).
 */
import type { Evidence } from '../evidence.ts';
import type { CaseResult, RunReport } from '../runner.ts';

const MARK: Record<CaseResult['outcome'], string> = {
  passed: 'PASS ',
  failed: 'FAIL ',
  skipped: 'SKIP ',
  'known-failing': 'KNOWN',
  stale: 'STALE',
};

/** The last line of every summary. */
export function tallyLine(report: Pick<RunReport, 'counts'>): string {
  const { passed, failed, skipped } = report.counts;
  return `${passed} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ''}`;
}

/** One progress line for a finished case. */
export function resultLine(r: CaseResult): string {
  const detail = r.outcome === 'skipped' ? `  (${r.message})` : r.outcome === 'known-failing' ? `  (known: ${r.knownFailingReason})` : '';
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
          return `${e.at} ms  [conn ${e.conn}] ${e.direction === 'sent' ? '>>' : '<<'} ${e.binary ? '(binary) ' : ''}${e.text.slice(0, 200)}`;
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
  lines.push(`orbit conformance against ${report.baseUrl}`);
  lines.push(
    `seed ${report.seed} (replay with --seed ${report.seed}), ${report.numRuns} runs per property, features: ${report.features.join(', ') || 'none'}`,
  );
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

/** Failures with their evidence, cleanup notes, and the closing lines (the tally last). */
export function renderOutcome(report: RunReport): string {
  const lines: string[] = [];
  const bad = report.results.filter((r) => r.outcome === 'failed' || r.outcome === 'stale');
  if (bad.length > 0) {
    lines.push('Failures:');
    for (const r of bad) {
      lines.push(
        '',
        `  ${r.outcome === 'stale' ? 'STALE' : 'FAIL'} ${r.level} ${r.id}: ${r.title}`,
        `      ${r.clause.section}: ${r.clause.text}`,
      );
      lines.push(indent(r.message ?? ''));
      if (r.evidence.length > 0)
        lines.push(
          '      evidence (last items; full evidence in the JSON and HTML reports):',
          indent(evidenceTail(r.evidence), '        '),
        );
    }
    lines.push('');
  }
  const notes = report.results.flatMap((r) => r.cleanupNotes.map((n) => `${r.id}: ${n}`));
  if (notes.length > 0) lines.push('Cleanup notes:', ...notes.map((n) => `  ${n}`), '');
  const { knownFailing, stale } = report.counts;
  if (knownFailing > 0 || stale > 0)
    lines.push(`${knownFailing} known failing (expected), ${stale} stale known-failing entr${stale === 1 ? 'y' : 'ies'}`);
  lines.push(`${report.ok ? 'OK' : 'NOT OK'}: ${report.counts.unexpected} unexpected, ${(report.durationMs / 1000).toFixed(1)} s`);
  lines.push(tallyLine(report));
  return `${lines.join('\n')}\n`;
}

/** The whole human summary; its last line is exactly `N passed, N failed[, N skipped]`. */
export function renderSummary(report: RunReport): string {
  return `${renderCaseLines(report).join('\n')}\n\n${renderOutcome(report)}`;
}

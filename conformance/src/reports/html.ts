/**
 * @module
 * A static, self-contained HTML page: the counts, one row per case (id, level, area, clause,
 * outcome, duration) and, under each case, its message and full evidence. No script, no external
 * resource; failures are expanded.
 */
import type { Evidence } from '../evidence.ts';
import type { CaseResult, RunReport } from '../runner.ts';
import { tallyLine } from './summary.ts';

export function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

function evidenceRow(e: Evidence): string {
  const at = `<td class="at">${e.at} ms</td>`;
  switch (e.kind) {
    case 'http':
      return `<tr>${at}<td>HTTP</td><td><b>${escapeHtml(e.method)} ${escapeHtml(e.target)}</b> → ${e.status ?? escapeHtml(e.error ?? '')}<pre>${escapeHtml(
        Object.entries(e.requestHeaders)
          .map(([k, v]) => `${k}: ${v}`)
          .join('\n'),
      )}${e.requestBody !== undefined ? `\n\n${escapeHtml(e.requestBody)}` : ''}</pre><pre>${escapeHtml(
        Object.entries(e.responseHeaders ?? {})
          .map(([k, v]) => `${k}: ${v}`)
          .join('\n'),
      )}\n\n${escapeHtml(e.responseBody ?? '')}</pre></td></tr>`;
    case 'ws-open':
      return `<tr>${at}<td>WS #${e.conn}</td><td>upgrade ${escapeHtml(e.target)} → ${e.status}<pre>${escapeHtml(
        Object.entries(e.responseHeaders)
          .map(([k, v]) => `${k}: ${v}`)
          .join('\n'),
      )}${e.body ? `\n\n${escapeHtml(e.body)}` : ''}</pre></td></tr>`;
    case 'ws-frame':
      return `<tr>${at}<td>WS #${e.conn} ${e.direction === 'sent' ? '→' : '←'}</td><td><pre>${e.binary ? '(binary) ' : ''}${escapeHtml(e.text)}</pre></td></tr>`;
    case 'ws-close':
      return `<tr>${at}<td>WS #${e.conn}</td><td>closed ${e.code} ${escapeHtml(e.reason)}</td></tr>`;
    case 'publish':
      return `<tr>${at}<td>publish</td><td><pre>${escapeHtml(e.request)}</pre><pre>${escapeHtml(e.response ?? e.error ?? '')}</pre></td></tr>`;
    case 'note':
      return `<tr>${at}<td>note</td><td>${escapeHtml(e.text)}</td></tr>`;
  }
}

function caseBlock(r: CaseResult): string {
  const open = r.outcome === 'failed' || r.outcome === 'stale' ? ' open' : '';
  const evidence = r.evidence.length
    ? `<table class="ev">${r.evidence.map(evidenceRow).join('')}</table>${r.evidenceDropped ? `<p>${r.evidenceDropped} more items were not kept.</p>` : ''}`
    : '';
  return `<details id="${escapeHtml(r.id)}" class="${r.outcome}"${open}><summary><span class="o">${r.outcome}</span> <b>${escapeHtml(r.id)}</b> ${escapeHtml(r.title)}</summary>
<p>${escapeHtml(r.clause.section)}: ${escapeHtml(r.clause.text)} · ${r.level} · ${r.area} · ${r.kind}${r.features.length ? ` · features: ${escapeHtml(r.features.join(', '))}` : ''} · ${r.durationMs} ms</p>
${r.message ? `<pre class="msg">${escapeHtml(r.message)}</pre>` : ''}${r.knownFailingReason ? `<p>Known failing: ${escapeHtml(r.knownFailingReason)}</p>` : ''}${
  r.cleanupNotes.length ? `<p>Cleanup: ${escapeHtml(r.cleanupNotes.join('; '))}</p>` : ''
}${evidence}</details>`;
}

export function renderHtml(report: RunReport): string {
  const rows = report.results
    .map(
      (r) =>
        `<tr class="${r.outcome}"><td><a href="#${escapeHtml(r.id)}">${escapeHtml(r.id)}</a></td><td>${r.level}</td><td>${r.area}</td><td>${escapeHtml(r.clause.section)}: ${escapeHtml(
          r.clause.text,
        )}</td><td class="o">${r.outcome}</td><td>${r.durationMs}</td></tr>`,
    )
    .join('\n');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Orbit conformance: ${escapeHtml(tallyLine(report))}</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222}
table{border-collapse:collapse}td,th{border:1px solid #ddd;padding:3px 6px;vertical-align:top;text-align:left}
tr.failed .o,tr.stale .o,details.failed .o,details.stale .o{color:#b00;font-weight:bold}
tr.passed .o,details.passed .o{color:#070}tr.skipped .o,tr.known-failing .o{color:#888}
pre{white-space:pre-wrap;word-break:break-all;margin:2px 0;background:#f6f6f6;padding:4px}
pre.msg{background:#fee}details{margin:4px 0;border-left:3px solid #ddd;padding-left:8px}
details.failed,details.stale{border-color:#b00}table.ev td.at{white-space:nowrap;color:#666}
</style></head><body>
<h1>Orbit conformance</h1>
<p>Target <code>${escapeHtml(report.baseUrl)}</code> · started ${escapeHtml(report.startedAt)} · ${(report.durationMs / 1000).toFixed(1)} s · seed ${report.seed} · ${report.numRuns} runs per property · features: ${escapeHtml(report.features.join(', ') || 'none')}</p>
<p><b>${escapeHtml(tallyLine(report))}</b> (${report.counts.knownFailing} known failing, ${report.counts.stale} stale) · ${report.ok ? 'OK' : 'NOT OK'}</p>
<table><thead><tr><th>case</th><th>level</th><th>area</th><th>clause</th><th>outcome</th><th>ms</th></tr></thead><tbody>
${rows}
</tbody></table>
<h2>Cases</h2>
${report.results.map(caseBlock).join('\n')}
</body></html>
`;
}

/**
 * @module
 * A small static HTML page a team reads: the verdict and the counts first, a summary by seed
 * section and outcome, then one row per case with what needs attention first (failed, stale,
 * non-strict, known, flaky, info, skipped, passed). A few lines of inline script filter the rows
 * by outcome and section; without script every row shows. Failures carry their message and, folded,
 * the last evidence items in one line each; the full evidence is in report.json, so the page stays
 * small however large a run's traffic.
 */
import type { Evidence } from '../evidence.ts';
import { OUTCOME_ORDER, type CaseResult, type Outcome, type RunReport } from '../runner.ts';
import { renderAbort, tallyLine } from './summary.ts';

export function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

const EVIDENCE_ITEMS = 40;
const EVIDENCE_CHARS = 400;

function cut(text: string, max = EVIDENCE_CHARS): string {
  return text.length <= max ? text : `${text.slice(0, max)}… (+${text.length - max})`;
}

/** One evidence item as one line of text. */
function evidenceLine(e: Evidence): string {
  switch (e.kind) {
    case 'http':
      return (
        `${e.at} ms  ${e.method} ${e.target}${e.requestBody ? ` ${cut(e.requestBody, 200)}` : ''} -> ${e.status ?? e.error ?? ''} ` +
        `${cut(e.responseBody ?? '')}`
      );
    case 'ws-open':
      return `${e.at} ms  [conn ${e.conn}] upgrade ${e.target} -> ${e.status}${e.body ? ` ${cut(e.body)}` : ''}`;
    case 'ws-frame':
      return `${e.at} ms  [conn ${e.conn}] ${e.direction === 'sent' ? '>>' : '<<'} ${e.binary ? '(binary) ' : ''}${cut(e.text)}`;
    case 'ws-close':
      return `${e.at} ms  [conn ${e.conn}] closed ${e.code} ${e.reason}`;
    case 'publish':
      return `${e.at} ms  publish ${cut(e.request, 200)} -> ${cut(e.response ?? e.error ?? '')}`;
    case 'note':
      return `${e.at} ms  note: ${cut(e.text)}`;
  }
}

/** The sections a case belongs to: `§N` of each seed rule it cites, or `orbit`. */
function sections(r: CaseResult): string[] {
  return r.profile === 'orbit' ? ['orbit'] : [...new Set(r.cites.map((c) => c.ref.split('.')[0]!))];
}

const ATTENTION: ReadonlySet<Outcome> = new Set(['failed', 'stale', 'non-strict', 'known-failing', 'flaky', 'info']);

function caseRow(r: CaseResult): string {
  const cites = r.cites.map((c) => `<span title="${escapeHtml(c.text)}">${escapeHtml(c.ref)}</span>`).join(', ');
  let detail = '';
  if (ATTENTION.has(r.outcome) || (r.outcome === 'skipped' && r.message)) {
    const message = r.message ?? '';
    const listed = r.listed
      ? `<p>${r.outcome === 'flaky' ? 'Known flaky' : 'Listed'}: ${escapeHtml(r.listed.reason)} (${escapeHtml(r.listed.entry)})</p>`
      : '';
    const items = r.evidence.slice(-EVIDENCE_ITEMS);
    const evidence =
      ATTENTION.has(r.outcome) && r.outcome !== 'info' && items.length > 0
        ? `<details><summary>evidence: the last ${items.length} of ${r.evidence.length + r.evidenceDropped} items (all of them in ` +
          `report.json)</summary><pre>${escapeHtml(items.map(evidenceLine).join('\n'))}</pre></details>`
        : '';
    // An observation (info) or a reason to skip is not a failure: it is shown, not flagged.
    const style = r.outcome === 'info' || r.outcome === 'skipped' ? 'obs' : 'msg';
    detail = `<pre class="${style}">${escapeHtml(message)}</pre>${listed}${evidence}`;
  }
  const notes = r.cleanupNotes.length ? `<p class="note">cleanup: ${escapeHtml(r.cleanupNotes.join('; '))}</p>` : '';
  const cells = [
    `<td class="o">${r.outcome}</td>`,
    `<td><code id="${escapeHtml(r.id)}">${escapeHtml(r.id)}</code></td>`,
    `<td>${r.level}</td>`,
    `<td>${cites}</td>`,
    `<td>${escapeHtml(r.title)}${detail}${notes}</td>`,
    `<td class="n">${r.durationMs}</td>`,
  ];
  return `<tr class="c ${r.outcome}" data-o="${r.outcome}" data-s="${sections(r).join(' ')}">${cells.join('')}</tr>`;
}

function summaryTable(report: RunReport): string {
  const present = OUTCOME_ORDER.filter((o) => report.results.some((r) => r.outcome === o));
  const keys = [...new Set(report.results.flatMap(sections))].sort((a, b) =>
    a === 'orbit' ? 1 : b === 'orbit' ? -1 : a.localeCompare(b, 'en', { numeric: true }),
  );
  const cell = (section: string, o: Outcome) => {
    const n = report.results.filter((r) => r.outcome === o && sections(r).includes(section)).length;
    return n === 0 ? '<td></td>' : `<td class="${o}"><a href="#cases" data-fo="${o}" data-fs="${section}">${n}</a></td>`;
  };
  const rows = keys.map((s) => `<tr><th>${s === 'orbit' ? 'Orbit choices' : s}</th>${present.map((o) => cell(s, o)).join('')}</tr>`);
  const head = `<tr><th>section</th>${present.map((o) => `<th>${o}</th>`).join('')}</tr>`;
  return `<table class="sum"><thead>${head}</thead><tbody>${rows.join('')}</tbody></table>`;
}

/** Filters the case rows by outcome and section; a click on a summary count sets both. */
const SCRIPT = [
  'const q=(s)=>document.querySelector(s);',
  'function apply(){const o=q("#fo").value,s=q("#fs").value;',
  'for(const tr of document.querySelectorAll("tr.c"))tr.hidden=(o&&tr.dataset.o!==o)||(s&&!tr.dataset.s.split(" ").includes(s));}',
  'q("#fo").onchange=apply;q("#fs").onchange=apply;',
  'for(const a of document.querySelectorAll("[data-fo]"))',
  'a.onclick=()=>{q("#fo").value=a.dataset.fo;q("#fs").value=a.dataset.fs||"";apply();};',
].join('\n');

function runLine(report: RunReport): string {
  return [
    `target ${report.baseUrl}`,
    `profile ${report.profile}${report.strict ? ' (strict)' : ''}`,
    `started ${report.startedAt}`,
    `${(report.durationMs / 1000).toFixed(1)} s`,
    `seed ${report.seed} (${report.numRuns} runs per property)`,
    `features: ${report.features.join(', ') || 'none'}`,
  ].join(' · ');
}

function verdictLine(report: RunReport): string {
  const c = report.counts;
  return `${tallyLine(report)} (${c.knownFailing} known failing, ${c.flaky} flaky, ${c.stale} stale, ${c.unexpected} unexpected)`;
}

export function renderHtml(report: RunReport): string {
  const order = (r: CaseResult) => OUTCOME_ORDER.indexOf(r.outcome);
  const rows = report.results
    .map((r, i) => ({ r, i }))
    .sort((a, b) => order(a.r) - order(b.r) || a.i - b.i)
    .map(({ r }) => caseRow(r));
  const outcomes = OUTCOME_ORDER.filter((o) => report.results.some((r) => r.outcome === o));
  const sectionOptions = [...new Set(report.results.flatMap(sections))].sort();
  const abort = report.aborted ? `<pre class="abort">${escapeHtml(renderAbort(report).join('\n'))}</pre>` : '';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Orbit conformance: ${escapeHtml(tallyLine(report))}</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}
table{border-collapse:collapse}td,th{border:1px solid #ddd;padding:2px 6px;vertical-align:top;text-align:left}
td.n{text-align:right;color:#666}.failed .o,.stale .o,td.failed,td.stale{color:#b00;font-weight:bold}
.non-strict .o,td.non-strict{color:#b60}.passed .o,td.passed{color:#070}.skipped .o,.known-failing .o,.flaky .o,.info .o{color:#777}
pre{white-space:pre-wrap;word-break:break-all;margin:2px 0;background:#f6f6f6;padding:4px;font-size:12px}
pre.msg{background:#fee}pre.obs{background:#eef3fb}pre.abort{background:#fdd;font-size:14px}.verdict{font-size:18px}p.note{color:#666;margin:2px 0}
</style></head><body>
<h1>Orbit conformance</h1>
<p>${escapeHtml(runLine(report))}</p>
<p class="verdict"><b>${report.ok ? 'OK' : 'NOT OK'}</b>: ${escapeHtml(verdictLine(report))}</p>
${report.preflight ? `<p class="note">${escapeHtml(report.preflight)}</p>` : ''}${abort}
<h2>By section</h2>
${summaryTable(report)}
<h2 id="cases">Cases</h2>
<p>Outcome <select id="fo"><option value="">all</option>${outcomes.map((o) => `<option>${o}</option>`).join('')}</select>
section <select id="fs"><option value="">all</option>${sectionOptions.map((s) => `<option>${s}</option>`).join('')}</select></p>
<table><thead><tr><th>outcome</th><th>case</th><th>level</th><th>rule</th><th>what it checks</th><th>ms</th></tr></thead><tbody>
${rows.join('\n')}
</tbody></table>
<script>${SCRIPT}</script>
</body></html>
`;
}

/**
 * @module
 * The benchmark's results: rows (one per measured case), bars (PASS/MISS), the single printed
 * table and `bench/results.json`.
 */
import { fmt } from './util.ts';

export interface Row {
  readonly section: string;
  readonly case: string;
  /** The headline figure of the row (median of runs) and its unit. */
  readonly value: number;
  readonly unit: string;
  /** Every run's figure, in order. */
  readonly runs?: readonly number[];
  /** End-to-end rows: the same figure as `value`, plus the JetStream comparison. */
  events_per_s?: number;
  ratio_vs_jetstream?: number;
  jetstream_reference?: string;
  /** Other rows: a ratio to a named baseline. */
  ratio?: number;
  ratio_to?: string;
  /** CPU µs per event, by process (median run). */
  cpu_us_per_event?: Record<string, number>;
  notes?: string;
  extra?: Record<string, unknown>;
}

export interface Bar {
  readonly name: string;
  readonly target: string;
  readonly actual: string;
  readonly pass: boolean | null;
}

function cpuCell(cpu: Record<string, number> | undefined): string {
  if (!cpu) return '';
  const order = ['server', 'db', 'consumer', 'publisher', 'nats', 'publisher+bench'];
  return order
    .filter((k) => cpu[k] !== undefined && Number.isFinite(cpu[k]))
    .map((k) => `${k[0]}${Math.round(cpu[k]!)}`)
    .join(' ');
}

/** Renders the one table: every row, then the bars. */
export function renderTable(rows: readonly Row[], bars: readonly Bar[]): string {
  const header = ['section', 'case', 'value', 'unit', 'ratio', 'cpu µs/ev', 'notes'];
  const body = rows.map((r) => [
    r.section,
    r.case,
    fmt(r.value),
    r.unit,
    r.ratio_vs_jetstream !== undefined
      ? `${r.ratio_vs_jetstream.toFixed(2)}× JS ${r.jetstream_reference ?? ''}`.trim()
      : r.ratio !== undefined
        ? `${r.ratio.toFixed(2)}× ${r.ratio_to ?? ''}`.trim()
        : '',
    cpuCell(r.cpu_us_per_event),
    r.notes ?? '',
  ]);
  for (const bar of bars)
    body.push(['bar', bar.name, bar.actual, '', bar.target, '', bar.pass === null ? 'n/a' : bar.pass ? 'PASS' : 'MISS']);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((row) => row[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => (i === 2 ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join(' | ')} |`;
  return [
    line(header),
    `|${widths.map((w, i) => (i === 2 ? `${'-'.repeat(w + 1)}:` : '-'.repeat(w + 2))).join('|')}|`,
    ...body.map(line),
  ].join('\n');
}

/**
 * @module
 * Writes all reports of a run into one directory: `summary.txt`, `report.json`, `junit.xml`,
 * `report.html`.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RunReport } from '../runner.ts';
import { renderHtml } from './html.ts';
import { renderJson } from './json.ts';
import { renderJunit } from './junit.ts';
import { renderSummary } from './summary.ts';

export { renderHtml, renderJson, renderJunit, renderSummary };
export { renderAbort, renderOutcome, resultLine, tallyLine } from './summary.ts';

export const REPORT_FILES = { summary: 'summary.txt', json: 'report.json', junit: 'junit.xml', html: 'report.html' } as const;

export function writeReports(report: RunReport, dir: string): Record<keyof typeof REPORT_FILES, string> {
  mkdirSync(dir, { recursive: true });
  const paths = {
    summary: join(dir, REPORT_FILES.summary),
    json: join(dir, REPORT_FILES.json),
    junit: join(dir, REPORT_FILES.junit),
    html: join(dir, REPORT_FILES.html),
  };
  writeFileSync(paths.summary, renderSummary(report));
  writeFileSync(paths.json, renderJson(report));
  writeFileSync(paths.junit, renderJunit(report));
  writeFileSync(paths.html, renderHtml(report));
  return paths;
}

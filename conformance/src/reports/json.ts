/**
 * @module
 * The JSON report: the whole run as data (per case: id, cited rules, outcome, duration, message,
 * property seed and counterexample, evidence).
 */
import type { RunReport } from '../runner.ts';

export function renderJson(report: RunReport): string {
  return `${JSON.stringify(report, null, 2)}\n`;
}

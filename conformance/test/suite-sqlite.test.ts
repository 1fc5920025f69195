/**
 * The whole suite (profile orbit: the seed's rules and Orbit's own choices) against our server on
 * SQLite, the way CI runs it against any implementation:
 * the CLI in spawn mode starts `orbit serve` on a fresh database, creates one credential per role
 * with `orbit bootstrap`, prunes with `orbit prune`, and writes all reports. Server bugs the suite
 * found are listed in fixtures/orbit-known-failing.txt (the ratchet flags them once fixed).
 */
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ALL_CASES, parseKnownFailing, type RunReport } from '../src/index.ts';
import { REPO, runCli } from './cli.ts';

describe('the suite against our server on SQLite (CLI, spawn mode)', () => {
  it('passes every case and writes the reports', async () => {
    const reports = mkdtempSync(join(tmpdir(), 'orbit-conformance-reports-'));
    const { status, stdout, stderr } = await runCli([
      '--profile',
      'orbit',
      '--config',
      join(REPO, 'conformance/test/fixtures/orbit-sqlite.json'),
      '--known-failing',
      join(REPO, 'conformance/test/fixtures/orbit-known-failing.txt'),
      '--report-dir',
      reports,
    ]);
    expect(status, stdout + stderr).toBe(0);
    const known = parseKnownFailing(readFileSync(join(REPO, 'conformance/test/fixtures/orbit-known-failing.txt'), 'utf8')).length;
    const info = ALL_CASES.filter((c) => c.level === 'MAY').length;
    expect(stdout.trimEnd().split('\n').at(-1)).toBe(`${ALL_CASES.length - known - info} passed, ${known} failed, ${info} info`);
    for (const file of ['summary.txt', 'report.json', 'junit.xml', 'report.html']) expect(existsSync(join(reports, file)), file).toBe(true);
    const report = JSON.parse(readFileSync(join(reports, 'report.json'), 'utf8')) as RunReport;
    expect(report.results.map((r) => r.id)).toEqual(ALL_CASES.map((c) => c.id));
    expect(report.ok).toBe(true);
    expect(report.profile).toBe('orbit');
    expect(report.preflight).toBeNull();
  });
});

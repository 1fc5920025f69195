/**
 * Client mode against our TypeScript SDK: `orbit-conformance client` (the CLI, as a user runs it)
 * drives `createEventConsumer` through its adapter (conformance/adapters/sdk/adapter.ts), once with
 * the SqliteInbox and once with the MysqlInbox on MariaDB. Every case passes, MUST and SHOULD alike.
 */
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mysql from 'mysql2/promise';
import { MYSQL_ROOT } from '@orbit/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { CLIENT_CASES } from '../src/client/index.ts';
import type { RunReport } from '../src/index.ts';
import { REPO, runCli } from './cli.ts';

const ADAPTER = join(REPO, 'conformance/adapters/sdk');
const PREFIX = `orbit_cc_${process.pid}_`;

async function dropPrefixed(): Promise<void> {
  const conn = await mysql.createConnection({ uri: MYSQL_ROOT });
  try {
    const [rows] = await conn.query('SELECT SCHEMA_NAME AS name FROM information_schema.SCHEMATA WHERE SCHEMA_NAME LIKE ?', [`${PREFIX}%`]);
    for (const { name } of rows as Array<{ name: string }>) await conn.query(`DROP DATABASE \`${name}\``);
  } finally {
    await conn.end();
  }
}

afterAll(dropPrefixed);

describe('orbit-conformance client against the SDK consumer', () => {
  it.each(['sqlite', 'mysql'])('passes every case with the %s Inbox and writes the reports', async (inbox) => {
    const dir = mkdtempSync(join(tmpdir(), 'orbit-client-sdk-'));
    const config = join(dir, 'client.json');
    writeFileSync(
      config,
      JSON.stringify({
        command: [process.execPath, '--conditions=@orbit/source', '--import', 'tsx', 'adapter.ts', '--inbox', inbox],
        cwd: ADAPTER,
        env: { ORBIT_CC_MYSQL_URL: MYSQL_ROOT, ORBIT_CC_MYSQL_PREFIX: PREFIX },
        quiet_ms: 1000,
      }),
    );
    const reports = join(dir, 'reports');
    const { status, stdout, stderr } = await runCli(['client', '--config', config, '--parallel', '2', '--report-dir', reports]);
    expect(status, stdout + stderr).toBe(0);
    expect(stdout.trimEnd().split('\n').at(-1)).toBe(`${CLIENT_CASES.length} passed, 0 failed`);
    for (const file of ['summary.txt', 'report.json', 'junit.xml', 'report.html']) expect(existsSync(join(reports, file)), file).toBe(true);
    const report = JSON.parse(readFileSync(join(reports, 'report.json'), 'utf8')) as RunReport;
    expect(report.results.map((r) => r.id)).toEqual(CLIENT_CASES.map((c) => c.id));
  });
});

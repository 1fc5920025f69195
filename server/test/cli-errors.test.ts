/**
 * The CLI's failures name what is at fault, through the real command: the setting as it was given
 * (`--database`, `ORBIT_DATABASE_URL`, `database_url in FILE`, `--listen`, `--metrics-listen`) and
 * the path, URL (without its password), address or file. A MySQL database that does not exist is
 * refused with its name and how to create it, unless `--create-database` (or ORBIT_CREATE_DATABASE,
 * or `create_database` in the config file) asks for it, and `orbit dev` creates it by default
 * (docs/operations.md, Running a node). The startup log keeps a database's name, whatever it starts with.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropMysqlDatabases, freshDatabase, missingMysqlDatabase, mysqlDatabaseExists, runOrbit, serveOrbit } from '@orbit/testing';

const dir = mkdtempSync(join(tmpdir(), 'orbit-cli-errors-'));
/** MySQL databases a test made through the CLI: dropped at the end. */
const created: string[] = [];

afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await dropMysqlDatabases(created);
});

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

describe('orbit names what is wrong', () => {
  it('MUST name the setting and the SQLite path it cannot open, as the setting was given', async () => {
    const bad = `sqlite:${dir}/no/such/dir/orbit.db`;
    const reason = `cannot open the SQLite database ${bad}: the directory ${dir}/no/such/dir does not exist; create it first`;
    const config = file('bad-database.yaml', `database_url: "${bad}"\n`);
    const [flag, env, inFile, migrate] = await Promise.all([
      runOrbit(['serve', '--listen', '127.0.0.1:0', '--database', bad]),
      runOrbit(['serve', '--listen', '127.0.0.1:0'], { ORBIT_DATABASE_URL: bad }),
      runOrbit(['serve', '--listen', '127.0.0.1:0', '--config', config]),
      runOrbit(['migrate', '--database', bad]),
    ]);
    for (const run of [flag, env, inFile, migrate]) expect(run.code, run.stderr).toBe(1);
    expect(flag.stderr).toBe(`orbit: --database: ${reason}\n`);
    expect(env.stderr).toBe(`orbit: ORBIT_DATABASE_URL: ${reason}\n`);
    expect(inFile.stderr).toBe(`orbit: database_url in ${config}: ${reason}\n`);
    expect(migrate.stderr).toBe(`orbit: --database: ${reason}\n`);
  });

  it('MUST name an unsupported URL without its password, an unreadable config file and an unreadable batch file', async () => {
    const [scheme, config, envConfig, batch] = await Promise.all([
      runOrbit(['serve', '--database', 'postgres://orbit:s3cret@db/orbit']),
      runOrbit(['migrate', '--config', `${dir}/missing.yaml`]),
      runOrbit(['serve'], { ORBIT_CONFIG: `${dir}/missing.json` }),
      runOrbit(['publish', '--queue-id', 'a'.repeat(32), '--batch', `${dir}/missing.jsonl`, '--database', 'sqlite::memory:']),
    ]);
    expect(scheme.code).toBe(2);
    expect(scheme.stderr).toContain(
      '--database must be sqlite:PATH or mysql://user:pass@host:port/db, got "postgres://orbit:***@db/orbit"',
    );
    expect(scheme.stderr).not.toContain('s3cret');
    expect(config.code).toBe(2);
    expect(config.stderr).toContain(`config file "${dir}/missing.yaml" cannot be read: ENOENT`);
    expect(envConfig.code).toBe(2);
    expect(envConfig.stderr).toContain(`config file "${dir}/missing.json" cannot be read`);
    expect(batch.code).toBe(2);
    expect(batch.stderr).toContain(`orbit: --batch: cannot read "${dir}/missing.jsonl": ENOENT`);
  });

  describe('a listen address it cannot use', () => {
    let taken: Server;
    let port: number;
    beforeAll(async () => {
      taken = createServer();
      await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
      port = (taken.address() as { port: number }).port;
    });
    afterAll(() => new Promise<void>((resolve) => taken.close(() => resolve())));

    it('MUST name the setting and the address of a listener that cannot open', async () => {
      const [main, metrics, foreign] = await Promise.all([
        runOrbit(['serve', '--listen', `127.0.0.1:${port}`, '--database', 'sqlite::memory:']),
        runOrbit(['serve', '--listen', '127.0.0.1:0', '--metrics', 'open', '--database', 'sqlite::memory:'], {
          ORBIT_METRICS_LISTEN: `127.0.0.1:${port}`,
        }),
        // TEST-NET-1 (RFC 5737): never an address of this machine.
        runOrbit(['serve', '--listen', '192.0.2.1:0', '--database', 'sqlite::memory:']),
      ]);
      expect(main.code, main.stderr).toBe(1);
      expect(main.stderr).toBe(
        `orbit: --listen: cannot listen on 127.0.0.1:${port}: the port is already in use by another process (EADDRINUSE)\n`,
      );
      expect(metrics.code, metrics.stderr).toBe(1);
      expect(metrics.stderr).toBe(
        `orbit: ORBIT_METRICS_LISTEN: cannot listen on 127.0.0.1:${port}: the port is already in use by another process (EADDRINUSE)\n`,
      );
      expect(foreign.code, foreign.stderr).toBe(1);
      expect(foreign.stderr).toBe(
        "orbit: --listen: cannot listen on 192.0.2.1:0: the address is not one of this machine's (EADDRNOTAVAIL)\n",
      );
    });
  });
});

describe('a MySQL database that does not exist', () => {
  it('MUST stop serve, migrate and the other commands with its name and how to create it, and create nothing', async () => {
    const missing = missingMysqlDatabase();
    const [serve, migrate, bootstrap] = await Promise.all([
      runOrbit(['serve', '--listen', '127.0.0.1:0', '--database', missing.url]),
      runOrbit(['migrate', '--database', missing.url]),
      runOrbit(['bootstrap', '--namespace', 'n', '--application', 'a', '--queue', 'q'], { ORBIT_DATABASE_URL: missing.url }),
    ]);
    for (const [run, label] of [
      [serve, '--database'],
      [migrate, '--database'],
      [bootstrap, 'ORBIT_DATABASE_URL'],
    ] as const) {
      expect(run.code, run.stderr).toBe(1);
      expect(run.stderr).toContain(`orbit: ${label}: the MySQL database "${missing.name}" does not exist on 127.0.0.1:3306`);
      expect(run.stderr).toContain(`CREATE DATABASE \`${missing.name}\``);
      expect(run.stderr).toContain('--create-database (ORBIT_CREATE_DATABASE=true, or create_database: true in the config file)');
      expect(run.stdout).toBe('');
    }
    expect(await mysqlDatabaseExists(missing.name)).toBe(false);
  });

  it('MUST be created when asked: --create-database, ORBIT_CREATE_DATABASE=true, create_database: true', async () => {
    const [byFlag, byEnv, byFile] = [missingMysqlDatabase(), missingMysqlDatabase(), missingMysqlDatabase()];
    created.push(byFlag.name, byEnv.name, byFile.name);
    const config = file('create.yaml', `database_url: "${byFile.url}"\ncreate_database: true\n`);
    const runs = await Promise.all([
      runOrbit(['migrate', '--database', byFlag.url, '--create-database']),
      runOrbit(['migrate', '--database', byEnv.url], { ORBIT_CREATE_DATABASE: 'true' }),
      runOrbit(['migrate', '--config', config]),
    ]);
    for (const run of runs) {
      expect(run.code, run.stderr).toBe(0);
      expect(JSON.parse(run.stdout).applied.length).toBeGreaterThan(0);
    }
    for (const { name } of [byFlag, byEnv, byFile]) expect(await mysqlDatabaseExists(name)).toBe(true);
    // Asked not to: refused as without the setting.
    const refused = await runOrbit(['migrate', '--database', missingMysqlDatabase().url], { ORBIT_CREATE_DATABASE: 'false' });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/does not exist/);
  });

  it('MUST be created by orbit dev, whose create_database defaults to true', async () => {
    const missing = missingMysqlDatabase();
    created.push(missing.name);
    const dev = await serveOrbit(
      ['--listen', '127.0.0.1:0', '--database', missing.url, '--log-format', 'json'],
      {},
      30_000,
      undefined,
      'dev',
    );
    try {
      expect(await mysqlDatabaseExists(missing.name)).toBe(true);
      await expect.poll(() => dev.text(), { timeout: 10_000 }).toContain('Demo credential');
    } finally {
      expect(await dev.stop()).toBe(0);
    }
  });
});

describe('the startup log', () => {
  it('MUST show a database whose name starts with orbit_ by its name', async () => {
    const database = await freshDatabase('mysql', { prefix: 'orbit_cli_name_is_kept_in_logs' });
    const server = await serveOrbit(['--listen', '127.0.0.1:0', '--database', database.url]);
    try {
      const line = server
        .text()
        .split('\n')
        .find((l) => l.includes('"msg":"orbit is serving"'))!;
      expect(JSON.parse(line).database).toBe(database.url);
      expect(server.text()).not.toContain('[redacted]');
    } finally {
      expect(await server.stop()).toBe(0);
      await database.drop();
    }
  });
});

/**
 * Opening a database (server/src/store/open.ts) on real MariaDB and real files: a MySQL database
 * that does not exist is refused with its name and how to create it, and nothing is created; with
 * `createDatabase` it is created (utf8mb4, utf8mb4_bin) and migrated. Every failure names the path
 * or the URL, never the password.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mysql from 'mysql2/promise';
import { afterAll, describe, expect, it } from 'vitest';
import { DatabaseOpenError, Store } from '../src/store/store.ts';
import { dropMysqlDatabases, freePort, missingMysqlDatabase, MYSQL_ROOT, mysqlDatabaseExists } from '@orbit/testing';

const dir = mkdtempSync(join(tmpdir(), 'orbit-open-'));
const created: string[] = [];
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await dropMysqlDatabases(created);
});

/** The error `Store.open(url, options)` rejects with; it must be a DatabaseOpenError. */
async function refusal(url: string, options: { createDatabase?: boolean } = {}): Promise<string> {
  const error = await Store.open(url, options).then(
    (store) => store.close().then(() => null),
    (e: unknown) => e,
  );
  expect(error, url).toBeInstanceOf(DatabaseOpenError);
  return (error as Error).message;
}

describe('opening a MySQL database', () => {
  it('MUST refuse a database that does not exist, naming it and how to create it, and create nothing', async () => {
    const missing = missingMysqlDatabase();
    const message = await refusal(missing.url);
    expect(message).toContain(`the MySQL database "${missing.name}" does not exist on 127.0.0.1:3306`);
    expect(message).toContain(`CREATE DATABASE \`${missing.name}\``);
    expect(message).toContain('--create-database');
    expect(await mysqlDatabaseExists(missing.name)).toBe(false);
  });

  it('MUST create and migrate it with createDatabase, and open it again without', async () => {
    const missing = missingMysqlDatabase();
    created.push(missing.name);
    const store = await Store.open(missing.url, { createDatabase: true });
    expect(store.migrations.applied.length).toBeGreaterThan(0);
    await store.close();
    const conn = await mysql.createConnection({ uri: MYSQL_ROOT });
    const [rows] = await conn.query('SELECT DEFAULT_COLLATION_NAME AS c FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?', [
      missing.name,
    ]);
    await conn.end();
    expect(rows).toEqual([{ c: 'utf8mb4_bin' }]);
    const again = await Store.open(missing.url);
    expect(again.migrations.applied).toEqual([]);
    await again.close();
  });

  it('MUST name the server and the URL, without its password, when it cannot connect or log in', async () => {
    const port = await freePort();
    expect(await refusal(`mysql://root:s3cret@127.0.0.1:${port}/orbit`)).toMatch(
      new RegExp(
        `cannot connect to the MySQL server at 127.0.0.1:${port} for "mysql://root:\\*\\*\\*@127.0.0.1:${port}/orbit": .*ECONNREFUSED`,
      ),
    );
    const denied = await refusal('mysql://orbit_nobody:s3cret@127.0.0.1:3306/orbit');
    expect(denied).toContain('"mysql://orbit_nobody:***@127.0.0.1:3306/orbit"');
    expect(denied).toMatch(/Access denied/);
    expect(denied).not.toContain('s3cret');
  });

  it('MUST name a URL it cannot use', async () => {
    expect(await refusal('mysql://root@127.0.0.1:3306/')).toMatch(/"mysql:\/\/root@127.0.0.1:3306\/" names no database/);
    expect(await refusal('mysql://root@127.0.0.1:3306/bad-name')).toMatch(/names the database "bad-name": use 1–64 letters, digits and _/);
    expect(await refusal('mysql://root:s3cret@[::1')).toBe(
      'the MySQL URL "mysql://root:***@[::1" is not a valid URL: use mysql://user:pass@host:port/db',
    );
  });
});

describe('opening a SQLite database', () => {
  it('MUST name the path when its directory is missing or it is a directory', async () => {
    expect(await refusal(`sqlite:${dir}/missing/orbit.db`)).toBe(
      `cannot open the SQLite database sqlite:${dir}/missing/orbit.db: the directory ${dir}/missing does not exist; create it first`,
    );
    expect(await refusal(`sqlite:${dir}`)).toBe(`cannot open the SQLite database sqlite:${dir}: ${dir} is a directory, not a file`);
  });

  it('MUST create a missing file in an existing directory (SQLite has no server to create it on)', async () => {
    const store = await Store.open(`sqlite:${dir}/new.db`);
    expect(store.migrations.applied.length).toBeGreaterThan(0);
    await store.close();
  });
});

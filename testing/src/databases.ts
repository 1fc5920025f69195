/**
 * @module
 * Fresh, empty databases on both stores: a temp SQLite file, or a uniquely named MySQL database
 * that `drop()` removes again.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mysql from 'mysql2/promise';
import { Store } from '../../server/src/internal.ts';

export const STORES = ['sqlite', 'mysql'] as const;
export type StoreKind = (typeof STORES)[number];

export const MYSQL_ROOT = process.env.ORBIT_TEST_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306';

export interface TestDatabase {
  readonly url: string;
  /** The database's name (MySQL) or file (SQLite): what a log line may show, unlike `url`, which can hold a password. */
  readonly name: string;
  drop(): Promise<void>;
}

/**
 * A new, empty database: a temp SQLite file, or a uniquely named MySQL database (`prefix_<hex>`
 * on the server at `mysqlRoot`), created here as an operator would (Orbit refuses a missing MySQL
 * database unless told to create it: docs/operations.md). The benchmark uses it too, with its own
 * prefix and server.
 */
export async function freshDatabase(kind: StoreKind, options: { prefix?: string; mysqlRoot?: string } = {}): Promise<TestDatabase> {
  const prefix = options.prefix ?? 'orbit_t';
  const root = options.mysqlRoot ?? MYSQL_ROOT;
  if (kind === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), `${prefix}-`));
    const file = join(dir, 'orbit.db');
    return { url: `sqlite:${file}`, name: file, drop: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  const name = `${prefix}_${randomBytes(6).toString('hex')}`;
  // The server URL may carry options (`?socketPath=…` for a local server's Unix socket).
  const url = new URL(root);
  url.pathname = `/${name}`;
  await onServer(root, `CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin`);
  return {
    url: url.toString(),
    name,
    drop: () => onServer(root, `DROP DATABASE IF EXISTS \`${name}\``),
  };
}

/** A name for a MySQL database that does not exist (nothing creates it): what a typo in a URL gives. */
export function missingMysqlDatabase(prefix = 'orbit_missing'): { url: string; name: string } {
  const name = `${prefix}_${randomBytes(6).toString('hex')}`;
  const url = new URL(MYSQL_ROOT);
  url.pathname = `/${name}`;
  return { url: url.toString(), name };
}

/** Runs one statement on the MySQL server at `root` (no database selected). */
async function onServer(root: string, sql: string): Promise<void> {
  const conn = await mysql.createConnection({ uri: root });
  try {
    await conn.query(sql);
  } finally {
    await conn.end();
  }
}

/** Drops the named MySQL databases on MYSQL_ROOT, those that exist (what a test made through the CLI). */
export async function dropMysqlDatabases(names: readonly string[]): Promise<void> {
  for (const name of names) await onServer(MYSQL_ROOT, `DROP DATABASE IF EXISTS \`${name}\``);
}

/** Whether the MySQL server at `root` (default MYSQL_ROOT) has a database named `name`. */
export async function mysqlDatabaseExists(name: string, root = MYSQL_ROOT): Promise<boolean> {
  const conn = await mysql.createConnection({ uri: root });
  try {
    const [rows] = await conn.query('SELECT SCHEMA_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?', [name]);
    return (rows as unknown[]).length > 0;
  } finally {
    await conn.end();
  }
}

/**
 * Opens Orbit's store on `url` (applying migrations) for a test that sets up or inspects the
 * database beside a server it runs as a process.
 */
export function openStore(url: string): Promise<Store> {
  return Store.open(url);
}

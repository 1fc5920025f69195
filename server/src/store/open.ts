/**
 * @module
 * Opens a database from a URL: `sqlite:PATH` (or `sqlite::memory:`) or
 * `mysql://user:pass@host:port/db`. A missing MySQL database is created, and a server with
 * `wsrep_on` set is opened as a node of a Galera cluster (see `mysql.ts`): no setting to forget,
 * and a plain MySQL or MariaDB (`wsrep_on` absent or OFF) keeps the plain behaviour.
 */
import mysql from 'mysql2/promise';
import { MysqlDatabase } from './mysql.ts';
import { redactDatabaseUrl, type Database } from './sql.ts';
import { SqliteDatabase } from './sqlite.ts';

export async function openDatabase(url: string, options: { connectionLimit?: number } = {}): Promise<Database> {
  if (url.startsWith('sqlite:')) {
    const path = url.slice('sqlite:'.length);
    if (!path) throw new Error('the sqlite URL needs a path: sqlite:./orbit.db');
    return new SqliteDatabase(path);
  }
  if (url.startsWith('mysql://')) {
    const parsed = new URL(url);
    const name = decodeURIComponent(parsed.pathname.replace(/^\//, ''));
    if (!/^[A-Za-z0-9_]{1,64}$/.test(name))
      throw new Error(`the MySQL URL needs a database name of letters, digits and _: ${redactDatabaseUrl(url)}`);
    const server = new URL(url);
    server.pathname = '/';
    const admin = await mysql.createConnection({ uri: server.toString() });
    let galera: boolean;
    try {
      await admin.query(`CREATE DATABASE IF NOT EXISTS \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin`);
      // MySQL has no such variable (no row); MariaDB without a cluster says OFF.
      const [rows] = await admin.query("SHOW GLOBAL VARIABLES LIKE 'wsrep_on'");
      galera = (rows as { Value?: string }[]).some((row) => String(row.Value).toUpperCase() === 'ON');
    } finally {
      await admin.end();
    }
    return new MysqlDatabase({ url, galera, ...(options.connectionLimit ? { connectionLimit: options.connectionLimit } : {}) });
  }
  throw new Error(`unsupported database URL (use sqlite:PATH or mysql://…): ${redactDatabaseUrl(url)}`);
}

/**
 * @module
 * Opens a database from a URL: `sqlite:PATH` (or `sqlite::memory:`) or
 * `mysql://user:pass@host:port/db`. A server with `wsrep_on` set is opened as a node of a Galera
 * cluster (see `mysql.ts`): no setting to forget, and a plain MySQL or MariaDB (`wsrep_on` absent or
 * OFF) keeps the plain behaviour.
 *
 * A MySQL database that does not exist is an error that names it, unless `createDatabase` is set
 * (the `create_database` setting, docs/operations.md): like a PostgreSQL client that refuses an
 * unknown database, a typo in the URL never opens an empty store. SQLite creates a missing file, as
 * `sqlite3` does; its directory must exist. Every error names the path or the URL (without its
 * password) it is about.
 */
import { accessSync, constants, existsSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import mysql from 'mysql2/promise';
import { IDLE_TRANSACTION_TIMEOUT_S, MysqlDatabase } from './mysql.ts';
import { redactDatabaseUrl, type Database } from './sql.ts';
import { SqliteDatabase } from './sqlite.ts';

export interface OpenOptions {
  /** MySQL connections of the transaction pool. */
  readonly connectionLimit?: number;
  /** Create a missing MySQL database (utf8mb4, utf8mb4_bin) instead of refusing it. */
  readonly createDatabase?: boolean;
}

/** Why a database could not be opened; the message names the path or URL (without its password). */
export class DatabaseOpenError extends Error {
  override readonly name = 'DatabaseOpenError';
}

/** The MySQL error numbers a missing or forbidden database answers `USE` with. */
const ER_DBACCESS_DENIED = 1044;
const ER_BAD_DB = 1049;

export async function openDatabase(url: string, options: OpenOptions = {}): Promise<Database> {
  if (url.startsWith('sqlite:')) return openSqlite(url.slice('sqlite:'.length));
  if (url.startsWith('mysql://')) return openMysql(url, options);
  throw new DatabaseOpenError(`unsupported database URL "${redactDatabaseUrl(url)}": use sqlite:PATH or mysql://user:pass@host:port/db`);
}

function openSqlite(path: string): Database {
  if (!path) throw new DatabaseOpenError('the sqlite URL needs a path: sqlite:./orbit.db');
  if (path !== ':memory:') {
    const where = `cannot open the SQLite database sqlite:${path}`;
    const dir = dirname(resolve(path));
    if (!existsSync(dir)) throw new DatabaseOpenError(`${where}: the directory ${dir} does not exist; create it first`);
    if (existsSync(path) && statSync(path).isDirectory())
      throw new DatabaseOpenError(`${where}: ${resolve(path)} is a directory, not a file`);
    if (!existsSync(path)) {
      try {
        accessSync(dir, constants.W_OK);
      } catch {
        throw new DatabaseOpenError(`${where}: the directory ${dir} is not writable, so the file cannot be created`);
      }
    }
    try {
      return new SqliteDatabase(path);
    } catch (error) {
      throw new DatabaseOpenError(`${where}: ${(error as Error).message}`, { cause: error });
    }
  }
  return new SqliteDatabase(path);
}

async function openMysql(url: string, options: OpenOptions): Promise<Database> {
  const shown = redactDatabaseUrl(url);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new DatabaseOpenError(`the MySQL URL "${shown}" is not a valid URL: use mysql://user:pass@host:port/db`);
  }
  const name = decodeURIComponent(parsed.pathname.replace(/^\//, ''));
  if (!/^[A-Za-z0-9_]{1,64}$/.test(name))
    throw new DatabaseOpenError(
      name
        ? `the MySQL URL "${shown}" names the database "${name}": use 1–64 letters, digits and _`
        : `the MySQL URL "${shown}" names no database: add it as the path, mysql://user:pass@host:port/orbit`,
    );
  const server = new URL(url);
  server.pathname = '/';
  const at = parsed.searchParams.get('socketPath') ?? `${parsed.hostname}:${parsed.port || 3306}`;
  let admin: mysql.Connection;
  try {
    admin = await mysql.createConnection({ uri: server.toString() });
  } catch (error) {
    throw new DatabaseOpenError(`cannot connect to the MySQL server at ${at} for "${shown}": ${(error as Error).message}`, {
      cause: error,
    });
  }
  let galera: boolean;
  let endsIdle: boolean;
  try {
    await useOrCreate(admin, name, { shown, at, create: options.createDatabase === true });
    // MySQL has neither variable (no row); MariaDB without a cluster says OFF for `wsrep_on`.
    const [rows] = await admin.query("SHOW GLOBAL VARIABLES WHERE Variable_name IN ('wsrep_on', 'idle_transaction_timeout')");
    const variables = new Map((rows as { Variable_name: string; Value: string }[]).map((row) => [row.Variable_name, String(row.Value)]));
    galera = variables.get('wsrep_on')?.toUpperCase() === 'ON';
    endsIdle = variables.has('idle_transaction_timeout');
  } finally {
    await admin.end();
  }
  return new MysqlDatabase({
    url,
    galera,
    ...(endsIdle ? { idleTransactionTimeoutS: IDLE_TRANSACTION_TIMEOUT_S } : {}),
    ...(options.connectionLimit ? { connectionLimit: options.connectionLimit } : {}),
  });
}

/**
 * Selects the database on the admin connection, creating it first when asked to. `USE` answers with
 * the server's own rule for names (case, access), where a lookup in information_schema would compare
 * them with its collation.
 */
async function useOrCreate(admin: mysql.Connection, name: string, ctx: { shown: string; at: string; create: boolean }): Promise<void> {
  try {
    await admin.query(`USE \`${name}\``);
    return;
  } catch (error) {
    const errno = (error as { errno?: number }).errno;
    if (errno === ER_DBACCESS_DENIED)
      throw new DatabaseOpenError(
        `the MySQL user of "${ctx.shown}" may not use the database "${name}" on ${ctx.at}: ${(error as Error).message}`,
        {
          cause: error,
        },
      );
    if (errno !== ER_BAD_DB)
      throw new DatabaseOpenError(`cannot use the MySQL database "${name}" on ${ctx.at}: ${(error as Error).message}`, { cause: error });
  }
  if (!ctx.create)
    throw new DatabaseOpenError(
      `the MySQL database "${name}" does not exist on ${ctx.at} ("${ctx.shown}"). ` +
        `Create it (CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin), ` +
        'or let Orbit create it with --create-database (ORBIT_CREATE_DATABASE=true, or create_database: true in the config file)',
    );
  await admin.query(`CREATE DATABASE IF NOT EXISTS \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin`);
}

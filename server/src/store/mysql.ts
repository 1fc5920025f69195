/**
 * @module
 * The production store: MySQL or MariaDB through a mysql2 pool. Every connection runs at READ
 * COMMITTED; a transaction that loses a deadlock or a lock wait is retried from the start a
 * bounded number of times with a short jittered pause.
 */
import mysql from 'mysql2/promise';
import { redactDatabaseUrl, type Database, type Row, type Sql, type TransactionOptions } from './sql.ts';

const RETRYABLE_ERRNO = new Set([1213 /* deadlock */, 1205 /* lock wait timeout */]);

export interface MysqlOptions {
  readonly url: string;
  readonly connectionLimit?: number;
}

/** mysql2's callback interface (the core pool or connection under the promise wrappers). */
interface CallbackQueryable {
  query(sql: string, values: unknown[], callback: (error: Error | null, result: unknown) => void): unknown;
}

/**
 * Statements go through the callback interface: the promise wrapper captures a stack trace (a
 * `new Error()`) on every query, which cost 6–8% of the server's CPU in the benchmark profiles.
 */
function query(target: CallbackQueryable, sql: string, params: readonly unknown[]): Promise<unknown> {
  return new Promise((resolve, reject) => {
    target.query(sql, params as unknown[], (error, result) => (error ? reject(error) : resolve(result)));
  });
}

class Connection implements Sql {
  readonly dialect = 'mysql' as const;
  constructor(private readonly target: CallbackQueryable) {}

  async all<T extends Row = Row>(sql: string, params: readonly unknown[] = []): Promise<T[]> {
    return (await query(this.target, sql, params)) as T[];
  }

  async run(sql: string, params: readonly unknown[] = []): Promise<{ changes: number }> {
    const result = (await query(this.target, sql, params)) as mysql.ResultSetHeader;
    return { changes: result.affectedRows ?? 0 };
  }
}

/** The callback object under a promise pool or pool connection. */
const core = (wrapper: mysql.Pool | mysql.PoolConnection): CallbackQueryable =>
  ('pool' in wrapper ? wrapper.pool : wrapper.connection) as unknown as CallbackQueryable;

export class MysqlDatabase implements Database {
  readonly dialect = 'mysql' as const;
  readonly description: string;
  private readonly pool: mysql.Pool;
  private readonly direct: Connection;

  constructor(options: MysqlOptions) {
    this.description = redactDatabaseUrl(options.url);
    this.pool = mysql.createPool({
      uri: options.url,
      connectionLimit: options.connectionLimit ?? 16,
      supportBigNumbers: true,
      bigNumberStrings: true,
      dateStrings: true,
      timezone: 'Z',
      charset: 'utf8mb4',
      multipleStatements: false,
    });
    this.pool.on('connection', (conn) => {
      // The callback-style connection object: queue the session settings before first use.
      (conn as unknown as { query(sql: string): void }).query('SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED');
      (conn as unknown as { query(sql: string): void }).query(
        "SET SESSION sql_mode = 'STRICT_ALL_TABLES,NO_ZERO_DATE,NO_ENGINE_SUBSTITUTION'",
      );
    });
    this.direct = new Connection(core(this.pool));
  }

  all<T extends Row = Row>(sql: string, params?: readonly unknown[]): Promise<T[]> {
    return this.direct.all<T>(sql, params);
  }

  run(sql: string, params?: readonly unknown[]): Promise<{ changes: number }> {
    return this.direct.run(sql, params);
  }

  async transaction<T>(fn: (tx: Sql) => Promise<T>, options: TransactionOptions = {}): Promise<T> {
    const retries = options.retries ?? 8;
    for (let attempt = 0; ; attempt++) {
      const conn = await this.pool.getConnection();
      try {
        await conn.query('START TRANSACTION');
        const result = await fn(new Connection(core(conn)));
        await conn.query('COMMIT');
        return result;
      } catch (error) {
        await conn.query('ROLLBACK').catch(() => undefined);
        const errno = (error as { errno?: number }).errno;
        if (errno !== undefined && RETRYABLE_ERRNO.has(errno) && attempt < retries) {
          await new Promise((resolve) => setTimeout(resolve, 2 + Math.random() * 8 * (attempt + 1)));
          continue;
        }
        throw error;
      } finally {
        conn.release();
      }
    }
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}

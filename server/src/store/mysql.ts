/**
 * @module
 * The production store: MySQL or MariaDB through two mysql2 pools, one for transactions and a
 * smaller one for single statements. Every connection runs at READ COMMITTED; a transaction that
 * loses a deadlock or a lock wait is retried from the start a bounded number of times with a short
 * jittered pause. Transaction connections run with autocommit off, so a transaction is its
 * statements and a COMMIT: every round trip counts, since each costs both processes CPU.
 *
 * On a Galera cluster (`galera: true`, which `open.ts` detects from `wsrep_on`) two things change.
 * Every read waits until the node has applied what the cluster committed before it
 * (`wsrep_sync_wait = 1`), so an ACK, a hello or a GET through this node sees a lease or a
 * subscription committed through another. And more errors restart a transaction: a certification
 * failure or a brute-force abort (1213, at any statement or at COMMIT), and the errors of a node
 * that is not primary or not synced yet (1047, 1180), for a bounded time so that a node rejoining
 * the cluster does not fail every request at once. docs/operations.md has the Galera section.
 */
import mysql from 'mysql2/promise';
import { PHRASES, redactDatabaseUrl, type Database, type Row, type Sql, type TransactionOptions } from './sql.ts';

/** Lost a deadlock (on Galera also: failed certification or was aborted by a replicated write); a lock wait timed out. */
const CONFLICT_ERRNO = new Set([1213, 1205]);

/**
 * Galera's answers while a node cannot take transactions: 1047 (WSREP has not yet prepared node
 * for application use: non-primary, joining, donor) and 1180 (error during COMMIT: replication
 * failed, the transaction was rolled back). Both leave nothing committed.
 */
const NOT_READY_ERRNO = new Set([1047, 1180]);

/** How long a transaction keeps retrying while its Galera node is not ready, before it fails. */
const NOT_READY_BUDGET_MS = 3000;

export interface MysqlOptions {
  readonly url: string;
  readonly connectionLimit?: number;
  /** The server is a Galera cluster node: causal reads and certification retries (see above). */
  readonly galera?: boolean;
}

/** mysql2's callback interface (the core pool or connection under the promise wrappers). */
interface CallbackQueryable {
  query(sql: string, values: unknown[], callback: (error: Error | null, result: unknown) => void): unknown;
}

/** A pooled connection of the callback interface. */
interface CallbackConnection extends CallbackQueryable {
  release(): void;
}

/** The callback pool under the promise pool. */
interface CallbackPool {
  getConnection(callback: (error: Error | null, connection: CallbackConnection) => void): void;
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
  readonly phrases = PHRASES.mysql;
  constructor(
    private readonly target: CallbackQueryable,
    readonly galera: boolean,
  ) {}

  async all<T extends Row = Row>(sql: string, params: readonly unknown[] = []): Promise<T[]> {
    return (await query(this.target, sql, params)) as T[];
  }

  async run(sql: string, params: readonly unknown[] = []): Promise<{ changes: number }> {
    const result = (await query(this.target, sql, params)) as mysql.ResultSetHeader;
    return { changes: result.affectedRows ?? 0 };
  }
}

/** The callback pool under the promise pool. */
const core = (wrapper: mysql.Pool): CallbackPool & CallbackQueryable => wrapper.pool as unknown as CallbackPool & CallbackQueryable;

function connectionOf(pool: CallbackPool): Promise<CallbackConnection> {
  return new Promise((resolve, reject) => pool.getConnection((error, connection) => (error ? reject(error) : resolve(connection))));
}

/** A pool whose connections run `settings` before their first use. */
function pool(url: string, connectionLimit: number, settings: readonly string[]): mysql.Pool {
  const created = mysql.createPool({
    uri: url,
    connectionLimit,
    supportBigNumbers: true,
    bigNumberStrings: true,
    dateStrings: true,
    timezone: 'Z',
    charset: 'utf8mb4',
    multipleStatements: false,
  });
  created.on('connection', (conn) => {
    // The callback-style connection object: queue the session settings before first use.
    for (const statement of settings) (conn as unknown as { query(sql: string): void }).query(statement);
  });
  return created;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export class MysqlDatabase implements Database {
  readonly dialect = 'mysql' as const;
  readonly phrases = PHRASES.mysql;
  readonly description: string;
  readonly galera: boolean;
  /** Single statements outside a transaction (autocommit). */
  private readonly pool: mysql.Pool;
  /** Transactions: connections with autocommit off, so a transaction needs no START TRANSACTION. */
  private readonly txPool: mysql.Pool;
  private readonly direct: Connection;

  constructor(options: MysqlOptions) {
    this.description = redactDatabaseUrl(options.url);
    this.galera = options.galera ?? false;
    const limit = options.connectionLimit ?? 16;
    const settings = [
      'SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED',
      "SET SESSION sql_mode = 'STRICT_ALL_TABLES,NO_ZERO_DATE,NO_ENGINE_SUBSTITUTION'",
      ...(this.galera ? ['SET SESSION wsrep_sync_wait = 1'] : []),
    ];
    this.txPool = pool(options.url, limit, [...settings, 'SET SESSION autocommit = 0']);
    this.pool = pool(options.url, Math.max(2, Math.ceil(limit / 4)), settings);
    this.direct = new Connection(core(this.pool), this.galera);
  }

  all<T extends Row = Row>(sql: string, params?: readonly unknown[]): Promise<T[]> {
    return this.direct.all<T>(sql, params);
  }

  run(sql: string, params?: readonly unknown[]): Promise<{ changes: number }> {
    return this.direct.run(sql, params);
  }

  async transaction<T>(fn: (tx: Sql) => Promise<T>, options: TransactionOptions = {}): Promise<T> {
    const retries = options.retries ?? 8;
    const started = Date.now();
    for (let attempt = 0; ; attempt++) {
      const conn = await connectionOf(core(this.txPool));
      try {
        // With autocommit off, the first statement begins the transaction: one round trip less.
        const result = await fn(new Connection(conn, this.galera));
        await query(conn, 'COMMIT', []);
        return result;
      } catch (error) {
        await query(conn, 'ROLLBACK', []).catch(() => undefined);
        const pause = this.retryPause((error as { errno?: number }).errno, attempt, retries, started);
        if (pause === null) throw error;
        await sleep(pause);
      } finally {
        conn.release();
      }
    }
  }

  /** How long to wait before running a failed transaction again, or null to give up. */
  private retryPause(errno: number | undefined, attempt: number, retries: number, started: number): number | null {
    if (errno === undefined) return null;
    if (CONFLICT_ERRNO.has(errno)) {
      if (!this.galera) return attempt < retries ? 2 + Math.random() * 8 * (attempt + 1) : null;
      // Certification conflicts come in bursts when every node appends at once: allow more turns,
      // with a pause that grows but stays short (each turn is a few milliseconds).
      return attempt < retries * 4 ? 1 + Math.random() * Math.min(50, 4 * (attempt + 1)) : null;
    }
    if (this.galera && NOT_READY_ERRNO.has(errno) && Date.now() - started < NOT_READY_BUDGET_MS) return 50 + Math.random() * 100;
    return null;
  }

  async close(): Promise<void> {
    await Promise.all([this.pool.end(), this.txPool.end()]);
  }
}

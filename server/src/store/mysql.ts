/**
 * @module
 * The production store: MySQL or MariaDB through two mysql2 pools, one for transactions and a
 * smaller one for single statements. Every connection runs at READ COMMITTED; a transaction that
 * loses a deadlock or a lock wait is retried from the start a bounded number of times with a short
 * jittered pause. Transaction connections run with autocommit off, so a transaction is its
 * statements and a COMMIT: every round trip counts, since each costs both processes CPU.
 *
 * On a Galera cluster (`galera: true`, which `open.ts` detects from `wsrep_on`) three things change.
 * Every read waits until the node has applied what the cluster committed before it
 * (`wsrep_sync_wait = 1`), so an ACK, a hello or a GET through this node sees a lease or a
 * subscription committed through another. More errors restart a transaction: a certification
 * failure or a brute-force abort (1213, at any statement or at COMMIT), and the errors of a node
 * that is not primary or not synced yet (1047, 1180), for a bounded time so that a node rejoining
 * the cluster does not fail every request at once. And a transaction sends one statement per round
 * trip, its COMMIT last and alone: a Galera node that aborted a statement of a multi-statement
 * packet was seen to run and commit the statements after it (a publish's receipts without its
 * results, server/test/galera/faults.test.ts), so a packet never carries more than one statement
 * there. docs/operations.md has the Galera section.
 */
import mysql from 'mysql2/promise';
import {
  PHRASES,
  redactDatabaseUrl,
  type BatchResult,
  type Database,
  type Row,
  type Statement,
  type TransactionOptions,
  type Tx,
} from './sql.ts';

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
  /** MariaDB ends a transaction idle this long (`idle_transaction_timeout`; see `IDLE_TRANSACTION_TIMEOUT_S`). */
  readonly idleTransactionTimeoutS?: number;
}

/**
 * How long MariaDB lets a transaction of this node sit idle before it ends it, rolling it back and
 * closing its connection. Orbit's transactions are idle only between their round trips
 * (milliseconds). A node cut off from the database in the middle of one cannot send its COMMIT or
 * ROLLBACK, and MariaDB does not learn that it is gone (nothing resets the connection), so the
 * rows it locked (a subscription, the log's head) would stay locked, and every other node's turn
 * or publish would wait on them, until TCP keepalive gives up hours later. MySQL has no such
 * setting (docs/operations.md).
 */
export const IDLE_TRANSACTION_TIMEOUT_S = 10;

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
    target.query(sql, params.map(literalOf), (error, result) => (error ? reject(error) : resolve(result)));
  });
}

/** Characters a string literal needs a backslash for (the sessions' sql_mode keeps backslash escapes). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: NUL, backspace and Ctrl-Z are exactly what the escaper writes with a backslash
const NEEDS_BACKSLASH = /[\0\b\t\n\r\x1a'\\]/;

/**
 * A long string that needs no backslash, as its quoted literal. JSON text (a result's details and
 * result) is full of `"`, which the driver's escaper writes as `\"` one character at a time;
 * inside single quotes `"` stands for itself, so the text goes in as it is. Any other value is
 * left to the driver's escaper.
 */
function literalOf(value: unknown): unknown {
  return typeof value === 'string' && value.length > 64 && !NEEDS_BACKSLASH.test(value) ? new Literal(value) : value;
}

/** What the driver's escaper writes verbatim (its `toSqlString` protocol). */
class Literal {
  constructor(private readonly text: string) {}
  toSqlString(): string {
    return `'${this.text}'`;
  }
}

/** A statement's answer as the batch returns it: rows, or the count of changed rows. */
function answerOf(statement: Statement, result: unknown): unknown {
  return statement.kind === 'query' ? result : { changes: (result as mysql.ResultSetHeader).affectedRows ?? 0 };
}

/**
 * Runs statements in one round trip: one multi-statement packet (the transaction pool's
 * connections allow them), with `COMMIT` after them when `commit` is set. Every value is still a
 * placeholder, escaped by the driver.
 */
async function batchOn(target: CallbackQueryable, statements: readonly Statement[], commit: boolean): Promise<unknown[]> {
  const texts = statements.map((s) => s.sql);
  if (commit) texts.push('COMMIT');
  if (texts.length === 0) return [];
  const result = await query(
    target,
    texts.join(';\n'),
    statements.flatMap((s) => s.params),
  );
  // One statement answers unwrapped; several answer one entry each.
  const answers = texts.length === 1 ? [result] : (result as unknown[]);
  return statements.map((statement, i) => answerOf(statement, answers[i]));
}

class Connection implements Tx {
  readonly dialect = 'mysql' as const;
  readonly phrases = PHRASES.mysql;
  /** Set once `finish` has sent the transaction's COMMIT. */
  finished = false;
  constructor(
    private readonly target: CallbackQueryable,
    readonly galera: boolean,
    /** Whether the connection takes multi-statement packets (the transaction pool's do, but not on Galera). */
    private readonly multi: boolean,
  ) {}

  async all<T extends Row = Row>(sql: string, params: readonly unknown[] = []): Promise<T[]> {
    return (await query(this.target, sql, params)) as T[];
  }

  async run(sql: string, params: readonly unknown[] = []): Promise<{ changes: number }> {
    const result = (await query(this.target, sql, params)) as mysql.ResultSetHeader;
    return { changes: result.affectedRows ?? 0 };
  }

  async batch<const S extends readonly Statement[]>(statements: S): Promise<BatchResult<S>> {
    if (this.multi) return (await batchOn(this.target, statements, false)) as BatchResult<S>;
    const answers: unknown[] = [];
    for (const statement of statements) answers.push(answerOf(statement, await query(this.target, statement.sql, statement.params)));
    return answers as BatchResult<S>;
  }

  async finish<const S extends readonly Statement[]>(statements: S): Promise<BatchResult<S>> {
    if (this.finished) throw new Error('the transaction has already committed');
    this.finished = true;
    if (this.multi) return (await batchOn(this.target, statements, true)) as BatchResult<S>;
    const answers = await this.batch(statements);
    await query(this.target, 'COMMIT', []);
    return answers;
  }
}

/** The callback pool under the promise pool. */
const core = (wrapper: mysql.Pool): CallbackPool & CallbackQueryable => wrapper.pool as unknown as CallbackPool & CallbackQueryable;

function connectionOf(pool: CallbackPool): Promise<CallbackConnection> {
  return new Promise((resolve, reject) => pool.getConnection((error, connection) => (error ? reject(error) : resolve(connection))));
}

/** A pool whose connections run `settings` before their first use. */
function pool(url: string, connectionLimit: number, settings: readonly string[], multipleStatements = false): mysql.Pool {
  const created = mysql.createPool({
    uri: url,
    connectionLimit,
    supportBigNumbers: true,
    bigNumberStrings: true,
    dateStrings: true,
    timezone: 'Z',
    charset: 'utf8mb4',
    multipleStatements,
    // Orbit sends text queries (`query`), never `execute`: the per-connection prepared-statement
    // cache stays empty, and its default size (16,000) preallocates four arrays of that length,
    // 512 KB of heap per connection.
    maxPreparedStatements: 16,
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
    // Transactions send a round trip's statements in one packet (`Sql.batch`), except on Galera
    // (see above); single statements outside them never need to, so that pool keeps them off.
    const idle = options.idleTransactionTimeoutS;
    this.txPool = pool(
      options.url,
      limit,
      [
        ...settings,
        'SET SESSION autocommit = 0',
        ...(idle === undefined ? [] : [`SET SESSION idle_transaction_timeout = ${Math.trunc(idle)}`]),
      ],
      !this.galera,
    );
    this.pool = pool(options.url, Math.max(2, Math.ceil(limit / 4)), settings);
    this.direct = new Connection(core(this.pool), this.galera, false);
  }

  all<T extends Row = Row>(sql: string, params?: readonly unknown[]): Promise<T[]> {
    return this.direct.all<T>(sql, params);
  }

  run(sql: string, params?: readonly unknown[]): Promise<{ changes: number }> {
    return this.direct.run(sql, params);
  }

  batch<const S extends readonly Statement[]>(statements: S): Promise<BatchResult<S>> {
    return this.direct.batch(statements);
  }

  async transaction<T>(fn: (tx: Tx) => Promise<T>, options: TransactionOptions = {}): Promise<T> {
    const retries = options.retries ?? 8;
    const started = Date.now();
    for (let attempt = 0; ; attempt++) {
      const conn = await connectionOf(core(this.txPool));
      try {
        // With autocommit off, the first statement begins the transaction: one round trip less.
        const tx = new Connection(conn, this.galera, !this.galera);
        const result = await fn(tx);
        if (!tx.finished) await query(conn, 'COMMIT', []);
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

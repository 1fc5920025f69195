/**
 * @module
 * The embedded store: better-sqlite3 in WAL mode. SQLite has one writer, so transactions take
 * turns on the writer connection; plain reads go to a second connection and see the last committed
 * state, never a transaction in progress.
 *
 * Group commit: transactions that wait while one runs go in the same SQLite transaction after it,
 * each in its own SAVEPOINT, and one durable COMMIT ends the group. Each caller still gets its
 * answer only after that COMMIT, and a transaction that fails rolls back to its savepoint alone.
 * With `synchronous = FULL` every COMMIT is an fsync on the event loop's thread, so a commit per
 * transaction made the fsync, not the work, the limit of this store (docs/benchmarks.md).
 */
import BetterSqlite3 from 'better-sqlite3';
import { PHRASES, type BatchResult, type Database, type Row, type Statement, type TransactionOptions, type Tx } from './sql.ts';

type Connection = BetterSqlite3.Database;

function open(path: string): Connection {
  const db = new BetterSqlite3(path);
  // First, so that switching a new file to WAL waits for another process doing the same.
  db.pragma('busy_timeout = 5000');
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma('foreign_keys = ON');
  db.defaultSafeIntegers(true);
  return db;
}

class Statements implements Tx {
  readonly dialect = 'sqlite' as const;
  readonly phrases = PHRASES.sqlite;
  private readonly cache = new Map<string, BetterSqlite3.Statement>();

  constructor(private readonly db: Connection) {}

  private prepare(sql: string): BetterSqlite3.Statement {
    let statement = this.cache.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.cache.set(sql, statement);
    }
    return statement;
  }

  async all<T extends Row = Row>(sql: string, params: readonly unknown[] = []): Promise<T[]> {
    return this.allSync<T>(sql, params);
  }

  allSync<T extends Row = Row>(sql: string, params: readonly unknown[] = []): T[] {
    return this.prepare(sql).all(...params.map(bind)) as T[];
  }

  async run(sql: string, params: readonly unknown[] = []): Promise<{ changes: number }> {
    const result = this.prepare(sql).run(...params.map(bind));
    return { changes: Number(result.changes) };
  }

  async batch<const S extends readonly Statement[]>(statements: S): Promise<BatchResult<S>> {
    return statements.map((statement) =>
      statement.kind === 'query'
        ? this.allSync(statement.sql, statement.params)
        : { changes: Number(this.prepare(statement.sql).run(...statement.params.map(bind)).changes) },
    ) as BatchResult<S>;
  }

  /** The group's COMMIT ends the transaction (see `commitGroup`); its last statements are a batch like any other. */
  finish<const S extends readonly Statement[]>(statements: S): Promise<BatchResult<S>> {
    return this.batch(statements);
  }

  exec(sql: string): void {
    this.db.exec(sql);
  }
}

/** better-sqlite3 takes no booleans; bigints pass through as 64-bit integers. */
function bind(value: unknown): unknown {
  if (typeof value === 'boolean') return value ? 1 : 0;
  return value;
}

/** A transaction waiting for its turn in a commit group. */
interface Pending {
  readonly fn: (tx: Tx) => Promise<unknown>;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
}

/** Transactions per commit group: bounds how long the first one waits for its commit. */
const MAX_GROUP = 32;

export class SqliteDatabase implements Database {
  readonly dialect = 'sqlite' as const;
  readonly phrases = PHRASES.sqlite;
  readonly description: string;
  private readonly writer: Connection;
  private readonly reader: Connection;
  private readonly writes: Statements;
  private readonly reads: Statements;
  private readonly queue: Pending[] = [];
  private running = false;
  /** Settles when the transactions asked for so far have been answered. */
  private draining: Promise<void> = Promise.resolve();
  private closing: Promise<void> | null = null;
  /** Durable commits so far (one per group); a test reads it. */
  commits = 0;

  constructor(path: string) {
    this.description = `sqlite:${path}`;
    this.writer = open(path);
    // An in-memory database exists once per connection, so it cannot have a separate reader.
    this.reader = path === ':memory:' ? this.writer : open(path);
    this.writes = new Statements(this.writer);
    this.reads = new Statements(this.reader);
  }

  all<T extends Row = Row>(sql: string, params?: readonly unknown[]): Promise<T[]> {
    return this.reads.all<T>(sql, params);
  }

  async run(sql: string, params?: readonly unknown[]): Promise<{ changes: number }> {
    return this.transaction((tx) => tx.run(sql, params));
  }

  /** Reads go to the reader; a batch that writes takes its turn on the writer, in one transaction. */
  batch<const S extends readonly Statement[]>(statements: S): Promise<BatchResult<S>> {
    if (statements.every((s) => s.kind === 'query')) return this.reads.batch(statements);
    return this.transaction((tx) => tx.batch(statements));
  }

  /** Runs DDL outside any transaction (migrations take their turn through `transaction` themselves). */
  exec(sql: string): void {
    this.writes.exec(sql);
  }

  transaction<T>(fn: (tx: Tx) => Promise<T>, _options?: TransactionOptions): Promise<T> {
    if (this.closing) return Promise.reject(new Error('the database is closed'));
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ fn, resolve: resolve as (value: unknown) => void, reject });
      if (!this.running) this.draining = this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.running = true;
    try {
      // A group starts after the event loop's I/O phase, not at once: the requests whose bytes
      // arrived while the last COMMIT blocked the thread queue their transactions first and join.
      while (this.queue.length > 0) {
        await new Promise((resolve) => setImmediate(resolve));
        await this.commitGroup();
      }
    } finally {
      this.running = false;
    }
  }

  /**
   * One SQLite transaction for the transactions that are waiting, and those that arrive while it
   * runs, up to MAX_GROUP. Answers go out after the COMMIT; if the COMMIT (or SQLite itself, which
   * rolls back the whole transaction on some errors such as a full disk) fails, every transaction of
   * the group that had succeeded fails with that error, since none of its writes remain.
   */
  private async commitGroup(): Promise<void> {
    const done: Array<{ pending: Pending; value: unknown }> = [];
    const fail = (error: unknown): void => {
      for (const { pending } of done) pending.reject(error);
      done.length = 0;
    };
    try {
      this.writes.exec('BEGIN IMMEDIATE');
    } catch (error) {
      // Another process holds the write lock beyond busy_timeout: this transaction fails alone.
      this.queue.shift()!.reject(error);
      return;
    }
    let count = 0;
    while (this.queue.length > 0 && count < MAX_GROUP) {
      const pending = this.queue.shift()!;
      count++;
      let value: unknown;
      try {
        this.writes.exec('SAVEPOINT tx');
        value = await pending.fn(this.writes);
        this.writes.exec('RELEASE tx');
      } catch (error) {
        pending.reject(error);
        if (!this.undo()) {
          fail(error);
          return;
        }
        continue;
      }
      done.push({ pending, value });
    }
    try {
      this.writes.exec('COMMIT');
      this.commits++;
    } catch (error) {
      if (this.writer.inTransaction) this.writes.exec('ROLLBACK');
      fail(error);
      return;
    }
    for (const { pending, value } of done) pending.resolve(value);
  }

  /**
   * Rolls back the failed transaction's savepoint; false when SQLite has already rolled back the
   * whole group's transaction (it does on some errors), or cannot roll back.
   */
  private undo(): boolean {
    if (!this.writer.inTransaction) return false;
    try {
      this.writes.exec('ROLLBACK TO tx');
      this.writes.exec('RELEASE tx');
      return true;
    } catch {
      if (this.writer.inTransaction) this.writes.exec('ROLLBACK');
      return false;
    }
  }

  /** Lets the transactions already asked for finish, then closes both connections. */
  close(): Promise<void> {
    this.closing ??= this.draining.then(() => {
      if (this.reader !== this.writer) this.reader.close();
      this.writer.close();
    });
    return this.closing;
  }
}

/**
 * @module
 * The embedded store: better-sqlite3 in WAL mode. SQLite has one writer, so transactions are
 * serialized by an async lock on the writer connection; plain reads go to a second connection and
 * see the last committed state, never a transaction in progress.
 */
import BetterSqlite3 from 'better-sqlite3';
import { PHRASES, type Database, type Row, type Sql, type TransactionOptions } from './sql.ts';

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

class Statements implements Sql {
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

  exec(sql: string): void {
    this.db.exec(sql);
  }
}

/** better-sqlite3 takes no booleans; bigints pass through as 64-bit integers. */
function bind(value: unknown): unknown {
  if (typeof value === 'boolean') return value ? 1 : 0;
  return value;
}

/** A FIFO lock: SQLite allows one write transaction at a time. */
class Lock {
  private tail: Promise<void> = Promise.resolve();

  async acquire(): Promise<() => void> {
    let release!: () => void;
    const next = new Promise<void>((resolve) => (release = resolve));
    const previous = this.tail;
    this.tail = previous.then(() => next);
    await previous;
    return release;
  }
}

export class SqliteDatabase implements Database {
  readonly dialect = 'sqlite' as const;
  readonly phrases = PHRASES.sqlite;
  readonly description: string;
  private readonly writer: Connection;
  private readonly reader: Connection;
  private readonly writes: Statements;
  private readonly reads: Statements;
  private readonly lock = new Lock();

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

  /** Runs DDL outside any transaction lock (migrations take the lock themselves). */
  exec(sql: string): void {
    this.writes.exec(sql);
  }

  async transaction<T>(fn: (tx: Sql) => Promise<T>, _options?: TransactionOptions): Promise<T> {
    const release = await this.lock.acquire();
    try {
      this.writes.exec('BEGIN IMMEDIATE');
      try {
        const result = await fn(this.writes);
        this.writes.exec('COMMIT');
        return result;
      } catch (error) {
        if (this.writer.inTransaction) this.writes.exec('ROLLBACK');
        throw error;
      }
    } finally {
      release();
    }
  }

  async close(): Promise<void> {
    const release = await this.lock.acquire();
    try {
      if (this.reader !== this.writer) this.reader.close();
      this.writer.close();
    } finally {
      release();
    }
  }
}

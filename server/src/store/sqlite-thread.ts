/**
 * @module
 * The SQLite store's two threads, as `sqlite.ts` uses them: the reader connection on this thread,
 * and the worker thread that owns the writer (`sqlite-worker.mjs`) with the messages to it. A
 * request is posted at once, in order with every other, and answered by the worker in that order;
 * the worker keeps the process alive only while an answer is awaited.
 */
import { Worker } from 'node:worker_threads';
import BetterSqlite3 from 'better-sqlite3';
import type { Row, Statement } from './sql.ts';

type Connection = BetterSqlite3.Database;

/**
 * Every connection's settings, in order. `busy_timeout` first, so that switching a new file to WAL
 * waits for another process doing the same. The worker opens the writer with this list (its
 * `workerData`), so both connections are opened alike.
 */
const PRAGMAS = ['busy_timeout = 5000', 'journal_mode = WAL', 'synchronous = FULL', 'foreign_keys = ON'];

/** Opens the reader (the worker opens the writer the same way). */
export function open(path: string): Connection {
  const db = new BetterSqlite3(path);
  for (const pragma of PRAGMAS) db.pragma(pragma);
  db.defaultSafeIntegers(true);
  return db;
}

/** Reads on this thread's connection, through a statement cache. */
export class Reads {
  private readonly cache = new Map<string, BetterSqlite3.Statement>();

  constructor(private readonly db: Connection) {}

  all<T extends Row = Row>(sql: string, params: readonly unknown[] = []): T[] {
    let statement = this.cache.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.cache.set(sql, statement);
    }
    return statement.all(...params.map(bind)) as T[];
  }

  close(): void {
    this.db.close();
  }
}

/** better-sqlite3 takes no booleans; bigints pass through as 64-bit integers. */
function bind(value: unknown): unknown {
  if (typeof value === 'boolean') return value ? 1 : 0;
  return value;
}

/** Flags of a batch's prefix, run in this order before its statements (the worker takes them in its `workerData`). */
export const BEGIN = 1;
export const RELEASE = 2;
export const SAVEPOINT = 4;

/** A statement as the worker takes it: the SQL's id, its text the first time, whether it reads, its parameters. */
export type WireStatement = [id: number, text: string | null, isQuery: boolean, params: readonly unknown[]];

export type Request =
  | { op: 'batch'; group: number; prefix: number; statements: WireStatement[] }
  | { op: 'finish'; group: number; prefix: number; commit: boolean; statements: WireStatement[] }
  | { op: 'read'; statements: WireStatement[] }
  | { op: 'commit'; group: number; release: boolean }
  | { op: 'undo'; group: number }
  | { op: 'exec'; sql: string }
  | { op: 'close' };

interface WireError {
  readonly message: string;
  readonly code?: string;
}

type Reply = { id: number; result: unknown; error?: undefined } | { id: number; error: WireError; lost: WireError | null };

/** An error the worker answered, and whether it lost the group (its SQLite transaction is gone). */
export class WorkerFailure extends Error {
  constructor(
    readonly error: Error,
    readonly lost: Error | null,
  ) {
    super(error.message);
  }
}

/** The error as better-sqlite3 would have thrown it on this thread: same class, message and code. */
function sqliteError(error: WireError): Error {
  return error.code === undefined ? new Error(error.message) : new BetterSqlite3.SqliteError(error.message, error.code);
}

/** What callers see of a worker failure: the SQLite error itself. */
export function unwrap(error: unknown): unknown {
  return error instanceof WorkerFailure ? error.error : error;
}

/**
 * The worker thread and its messages. Requests are answered in the order they were sent; the
 * worker keeps the process alive only while an answer is awaited.
 */
export class WriterThread {
  private readonly worker: Worker;
  private readonly waiting = new Map<number, { resolve: (value: unknown) => void; reject: (error: unknown) => void }>();
  private nextId = 1;
  /** Ids of the SQL texts sent so far: a text crosses the thread once. */
  private readonly sqlIds = new Map<string, number>();
  /** Why the worker is gone, once it is. */
  private gone: Error | null = null;

  constructor(path: string) {
    // The worker needs no loader or condition of this process: it is JavaScript and imports only better-sqlite3.
    this.worker = new Worker(new URL('./sqlite-worker.mjs', import.meta.url), {
      workerData: { path, pragmas: PRAGMAS, flags: { BEGIN, RELEASE, SAVEPOINT } },
      execArgv: [],
    });
    this.worker.unref();
    this.worker.on('message', (reply: Reply) => this.answer(reply));
    this.worker.on('error', (error) => this.end(error));
    this.worker.on('exit', (code) => this.end(new Error(`the SQLite worker thread exited (code ${code})`)));
  }

  /** Posts a request now (in order with every other) and answers its reply; rejects with a `WorkerFailure`. */
  request(request: Request): Promise<unknown> {
    if (this.gone) return Promise.reject(new WorkerFailure(this.gone, this.gone));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      if (this.waiting.size === 0) this.worker.ref();
      this.waiting.set(id, { resolve, reject });
      this.worker.postMessage({ id, ...request });
    });
  }

  statements(statements: readonly Statement[]): WireStatement[] {
    return statements.map((s) => this.statement(s.sql, s.kind === 'query', s.params));
  }

  statement(sql: string, isQuery: boolean, params: readonly unknown[] = []): WireStatement {
    const id = this.sqlIds.get(sql);
    if (id !== undefined) return [id, null, isQuery, params];
    const next = this.sqlIds.size;
    this.sqlIds.set(sql, next);
    return [next, sql, isQuery, params];
  }

  private answer(reply: Reply): void {
    const waiter = this.waiting.get(reply.id);
    if (!waiter) return;
    this.waiting.delete(reply.id);
    if (this.waiting.size === 0) this.worker.unref();
    if (reply.error === undefined) waiter.resolve(reply.result);
    else waiter.reject(new WorkerFailure(sqliteError(reply.error), reply.lost && sqliteError(reply.lost)));
  }

  private end(error: Error): void {
    this.gone ??= error;
    const failure = new WorkerFailure(this.gone, this.gone);
    for (const waiter of this.waiting.values()) waiter.reject(failure);
    this.waiting.clear();
  }

  /** Closes the worker's connection and ends the thread. */
  async close(): Promise<void> {
    try {
      // A worker that is already gone has nothing left to close.
      await this.request({ op: 'close' }).catch((error: unknown) => {
        if (!this.gone) throw error;
      });
    } finally {
      this.gone ??= new Error('the database is closed');
      await this.worker.terminate();
    }
  }
}

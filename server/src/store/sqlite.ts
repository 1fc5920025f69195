/**
 * @module
 * The embedded store: better-sqlite3 in WAL mode, with the writer off the event loop. A worker
 * thread (`sqlite-worker.mjs`) owns the writer connection and runs every statement of a
 * transaction and every COMMIT; each `batch` of a transaction is one message to it and one answer.
 * Plain reads go to a second connection on this thread and see the last committed state, never a
 * transaction in progress (an in-memory database has one connection, in the worker, for both).
 *
 * Group commit, orchestrated here: transactions that wait while one runs go in the same SQLite
 * transaction after it, each in its own SAVEPOINT, and one durable COMMIT ends the group. Each
 * caller still gets its answer only after that COMMIT, and a transaction that fails rolls back to
 * its savepoint alone. The statements around the transactions cost no message of their own:
 * BEGIN IMMEDIATE, SAVEPOINT and the RELEASE of the transaction before travel in front of a
 * transaction's first batch, and its `finish` releases its savepoint and, when no transaction waits
 * to join, carries the group's COMMIT, as MySQL sends its COMMIT with the last statements. The next
 * transaction of a group starts as soon as the one before has called `finish` (nothing runs in a
 * transaction after it), so its first batch waits in the worker's queue, not behind a round trip.
 * A COMMIT (an fsync, `synchronous = FULL`) blocks the worker, not the event loop.
 */
import { PHRASES, type BatchResult, type Database, type Row, type Statement, type TransactionOptions, type Tx } from './sql.ts';
import {
  BEGIN,
  open,
  Reads,
  RELEASE,
  type Request,
  SAVEPOINT,
  unwrap,
  type WireStatement,
  WorkerFailure,
  WriterThread,
} from './sqlite-thread.ts';

/** The state of one commit group on the writer. */
class Group {
  /** Whether BEGIN IMMEDIATE has gone to the worker (with the group's first batch). */
  begun = false;
  /** A transaction ended well without releasing its savepoint: the RELEASE goes with the next message. */
  release = false;
  /** Set once the group's COMMIT is sent (by a `finish`, or after the last transaction); settles with its answer. */
  committing: Promise<void> | null = null;
  /** Why the group's SQLite transaction is gone, once it is: its writes will not commit. */
  lost: Error | null = null;

  constructor(
    private readonly thread: WriterThread,
    readonly serial: number,
    /** Whether no transaction waits to join the group after the current one (or the group is full). */
    readonly last: () => boolean,
    /** Counts a durable commit. */
    private readonly committed: () => void,
  ) {}

  /** Sends the group's COMMIT on its own (there is none to send if nothing began). */
  commit(): Promise<void> {
    if (!this.begun || this.lost) return Promise.resolve();
    return this.thread.request({ op: 'commit', group: this.serial, release: this.release }).then(this.committed, (error: unknown) => {
      this.lost ??= error instanceof WorkerFailure ? (error.lost ?? error.error) : (error as Error);
    });
  }

  /** Follows the answer of a `finish` that carried the COMMIT: committed unless the group was lost. */
  commitWith(finish: Promise<unknown>): Promise<void> {
    return finish.then(this.committed, () => (this.lost ? undefined : this.committed()));
  }
}

/** One transaction of a group: its statements go to the worker, after what the group still owes. */
class WriterTx implements Tx {
  readonly dialect = 'sqlite' as const;
  readonly phrases = PHRASES.sqlite;
  /** Whether its SAVEPOINT has gone to the worker, i.e. it sent statements. */
  wrote = false;
  /** Set once `finish` is called: nothing more runs in the transaction. */
  finished = false;
  /** Set once `fn` has settled. */
  ended = false;
  /** Why the transaction fails whatever `fn` makes of it: its `finish` failed, or its group is lost. */
  failure: unknown = undefined;
  /** Resolves when `finish` has sent its message: the group's next transaction may start. */
  readonly finishing: Promise<void>;
  private finishCalled!: () => void;

  constructor(
    private readonly thread: WriterThread,
    private readonly group: Group,
  ) {
    this.finishing = new Promise((resolve) => {
      this.finishCalled = resolve;
    });
  }

  async all<T extends Row = Row>(sql: string, params?: readonly unknown[]): Promise<T[]> {
    const [rows] = await this.send([this.thread.statement(sql, true, params)]);
    return rows as T[];
  }

  async run(sql: string, params?: readonly unknown[]): Promise<{ changes: number }> {
    const [changes] = await this.send([this.thread.statement(sql, false, params)]);
    return { changes: changes as number };
  }

  async batch<const S extends readonly Statement[]>(statements: S): Promise<BatchResult<S>> {
    return answers(statements, await this.send(this.thread.statements(statements)));
  }

  /**
   * The transaction's last batch: it releases the transaction's savepoint (or rolls back to it if
   * a statement fails, and then the transaction fails whatever `fn` does) and, when no transaction
   * waits to join the group, commits the group in the same message. As on MySQL, a transaction
   * whose `finish` succeeded keeps its writes even if `fn` throws afterwards.
   */
  async finish<const S extends readonly Statement[]>(statements: S): Promise<BatchResult<S>> {
    if (this.finished) throw new Error('the transaction has already finished');
    if (this.ended) throw new Error('the transaction has ended');
    const commit = this.group.last();
    if (statements.length === 0) {
      // No message of its own: its savepoint is released with the next one, the COMMIT alone if it is the last.
      if (this.wrote) this.group.release = true;
      this.finished = true;
      if (commit) this.group.committing = this.group.commit();
      this.finishCalled();
      return [] as BatchResult<S>;
    }
    const sent = this.send(this.thread.statements(statements), commit);
    if (commit) this.group.committing = this.group.commitWith(sent);
    this.finished = true;
    this.finishCalled();
    return answers(statements, await sent);
  }

  /** Posts the statements at once, behind what the group owes, and answers their results. */
  private send(statements: WireStatement[], commit?: boolean): Promise<unknown[]> {
    if (this.finished) return Promise.reject(new Error('the transaction has already finished'));
    if (this.ended) return Promise.reject(new Error('the transaction has ended'));
    let prefix = 0;
    if (!this.group.begun) {
      prefix |= BEGIN;
      this.group.begun = true;
    }
    if (this.group.release) {
      prefix |= RELEASE;
      this.group.release = false;
    }
    if (!this.wrote) {
      prefix |= SAVEPOINT;
      this.wrote = true;
    }
    const group = this.group.serial;
    const request: Request =
      commit === undefined ? { op: 'batch', group, prefix, statements } : { op: 'finish', group, prefix, commit, statements };
    return (this.thread.request(request) as Promise<unknown[]>).catch((error: unknown) => {
      if (error instanceof WorkerFailure) {
        if (error.lost) this.group.lost ??= error.lost;
        if (error.lost || commit !== undefined) this.failure ??= error.error;
      }
      throw unwrap(error);
    });
  }
}

function answers<const S extends readonly Statement[]>(statements: S, results: unknown[]): BatchResult<S> {
  return statements.map((s, i) => (s.kind === 'query' ? results[i] : { changes: results[i] })) as BatchResult<S>;
}

/** A transaction waiting for its turn in a commit group. */
interface Pending {
  readonly fn: (tx: Tx) => Promise<unknown>;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
}

/** A transaction of a group, and how its `fn` settled. */
interface Member {
  readonly pending: Pending;
  readonly tx: WriterTx;
  readonly outcome: Promise<Outcome>;
}

type Outcome = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly error: unknown };

/** Transactions per commit group: bounds how long the first one waits for its commit. */
const MAX_GROUP = 32;

export class SqliteDatabase implements Database {
  readonly dialect = 'sqlite' as const;
  readonly phrases = PHRASES.sqlite;
  readonly description: string;
  private readonly thread: WriterThread;
  /** This thread's reader; null for an in-memory database, whose one connection is the worker's. */
  private readonly reads: Reads | null;
  private readonly queue: Pending[] = [];
  private running = false;
  private groups = 0;
  /** Settles when the transactions asked for so far have had their turn on the writer. */
  private draining: Promise<void> = Promise.resolve();
  /** Settles when the groups started so far have been answered, in order. */
  private answering: Promise<void> = Promise.resolve();
  private closing: Promise<void> | null = null;
  /** Durable commits so far (one per group); a test and bench/diagnose.ts read it. */
  commits = 0;

  constructor(path: string) {
    this.description = `sqlite:${path}`;
    // The reader opens here and now, so that a path that cannot be opened fails the constructor.
    // An in-memory database exists once per connection, so it cannot have a separate reader.
    this.reads = path === ':memory:' ? null : new Reads(open(path));
    this.thread = new WriterThread(path);
  }

  all<T extends Row = Row>(sql: string, params?: readonly unknown[]): Promise<T[]> {
    if (!this.reads) return this.read([{ kind: 'query', sql, params: params ?? [] }]).then(([rows]) => rows as T[]);
    try {
      return Promise.resolve(this.reads.all<T>(sql, params));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  async run(sql: string, params?: readonly unknown[]): Promise<{ changes: number }> {
    return this.transaction((tx) => tx.run(sql, params));
  }

  /** Reads go to the reader; a batch that writes takes its turn on the writer, in one transaction. */
  async batch<const S extends readonly Statement[]>(statements: S): Promise<BatchResult<S>> {
    if (!statements.every((s) => s.kind === 'query')) return this.transaction((tx) => tx.batch(statements));
    const reads = this.reads;
    if (reads) return statements.map((s) => reads.all(s.sql, s.params)) as BatchResult<S>;
    return (await this.read(statements)) as BatchResult<S>;
  }

  private async read(statements: readonly Statement[]): Promise<unknown[]> {
    try {
      return (await this.thread.request({ op: 'read', statements: this.thread.statements(statements) })) as unknown[];
    } catch (error) {
      throw unwrap(error);
    }
  }

  /** Runs DDL on the writer, outside any transaction (migrations take their turn through `transaction` themselves). */
  async exec(sql: string): Promise<void> {
    try {
      await this.thread.request({ op: 'exec', sql });
    } catch (error) {
      throw unwrap(error);
    }
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
      // arrived meanwhile queue their transactions first and join.
      while (this.queue.length > 0) {
        await new Promise((resolve) => setImmediate(resolve));
        await this.runGroup();
      }
    } finally {
      this.running = false;
    }
  }

  /**
   * One SQLite transaction for the transactions that are waiting, and those that arrive while it
   * runs, up to MAX_GROUP. A transaction has the writer until `fn` settles or calls `finish`. The
   * group ends when its COMMIT is sent: the next group's statements queue in the worker behind that
   * COMMIT, while this group's answers wait for it (`answer`).
   */
  private async runGroup(): Promise<void> {
    let count = 0;
    const group = new Group(
      this.thread,
      this.groups++,
      () => this.queue.length === 0 || count >= MAX_GROUP,
      () => {
        this.commits++;
      },
    );
    const members: Member[] = [];
    while (this.queue.length > 0 && count < MAX_GROUP && group.committing === null && group.lost === null) {
      const pending = this.queue.shift()!;
      count++;
      const tx = new WriterTx(this.thread, group);
      const outcome = settle(pending.fn, tx).then((o) => {
        tx.ended = true;
        return o;
      });
      members.push({ pending, tx, outcome });
      await Promise.race([outcome, tx.finishing]);
      if (tx.finished) continue;
      const result = await outcome;
      if (result.ok && tx.failure === undefined) {
        if (tx.wrote) group.release = true;
      } else if (tx.wrote && group.lost === null && !(await this.undo(group))) {
        group.lost = (result.ok ? tx.failure : result.error) as Error;
      }
    }
    const committed = group.committing ?? group.commit();
    const before = this.answering;
    this.answering = committed.then(() => this.answer(group, members, before));
  }

  /**
   * Answers a group's transactions once its COMMIT is answered, every `fn` has settled, and the
   * groups before have been answered. A transaction that failed before its `finish` was rolled
   * back to its savepoint alone; one whose `finish` failed, by the worker. If the group is lost
   * (the COMMIT failed, or SQLite rolled back the whole transaction on an error such as a full
   * disk), every transaction of it that wrote fails with that error, since none of its writes
   * remain; one that sent no statement lost nothing.
   */
  private async answer(group: Group, members: readonly Member[], before: Promise<void>): Promise<void> {
    const outcomes = await Promise.all(members.map((m) => m.outcome));
    await before;
    members.forEach(({ pending, tx }, i) => {
      const outcome = outcomes[i]!;
      if (!outcome.ok) pending.reject(outcome.error);
      else if (tx.failure !== undefined) pending.reject(tx.failure);
      else if (group.lost && tx.wrote) pending.reject(group.lost);
      else pending.resolve(outcome.value);
    });
  }

  /** Rolls back the failed transaction's savepoint in the worker; false when the group is lost with it. */
  private async undo(group: Group): Promise<boolean> {
    try {
      return (await this.thread.request({ op: 'undo', group: group.serial })) === true;
    } catch {
      return false;
    }
  }

  /** Lets the transactions already asked for finish, then closes the connections and ends the worker. */
  close(): Promise<void> {
    this.closing ??= this.draining.then(async () => {
      await this.answering;
      this.reads?.close();
      await this.thread.close();
    });
    return this.closing;
  }
}

function settle(fn: (tx: Tx) => Promise<unknown>, tx: Tx): Promise<Outcome> {
  try {
    return fn(tx).then(
      (value) => ({ ok: true, value }),
      (error: unknown) => ({ ok: false, error }),
    );
  } catch (error) {
    return Promise.resolve({ ok: false, error });
  }
}

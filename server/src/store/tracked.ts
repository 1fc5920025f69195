/**
 * @module
 * A `Database` that counts the operations in flight, so a graceful shutdown can wait for running
 * transactions (an ACK, a turn, a management write) to commit before it closes the pool; and
 * counts what every operation costs the database, the figures of the engine's cost model
 * (server/test/engine-cost.test.ts): statements, round trips, commits and what they send.
 */
import type { BatchResult, Database, Row, Statement, TransactionOptions, Tx } from './sql.ts';

/**
 * What the database has been asked to do, cumulatively. A round trip is one call across the driver:
 * a statement, a batch, or a transaction's COMMIT when its last batch did not carry it (`finish`).
 * A commit is a transaction that committed (or a write outside one); an attempt that a deadlock
 * rolled back counts its statements and round trips, not a commit.
 */
export interface DatabaseCounts {
  statements: number;
  roundTrips: number;
  commits: number;
  /**
   * Characters of statement text and values sent: what the database must read, parse and, for
   * written values, store and log. A value counts as its text (a number as its digits).
   */
  sent: number;
}

/** What `count` reads of a statement: its text and its values. */
type Sent = Pick<Statement, 'sql' | 'params'>;

/** Characters of a statement's text and its values (`DatabaseCounts.sent`). */
function sentBy({ sql, params }: Sent): number {
  let n = sql.length;
  for (const p of params) if (p !== null && p !== undefined) n += typeof p === 'string' ? p.length : String(p).length;
  return n;
}

export class TrackedDatabase implements Database {
  private active = 0;
  private idleWaiters: Array<() => void> = [];
  readonly counts: DatabaseCounts = { statements: 0, roundTrips: 0, commits: 0, sent: 0 };

  constructor(private readonly inner: Database) {}

  get dialect(): Database['dialect'] {
    return this.inner.dialect;
  }

  get phrases(): Database['phrases'] {
    return this.inner.phrases;
  }

  get galera(): boolean {
    return this.inner.galera ?? false;
  }

  get description(): string {
    return this.inner.description;
  }

  /** Operations (statements outside a transaction, or whole transactions) running now. */
  get inFlight(): number {
    return this.active;
  }

  private async track<T>(run: () => Promise<T>): Promise<T> {
    this.active++;
    try {
      return await run();
    } finally {
      this.active--;
      if (this.active === 0) {
        const waiters = this.idleWaiters;
        this.idleWaiters = [];
        for (const wake of waiters) wake();
      }
    }
  }

  all<T extends Row = Row>(sql: string, params?: readonly unknown[]): Promise<T[]> {
    this.count([{ sql, params: params ?? [] }], 0);
    return this.track(() => this.inner.all<T>(sql, params));
  }

  run(sql: string, params?: readonly unknown[]): Promise<{ changes: number }> {
    this.count([{ sql, params: params ?? [] }], 1);
    return this.track(() => this.inner.run(sql, params));
  }

  batch<const S extends readonly Statement[]>(statements: S): Promise<BatchResult<S>> {
    this.count(statements, statements.some((s) => s.kind === 'command') ? 1 : 0);
    return this.track(() => this.inner.batch(statements));
  }

  transaction<T>(fn: (tx: Tx) => Promise<T>, options?: TransactionOptions): Promise<T> {
    return this.track(async () => {
      const result = await this.inner.transaction(async (tx) => {
        let finished = false;
        const counted: Tx = {
          dialect: tx.dialect,
          phrases: tx.phrases,
          ...(tx.galera === undefined ? {} : { galera: tx.galera }),
          all: (sql, params) => {
            this.count([{ sql, params: params ?? [] }], 0);
            return tx.all(sql, params);
          },
          run: (sql, params) => {
            this.count([{ sql, params: params ?? [] }], 0);
            return tx.run(sql, params);
          },
          batch: (statements) => {
            this.count(statements, 0);
            return tx.batch(statements);
          },
          finish: (statements) => {
            finished = true;
            this.count(statements, 0);
            return tx.finish(statements);
          },
        };
        const value = await fn(counted);
        if (!finished) this.counts.roundTrips++;
        return value;
      }, options);
      this.counts.commits++;
      return result;
    });
  }

  private count(statements: readonly Sent[], commits: number): void {
    this.counts.statements += statements.length;
    this.counts.roundTrips++;
    this.counts.commits += commits;
    for (const s of statements) this.counts.sent += sentBy(s);
  }

  /** Resolves once nothing is in flight (at once when idle). */
  idle(): Promise<void> {
    if (this.active === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}

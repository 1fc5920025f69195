/**
 * @module
 * A `Database` that counts the operations in flight, so a graceful shutdown can wait for running
 * transactions (an ACK, a claim, a management write) to commit before it closes the pool.
 */
import type { Database, Row, Sql, TransactionOptions } from './sql.ts';

export class TrackedDatabase implements Database {
  private active = 0;
  private idleWaiters: Array<() => void> = [];

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
    return this.track(() => this.inner.all<T>(sql, params));
  }

  run(sql: string, params?: readonly unknown[]): Promise<{ changes: number }> {
    return this.track(() => this.inner.run(sql, params));
  }

  transaction<T>(fn: (tx: Sql) => Promise<T>, options?: TransactionOptions): Promise<T> {
    return this.track(() => this.inner.transaction(fn, options));
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

/**
 * @module
 * The one seam between the repository and a database driver. The repository writes portable SQL
 * (`?` placeholders, integers for time and booleans) and asks the dialect for the few phrases that
 * differ; the drivers behind this interface are `sqlite.ts` and `mysql.ts`.
 */

export type Dialect = 'sqlite' | 'mysql';

export type Row = Record<string, unknown>;

/** Something that runs statements: the database itself, or one open transaction. */
export interface Sql {
  readonly dialect: Dialect;
  all<T extends Row = Row>(sql: string, params?: readonly unknown[]): Promise<T[]>;
  run(sql: string, params?: readonly unknown[]): Promise<{ changes: number }>;
}

export interface TransactionOptions {
  /** How often a transaction that lost a deadlock or a lock wait is run again. */
  readonly retries?: number;
}

export interface Database extends Sql {
  /**
   * Runs `fn` in one transaction and commits when it resolves. On MySQL the isolation level is
   * READ COMMITTED (claims with SKIP LOCKED do not collapse into deadlocks under it), and a
   * transaction that loses a deadlock is run again from the start, so `fn` must be safe to repeat.
   */
  transaction<T>(fn: (tx: Sql) => Promise<T>, options?: TransactionOptions): Promise<T>;
  close(): Promise<void>;
  /** A human-readable description without credentials, for logs. */
  readonly description: string;
}

/** Dialect-specific phrases; everything else in the repository's SQL is shared. */
export interface SqlPhrases {
  /** Appended to a SELECT that must lock the rows it reads until commit. */
  readonly forUpdate: string;
  /** Like forUpdate, but skips rows another transaction holds. */
  readonly forUpdateSkipLocked: string;
  /** `INSERT IGNORE` / `INSERT OR IGNORE`. */
  readonly insertIgnore: string;
  /**
   * The database's clock in epoch milliseconds, as an SQL expression. Lease start, lease end and
   * every expiry check use it, so nodes whose own clocks disagree still agree on leases.
   */
  readonly nowMs: string;
}

export const PHRASES: Readonly<Record<Dialect, SqlPhrases>> = {
  sqlite: {
    forUpdate: '',
    forUpdateSkipLocked: '',
    insertIgnore: 'INSERT OR IGNORE',
    nowMs: "CAST(unixepoch('subsec') * 1000 AS INTEGER)",
  },
  mysql: {
    forUpdate: ' FOR UPDATE',
    forUpdateSkipLocked: ' FOR UPDATE SKIP LOCKED',
    insertIgnore: 'INSERT IGNORE',
    nowMs: 'CAST(UNIX_TIMESTAMP(NOW(3)) * 1000 AS SIGNED)',
  },
};

/** Whether an error from either driver is a unique-key violation. */
export function isUniqueViolation(error: unknown): boolean {
  const e = error as { code?: string; errno?: number } | null;
  return e?.code === 'ER_DUP_ENTRY' || e?.code === 'SQLITE_CONSTRAINT_UNIQUE' || e?.code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

/** Converts a driver integer (number, bigint or decimal string) to a bigint. */
export function big(value: unknown): bigint {
  if (typeof value === 'bigint') return value;
  if (typeof value === 'number') return BigInt(value);
  if (typeof value === 'string') return BigInt(value);
  throw new TypeError(`expected an integer column, got ${typeof value}`);
}

/** Converts a driver integer known to be small (counts, milliseconds) to a number. */
export function num(value: unknown): number {
  if (typeof value === 'number') return value;
  if (typeof value === 'bigint' || typeof value === 'string') return Number(value);
  throw new TypeError(`expected an integer column, got ${typeof value}`);
}

export function numOrNull(value: unknown): number | null {
  return value === null || value === undefined ? null : num(value);
}

/** A database URL fit for logs and errors: a MySQL password is replaced by `***`. */
export function redactDatabaseUrl(url: string): string {
  if (!url.startsWith('mysql://')) return url;
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'mysql://(unparsable url)';
  }
}

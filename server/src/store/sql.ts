/**
 * @module
 * The one seam between the repository and a database driver. The repository writes portable SQL
 * (`?` placeholders, integers for time and booleans) and asks the dialect for the few phrases that
 * differ; the drivers behind this interface are `sqlite.ts` and `mysql.ts`.
 */
import { PENDING_STATES } from '../domain/delivery.ts';

export type Dialect = 'sqlite' | 'mysql';

export type Row = Record<string, unknown>;

/** A statement that reads rows. */
export interface Query {
  readonly kind: 'query';
  readonly sql: string;
  readonly params: readonly unknown[];
}

/** A statement that writes and answers how many rows it changed. */
export interface Command {
  readonly kind: 'command';
  readonly sql: string;
  readonly params: readonly unknown[];
}

export type Statement = Query | Command;

/** What a statement of a batch answers: rows for a query, the count of changed rows for a command. */
export type ResultOf<S extends Statement> = S extends Query ? Row[] : { changes: number };

/** The answers of a batch, one per statement, in order. */
export type BatchResult<S extends readonly Statement[]> = { -readonly [K in keyof S]: ResultOf<S[K]> };

export function query(sql: string, params: readonly unknown[] = []): Query {
  return { kind: 'query', sql, params };
}

export function command(sql: string, params: readonly unknown[] = []): Command {
  return { kind: 'command', sql, params };
}

/** The statements of a round trip that has nothing to do for some (a builder's null: nothing to write). */
export function present(statements: readonly (Statement | null)[]): Statement[] {
  return statements.filter((s): s is Statement => s !== null);
}

/** Something that runs statements: the database itself, or one open transaction. */
export interface Sql {
  readonly dialect: Dialect;
  /** The few phrases in which the two dialects differ (`PHRASES`). */
  readonly phrases: SqlPhrases;
  /**
   * Whether the database is a Galera cluster (MySQL only; see `mysql.ts`). Galera certifies a
   * transaction against the rows it changes, not the rows it locked: a decision that must not race
   * another node's has to rest on a row the transaction writes (`certifiedLock`).
   */
  readonly galera?: boolean;
  all<T extends Row = Row>(sql: string, params?: readonly unknown[]): Promise<T[]>;
  run(sql: string, params?: readonly unknown[]): Promise<{ changes: number }>;
  /**
   * Runs statements in order in one round trip to the database (MySQL: one multi-statement
   * packet; SQLite: one call). A statement that fails stops the batch and rejects it. The
   * statements of a batch may not depend on each other's answers, only on their effects: a batch is
   * how a transaction plan keeps its round trips few (spec/README.md, "The delivery engine").
   */
  batch<const S extends readonly Statement[]>(statements: S): Promise<BatchResult<S>>;
}

/** One open transaction. */
export interface Tx extends Sql {
  /**
   * The transaction's last round trip: runs `statements` and commits in the same round trip (MySQL
   * sends its COMMIT with them). Nothing may run in the transaction after it.
   */
  finish<const S extends readonly Statement[]>(statements: S): Promise<BatchResult<S>>;
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
  transaction<T>(fn: (tx: Tx) => Promise<T>, options?: TransactionOptions): Promise<T>;
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
  /** After a table name: read it through the named index (both planners otherwise choose worse; see `claims.ts`). */
  useIndex(index: string): string;
}

export const PHRASES: Readonly<Record<Dialect, SqlPhrases>> = {
  sqlite: {
    forUpdate: '',
    forUpdateSkipLocked: '',
    insertIgnore: 'INSERT OR IGNORE',
    nowMs: "CAST(unixepoch('subsec') * 1000 AS INTEGER)",
    useIndex: (index) => ` INDEXED BY ${index}`,
  },
  mysql: {
    forUpdate: ' FOR UPDATE',
    forUpdateSkipLocked: ' FOR UPDATE SKIP LOCKED',
    insertIgnore: 'INSERT IGNORE',
    nowMs: 'CAST(UNIX_TIMESTAMP(NOW(3)) * 1000 AS SIGNED)',
    useIndex: (index) => ` FORCE INDEX (${index})`,
  },
};

/**
 * `<column> IN ('PENDING', 'LEASED', 'EXPIRED')`: the one SQL form of the rule that every delivery
 * state but ACKED counts as pending (`PENDING_STATES`, spec/rules.md#s2-17). A list of constants,
 * so that a query on an index with `state` in it reads index ranges.
 */
export function pendingState(column: string): string {
  return `${column} IN (${PENDING_STATES.map((state) => `'${state}'`).join(', ')})`;
}

/** The integer column that `certifiedLock` moves and moves back, per table it is used on. */
const BOUNCE_COLUMN = { namespaces: 'created_at', subscriptions: 'updated_at' } as const;

/**
 * Makes rows that the transaction locked (`SELECT … FOR UPDATE`) part of what it writes, when the
 * database is a Galera cluster; elsewhere it does nothing, the lock already suffices. Galera
 * certifies a transaction only against the rows it changes: two transactions on different nodes
 * that lock the same row, check something under the lock and write elsewhere both commit. Moving an
 * integer column of each row by one and back puts the row into the write set (a statement that
 * changes nothing would not) while every row ends as it was, so of two such transactions one fails
 * certification and runs again, and then sees the other's write.
 */
export async function certifiedLock(tx: Sql, table: keyof typeof BOUNCE_COLUMN, ids: readonly string[]): Promise<void> {
  if (!tx.galera || ids.length === 0) return;
  const column = BOUNCE_COLUMN[table];
  const where = `id IN (${ids.map(() => '?').join(', ')})`;
  await tx.run(`UPDATE ${table} SET ${column} = ${column} + 1 WHERE ${where}`, ids);
  await tx.run(`UPDATE ${table} SET ${column} = ${column} - 1 WHERE ${where}`, ids);
}

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
  if (url.startsWith('mysql://')) {
    try {
      const parsed = new URL(url);
      if (parsed.password) parsed.password = '***';
      return parsed.toString();
    } catch {
      // Not a URL: masked by its shape below.
    }
  }
  // Any `scheme://user:password@…` (an unparsable or unsupported URL still names the user's text):
  // everything between `user:` and the last `@` goes.
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/[^:/@]*:).*@/i, '$1***@');
}

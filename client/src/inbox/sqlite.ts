/**
 * @module
 * `SqliteInbox`: the Inbox on an embedded SQLite database (better-sqlite3). One connection, so
 * transactions are serialized: a handler that awaits inside its transaction holds every other Inbox
 * operation until it commits. Handlers should use the `tx` handle synchronously (better-sqlite3 is
 * synchronous) and finish quickly (spec/rules.md#s6-9: persist first, do slow work later through a
 * local Outbox).
 */
import Database from 'better-sqlite3';
import { invalidArgument } from '../errors.ts';
import { checkEpoch, checkEventId, checkPendingAck, checkScope, rowToPendingAck, tableNames, type TableNames } from './common.ts';
import type { Inbox, InboxOutcome, InboxTransactionOptions, PendingAck } from './types.ts';

export interface SqliteInboxOptions {
  /** Path of the database file (created if missing). Give either `path` or `database`. */
  readonly path?: string;
  /** An open better-sqlite3 database, shared with the application; `close()` leaves it open. */
  readonly database?: Database.Database;
  /** Receiver scope (default `"default"`). */
  readonly scope?: string;
  /** Table name prefix (default `orbit_`: tables `orbit_inbox` and `orbit_pending_acks`). */
  readonly tablePrefix?: string;
}

/** The DDL `SqliteInbox` runs at start (idempotent). */
export function sqliteInboxDdl(tables: TableNames = tableNames(undefined)): string[] {
  return [
    `CREATE TABLE IF NOT EXISTS ${tables.inbox} (
  scope TEXT NOT NULL,
  event_id TEXT NOT NULL,
  subscription_id TEXT,
  delivery_id TEXT,
  sequence TEXT,
  event_type TEXT,
  handled_at TEXT NOT NULL,
  PRIMARY KEY (scope, event_id)
) WITHOUT ROWID`,
    `CREATE TABLE IF NOT EXISTS ${tables.pendingAcks} (
  scope TEXT NOT NULL,
  delivery_id TEXT NOT NULL,
  subscription_id TEXT NOT NULL,
  event_id TEXT NOT NULL,
  epoch TEXT NOT NULL,
  lease_secret TEXT NOT NULL,
  saved_at TEXT NOT NULL,
  PRIMARY KEY (scope, delivery_id)
) WITHOUT ROWID`,
  ];
}

const NOW = `strftime('%Y-%m-%dT%H:%M:%fZ', 'now')`;
/** `excluded.epoch > epoch` for canonical uint64 texts: longer is larger, equal lengths compare as text. */
const NEWER = `(length(excluded.epoch) > length(epoch) OR (length(excluded.epoch) = length(epoch) AND excluded.epoch > epoch))`;

export class SqliteInbox implements Inbox<Database.Database> {
  readonly scope: string;
  readonly tables: TableNames;
  readonly database: Database.Database;
  readonly #owned: boolean;
  /** Serializes every operation on the one connection. */
  #queue: Promise<unknown> = Promise.resolve();
  #closed = false;
  readonly #statements: {
    insertEntry: Database.Statement;
    hasEntry: Database.Statement;
    upsertAck: Database.Statement;
    deleteAck: Database.Statement;
    listAcks: Database.Statement;
    listAcksOf: Database.Statement;
  };

  constructor(options: SqliteInboxOptions) {
    if ((options.path === undefined) === (options.database === undefined))
      throw invalidArgument('give SqliteInbox either path or database');
    this.scope = checkScope(options.scope);
    this.tables = tableNames(options.tablePrefix);
    this.#owned = options.database === undefined;
    this.database = options.database ?? new Database(options.path!);
    if (this.#owned) {
      this.database.pragma('journal_mode = WAL');
      // FULL: a commit is on disk before the ACK is sent, even across a power loss.
      this.database.pragma('synchronous = FULL');
      this.database.pragma('busy_timeout = 5000');
    }
    for (const ddl of sqliteInboxDdl(this.tables)) this.database.exec(ddl);
    const { inbox, pendingAcks } = this.tables;
    this.#statements = {
      insertEntry: this.database.prepare(
        `INSERT INTO ${inbox} (scope, event_id, subscription_id, delivery_id, sequence, event_type, handled_at) VALUES (?, ?, ?, ?, ?, ?, ${NOW}) ON CONFLICT (scope, event_id) DO NOTHING`,
      ),
      hasEntry: this.database.prepare(`SELECT 1 FROM ${inbox} WHERE scope = ? AND event_id = ?`),
      upsertAck: this.database.prepare(
        `INSERT INTO ${pendingAcks} (scope, delivery_id, subscription_id, event_id, epoch, lease_secret, saved_at) VALUES (?, ?, ?, ?, ?, ?, ${NOW})
         ON CONFLICT (scope, delivery_id) DO UPDATE SET subscription_id = excluded.subscription_id, event_id = excluded.event_id, epoch = excluded.epoch,
           lease_secret = excluded.lease_secret, saved_at = excluded.saved_at WHERE ${NEWER}`,
      ),
      deleteAck: this.database.prepare(`DELETE FROM ${pendingAcks} WHERE scope = ? AND delivery_id = ? AND epoch = ?`),
      listAcks: this.database.prepare(`SELECT * FROM ${pendingAcks} WHERE scope = ? ORDER BY saved_at, delivery_id`),
      listAcksOf: this.database.prepare(
        `SELECT * FROM ${pendingAcks} WHERE scope = ? AND subscription_id = ? ORDER BY saved_at, delivery_id`,
      ),
    };
  }

  /** Same as the constructor, for symmetry with `MysqlInbox.open`. */
  static async open(options: SqliteInboxOptions): Promise<SqliteInbox> {
    return new SqliteInbox(options);
  }

  #exclusive<T>(work: () => T | Promise<T>): Promise<T> {
    if (this.#closed) return Promise.reject(new Error('the inbox is closed'));
    const run = this.#queue.then(work, work);
    this.#queue = run.catch(() => {});
    return run;
  }

  transaction<T>(
    eventId: string,
    fn: (tx: Database.Database) => T | Promise<T>,
    options: InboxTransactionOptions = {},
  ): Promise<InboxOutcome<T>> {
    checkEventId(eventId);
    const ack = options.pendingAck === undefined ? undefined : checkPendingAck(options.pendingAck);
    const entry = options.entry ?? {};
    return this.#exclusive(async () => {
      const db = this.database;
      db.exec('BEGIN IMMEDIATE');
      try {
        const fresh =
          this.#statements.insertEntry.run(
            this.scope,
            eventId,
            entry.subscription_id ?? null,
            entry.delivery_id ?? null,
            entry.sequence ?? null,
            entry.event_type ?? null,
          ).changes === 1;
        let outcome: InboxOutcome<T> = { duplicate: true };
        if (fresh) outcome = { duplicate: false, value: await fn(db) };
        if (ack) this.#upsert(ack);
        db.exec('COMMIT');
        return outcome;
      } catch (error) {
        if (db.inTransaction) db.exec('ROLLBACK');
        throw error;
      }
    });
  }

  #upsert(ack: PendingAck): void {
    this.#statements.upsertAck.run(this.scope, ack.delivery_id, ack.subscription_id, ack.event_id, ack.epoch, ack.lease_secret);
  }

  has(eventId: string): Promise<boolean> {
    checkEventId(eventId);
    return this.#exclusive(() => this.#statements.hasEntry.get(this.scope, eventId) !== undefined);
  }

  savePendingAck(ack: PendingAck): Promise<void> {
    checkPendingAck(ack);
    return this.#exclusive(() => this.#upsert(ack));
  }

  deletePendingAck(deliveryId: string, epoch: string): Promise<void> {
    checkEpoch(deliveryId, epoch);
    return this.#exclusive(() => {
      this.#statements.deleteAck.run(this.scope, deliveryId, epoch);
    });
  }

  pendingAcks(subscriptionId?: string): Promise<PendingAck[]> {
    return this.#exclusive(() => {
      const rows = (
        subscriptionId === undefined
          ? this.#statements.listAcks.all(this.scope)
          : this.#statements.listAcksOf.all(this.scope, subscriptionId)
      ) as Record<string, unknown>[];
      return rows.map(rowToPendingAck);
    });
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    await this.#exclusive(() => {});
    this.#closed = true;
    if (this.#owned) this.database.close();
  }
}

/**
 * @module
 * `MysqlInbox`: the Inbox on MySQL or MariaDB (mysql2, InnoDB). Each transaction takes its own
 * pooled connection, so handlers of different events run in parallel; two transactions for the
 * same event serialize on the inbox row's unique key (the second waits, then sees the duplicate).
 */
import mysql from 'mysql2/promise';
import type { Pool, PoolConnection, PoolOptions } from 'mysql2/promise';
import { invalidArgument } from '../errors.ts';
import { checkEpoch, checkEventId, checkPendingAck, checkScope, rowToPendingAck, tableNames, type TableNames } from './common.ts';
import type { Inbox, InboxOutcome, InboxTransactionOptions, PendingAck } from './types.ts';

export interface MysqlInboxOptions {
  /** `mysql://user:pass@host:port/database`. Give either `uri` or `pool`. */
  readonly uri?: string;
  /** A pool shared with the application; `close()` leaves it open. */
  readonly pool?: Pool;
  /** Extra pool settings when the Inbox creates the pool from `uri`. */
  readonly poolOptions?: Omit<PoolOptions, 'uri'>;
  readonly scope?: string;
  /** Table name prefix (default `orbit_`: tables `orbit_inbox` and `orbit_pending_acks`). */
  readonly tablePrefix?: string;
}

/** The DDL `MysqlInbox.open` runs (idempotent). */
export function mysqlInboxDdl(tables: TableNames = tableNames(undefined)): string[] {
  const ascii = 'CHARACTER SET ascii COLLATE ascii_bin';
  return [
    `CREATE TABLE IF NOT EXISTS \`${tables.inbox}\` (
  \`scope\` VARCHAR(128) ${ascii} NOT NULL,
  \`event_id\` CHAR(32) ${ascii} NOT NULL,
  \`subscription_id\` CHAR(32) ${ascii} NULL,
  \`delivery_id\` CHAR(32) ${ascii} NULL,
  \`sequence\` DECIMAL(20,0) NULL,
  \`event_type\` VARCHAR(32) ${ascii} NULL,
  \`handled_at\` DATETIME(3) NOT NULL,
  PRIMARY KEY (\`scope\`, \`event_id\`)
) ENGINE=InnoDB`,
    `CREATE TABLE IF NOT EXISTS \`${tables.pendingAcks}\` (
  \`scope\` VARCHAR(128) ${ascii} NOT NULL,
  \`delivery_id\` CHAR(32) ${ascii} NOT NULL,
  \`subscription_id\` CHAR(32) ${ascii} NOT NULL,
  \`event_id\` CHAR(32) ${ascii} NOT NULL,
  \`epoch\` DECIMAL(20,0) NOT NULL,
  \`lease_secret\` CHAR(43) ${ascii} NOT NULL,
  \`saved_at\` DATETIME(3) NOT NULL,
  PRIMARY KEY (\`scope\`, \`delivery_id\`),
  KEY \`${tables.pendingAcks}_by_subscription\` (\`scope\`, \`subscription_id\`)
) ENGINE=InnoDB`,
  ];
}

const ER_DUP_ENTRY = 1062;

export class MysqlInbox implements Inbox<PoolConnection> {
  readonly scope: string;
  readonly tables: TableNames;
  readonly pool: Pool;
  readonly #owned: boolean;
  #closed = false;

  private constructor(pool: Pool, owned: boolean, scope: string, tables: TableNames) {
    this.pool = pool;
    this.#owned = owned;
    this.scope = scope;
    this.tables = tables;
  }

  /** Connects (or adopts `pool`) and creates the tables if missing. */
  static async open(options: MysqlInboxOptions): Promise<MysqlInbox> {
    if ((options.uri === undefined) === (options.pool === undefined)) throw invalidArgument('give MysqlInbox either uri or pool');
    const scope = checkScope(options.scope);
    const tables = tableNames(options.tablePrefix);
    const pool = options.pool ?? mysql.createPool({ uri: options.uri!, connectionLimit: 8, ...(options.poolOptions ?? {}) });
    const inbox = new MysqlInbox(pool, options.pool === undefined, scope, tables);
    try {
      for (const ddl of mysqlInboxDdl(tables)) await pool.query(ddl);
    } catch (error) {
      if (inbox.#owned) await pool.end().catch(() => {});
      throw error;
    }
    return inbox;
  }

  #check(): void {
    if (this.#closed) throw new Error('the inbox is closed');
  }

  async transaction<T>(
    eventId: string,
    fn: (tx: PoolConnection) => T | Promise<T>,
    options: InboxTransactionOptions = {},
  ): Promise<InboxOutcome<T>> {
    this.#check();
    checkEventId(eventId);
    const ack = options.pendingAck === undefined ? undefined : checkPendingAck(options.pendingAck);
    const entry = options.entry ?? {};
    const conn = await this.pool.getConnection();
    let healthy = true;
    try {
      await conn.beginTransaction();
      let fresh = true;
      try {
        await conn.execute(
          `INSERT INTO \`${this.tables.inbox}\` (scope, event_id, subscription_id, delivery_id, sequence, event_type, handled_at) VALUES (?, ?, ?, ?, ?, ?, UTC_TIMESTAMP(3))`,
          [this.scope, eventId, entry.subscription_id ?? null, entry.delivery_id ?? null, entry.sequence ?? null, entry.event_type ?? null],
        );
      } catch (error) {
        // A duplicate key fails only this statement; the transaction goes on (InnoDB).
        if ((error as { errno?: number }).errno !== ER_DUP_ENTRY) throw error;
        fresh = false;
      }
      let outcome: InboxOutcome<T> = { duplicate: true };
      if (fresh) outcome = { duplicate: false, value: await fn(conn) };
      if (ack) await this.#upsert(conn, ack);
      await conn.commit();
      return outcome;
    } catch (error) {
      try {
        await conn.rollback();
      } catch {
        healthy = false;
      }
      throw error;
    } finally {
      if (healthy) conn.release();
      else conn.destroy();
    }
  }

  async #upsert(db: Pick<Pool, 'execute'>, ack: PendingAck): Promise<void> {
    // Only a newer epoch replaces a stored proof; assignments run left to right, epoch last.
    await db.execute(
      `INSERT INTO \`${this.tables.pendingAcks}\` (scope, delivery_id, subscription_id, event_id, epoch, lease_secret, saved_at)
       VALUES (?, ?, ?, ?, ?, ?, UTC_TIMESTAMP(3))
       ON DUPLICATE KEY UPDATE
         subscription_id = IF(VALUES(epoch) > epoch, VALUES(subscription_id), subscription_id),
         event_id = IF(VALUES(epoch) > epoch, VALUES(event_id), event_id),
         lease_secret = IF(VALUES(epoch) > epoch, VALUES(lease_secret), lease_secret),
         saved_at = IF(VALUES(epoch) > epoch, VALUES(saved_at), saved_at),
         epoch = GREATEST(epoch, VALUES(epoch))`,
      [this.scope, ack.delivery_id, ack.subscription_id, ack.event_id, ack.epoch, ack.lease_secret],
    );
  }

  async has(eventId: string): Promise<boolean> {
    this.#check();
    checkEventId(eventId);
    const [rows] = await this.pool.execute(`SELECT 1 FROM \`${this.tables.inbox}\` WHERE scope = ? AND event_id = ?`, [
      this.scope,
      eventId,
    ]);
    return (rows as unknown[]).length > 0;
  }

  async savePendingAck(ack: PendingAck): Promise<void> {
    this.#check();
    checkPendingAck(ack);
    await this.#upsert(this.pool, ack);
  }

  async deletePendingAck(deliveryId: string, epoch: string): Promise<void> {
    this.#check();
    checkEpoch(deliveryId, epoch);
    await this.pool.execute(`DELETE FROM \`${this.tables.pendingAcks}\` WHERE scope = ? AND delivery_id = ? AND epoch = ?`, [
      this.scope,
      deliveryId,
      epoch,
    ]);
  }

  async pendingAcks(subscriptionId?: string): Promise<PendingAck[]> {
    this.#check();
    const where = subscriptionId === undefined ? 'scope = ?' : 'scope = ? AND subscription_id = ?';
    const params = subscriptionId === undefined ? [this.scope] : [this.scope, subscriptionId];
    const [rows] = await this.pool.execute(
      `SELECT subscription_id, delivery_id, event_id, CAST(epoch AS CHAR) AS epoch, lease_secret FROM \`${this.tables.pendingAcks}\` WHERE ${where} ORDER BY saved_at, delivery_id`,
      params,
    );
    return (rows as Record<string, unknown>[]).map(rowToPendingAck);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#owned) await this.pool.end();
  }
}

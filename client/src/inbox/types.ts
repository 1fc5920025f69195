/**
 * @module
 * The Inbox: the receiver's own durable record of the events it has handled, and of the ACK proofs
 * it has not seen answered yet (spec/rules.md#s6-7: "use event.id as the Inbox unique key in a
 * local transaction; ACK only after the reliable save or the business transaction").
 *
 * An Inbox implementation keeps two tables in the receiver's database:
 *
 * - the inbox: one row per handled event, unique on `(scope, event_id)`; the row is written in
 *   the same local transaction as the handler's own writes, so "the effect happened" and "the
 *   event is recorded" commit or roll back together;
 * - the pending ACKs: the latest proof `(delivery_id, epoch, lease_secret)` of each delivery
 *   whose ACK has not been answered, so that it survives a crash and is re-reported, unchanged,
 *   on the next connection.
 *
 * `SqliteInbox` (better-sqlite3) and `MysqlInbox` (mysql2) implement it; any database with
 * transactions and a unique key can (see docs/sdk.md for the contract an implementation must keep).
 */
import type { AckProof } from '../events.ts';

/** A proof waiting for the server's answer, with what it belongs to. */
export interface PendingAck extends AckProof {
  readonly subscription_id: string;
  readonly event_id: string;
}

/** Optional metadata recorded with the inbox row (useful for audits; not used for deduplication). */
export interface InboxEntry {
  readonly subscription_id?: string;
  readonly delivery_id?: string;
  readonly sequence?: string;
  readonly event_type?: string;
}

export interface InboxTransactionOptions {
  readonly entry?: InboxEntry;
  /**
   * A proof to store in the same transaction (whether or not the event was new), replacing a
   * stored proof of the same delivery only when its epoch is newer.
   */
  readonly pendingAck?: PendingAck;
}

/** What `transaction` did: ran `fn` and recorded the event, or found it already recorded and skipped `fn`. */
export type InboxOutcome<T> = { readonly duplicate: false; readonly value: T } | { readonly duplicate: true };

// #region docs (docs/sdk.md shows this interface)
/**
 * The durable receiver record. `Tx` is the handle of the open local transaction that `fn` gets
 * (a better-sqlite3 `Database`, a mysql2 `PoolConnection`, ...): do the business writes through it.
 */
export interface Inbox<Tx = unknown> {
  /** Separates independent receivers sharing the tables; each scope handles every event once. */
  readonly scope: string;

  /**
   * In ONE local transaction: records `eventId` (unique per scope); if it was new, runs `fn(tx)`;
   * stores `options.pendingAck` if given; commits. If the event was already recorded, `fn` is not
   * called and the outcome is `{duplicate: true}`. If `fn` (or anything else) throws, everything
   * is rolled back, nothing is recorded, and the error is rethrown. Two transactions for the same
   * event never both run `fn`: the second waits for the first and then sees the duplicate.
   */
  transaction<T>(eventId: string, fn: (tx: Tx) => T | Promise<T>, options?: InboxTransactionOptions): Promise<InboxOutcome<T>>;

  /** Whether the event is recorded (committed) in this scope. */
  has(eventId: string): Promise<boolean>;

  /** Stores a proof durably (newest epoch per delivery wins) before its ACK is sent. */
  savePendingAck(ack: PendingAck): Promise<void>;

  /** Forgets the proof of `deliveryId` with exactly this `epoch` (a newer stored proof is kept). */
  deletePendingAck(deliveryId: string, epoch: string): Promise<void>;

  /** The stored proofs, oldest first, optionally of one subscription. */
  pendingAcks(subscriptionId?: string): Promise<PendingAck[]>;

  /** Releases what the Inbox opened itself (a handle passed in by the caller stays open). */
  close(): Promise<void>;
}
// #endregion docs

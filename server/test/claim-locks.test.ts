/**
 * What a claim locks on MySQL (MariaDB): only the subscription row. Holding that lock, the claim
 * reads the log head, the lease ends and its sessions' capacity in one more statement; if those
 * reads took locks, every publish and every ACK would wait for claims. Two stores (two pools) on one database, the claim's statement
 * held open in one of them.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimContext } from '../src/store/claims.ts';
import { PHRASES } from '../src/store/sql.ts';
import { SUBSCRIPTION_SELECT } from '../src/store/records.ts';
import { Store } from '../src/store/store.ts';
import { freshDatabase, type TestDatabase } from '@orbit/testing';

const hex32 = (): string => randomBytes(16).toString('hex');

/** Resolves with `work`, or rejects when it takes longer than `ms` (a lock wait). */
function within<T>(ms: number, work: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>(
    (_, reject) => (timer = setTimeout(() => reject(new Error(`${what} waited more than ${ms} ms: a claim locks it`)), ms)),
  );
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

describe('a claim on mysql', () => {
  let database: TestDatabase;
  let claimer: Store;
  let other: Store;

  beforeAll(async () => {
    database = await freshDatabase('mysql');
    claimer = await Store.open(database.url);
    other = await Store.open(database.url);
  });
  afterAll(async () => {
    await claimer?.close();
    await other?.close();
    await database?.drop();
  });

  it('locks the subscription row only: appends, lease updates and other subscriptions go on', async () => {
    const subscriptionId = hex32();
    const leasedId = hex32();
    const now = Date.now();
    await other.db.run(
      "INSERT INTO subscriptions (id, namespace_id, application_id, credential_id, queue_id, name, active_name, revision, enabled, types, cursor_sequence, max_pending, max_attempts, created_at, updated_at) VALUES (?, ?, ?, ?, ?, 'locks', 'locks', 1, 1, 'task.failed', 0, 100, 20, ?, ?)",
      [subscriptionId, hex32(), hex32(), hex32(), hex32(), now, now],
    );
    await other.db.run(
      "INSERT INTO deliveries (id, subscription_id, sequence, event_id, revision, state, created_at, available_at, lease_epoch, lease_until, attempts, attempt_budget) VALUES (?, ?, 1, ?, 1, 'LEASED', ?, ?, 1, ?, 1, 20)",
      [leasedId, subscriptionId, hex32(), now, now, now + 60_000],
    );

    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let locked!: () => void;
    const lockTaken = new Promise<void>((resolve) => (locked = resolve));
    const claim = claimer.db.transaction(async (tx) => {
      await tx.all(`SELECT ${SUBSCRIPTION_SELECT} FROM subscriptions WHERE id = ? FOR UPDATE`, [subscriptionId]);
      const [row] = await tx.all(claimContext(PHRASES.mysql, 1), [subscriptionId, subscriptionId, subscriptionId, hex32()]);
      expect(row?.next_expiry).toBeDefined();
      locked();
      await held;
    });
    await lockTaken;
    try {
      await within(
        8000,
        other.appendResults([{ queueId: hex32(), type: 'task.failed', taskId: hex32(), taskRevision: '1' }]),
        'an append (result_head)',
      );
      await within(
        8000,
        other.db.run("UPDATE deliveries SET state = 'ACKED', acknowledged_at = ? WHERE id = ?", [Date.now(), leasedId]),
        'an ACK (the LEASED delivery)',
      );
      // The subscription row itself is locked: a second claim waits (and this test can see a lock).
      await expect(
        within(
          1000,
          other.db.run('UPDATE subscriptions SET cursor_sequence = cursor_sequence WHERE id = ?', [subscriptionId]),
          'the subscription row',
        ),
      ).rejects.toThrow(/a claim locks it/);
    } finally {
      release();
      await claim;
    }
  });
});

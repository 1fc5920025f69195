/**
 * What a turn of the delivery engine locks on MySQL (MariaDB): only the subscription row. Holding
 * that lock, the turn reads the log head, its sessions' rows, the deliveries its ACKs name, what it
 * may lease and the leases that may have ended, in the same round trip; if those reads took locks,
 * every publish would wait for turns, and so would other subscriptions and the node's heartbeat.
 * Two stores (two pools) on one database, the turn's first round trip held open in one of them.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Store } from '../src/store/store.ts';
import { deliveriesById, leasedByEnd, lockSubscription, logResults, turnContext, waitingBySequence } from '../src/store/turns.ts';
import { freshDatabase, type TestDatabase } from '@orbit/testing';

const hex32 = (): string => randomBytes(16).toString('hex');

/** Resolves with `work`, or rejects when it takes longer than `ms` (a lock wait). */
function within<T>(ms: number, work: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>(
    (_, reject) => (timer = setTimeout(() => reject(new Error(`${what} waited more than ${ms} ms: a turn locks it`)), ms)),
  );
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

describe('a turn on mysql', () => {
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

  it('locks the subscription row only: appends, sessions, other subscriptions and deliveries go on', async () => {
    const subscriptionId = hex32();
    const otherSubscription = hex32();
    const queueId = hex32();
    const leasedId = hex32();
    const sessionId = hex32();
    const now = Date.now();
    for (const id of [subscriptionId, otherSubscription])
      await other.db.run(
        "INSERT INTO subscriptions (id, namespace_id, application_id, credential_id, queue_id, name, active_name, revision, enabled, types, cursor_sequence, max_pending, max_attempts, created_at, updated_at) VALUES (?, ?, ?, ?, ?, 'locks', ?, 1, 1, 'task.failed', 0, 100, 20, ?, ?)",
        [id, hex32(), hex32(), hex32(), queueId, id, now, now],
      );
    await other.db.run(
      "INSERT INTO deliveries (id, subscription_id, sequence, event_id, revision, state, created_at, available_at, lease_epoch, lease_until, attempts, attempt_budget) VALUES (?, ?, 1, ?, 1, 'LEASED', ?, ?, 1, ?, 1, 20)",
      [leasedId, subscriptionId, hex32(), now, now, now + 60_000],
    );
    await other.db.run(
      'INSERT INTO sessions (id, node_id, subscription_id, credential_id, capacity, connected_at, last_seen_at) VALUES (?, ?, ?, ?, 4, ?, ?)',
      [sessionId, hex32(), subscriptionId, hex32(), now, now],
    );

    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let locked!: () => void;
    const lockTaken = new Promise<void>((resolve) => (locked = resolve));
    const turn = claimer.db.transaction(async (tx) => {
      const [subscription, context] = await tx.batch([
        lockSubscription(tx, subscriptionId),
        turnContext(tx, subscriptionId, [sessionId]),
        deliveriesById([leasedId]),
        logResults({ subscriptionId, queueId, types: ['task.failed'], from: 0n, limit: 32 }),
        waitingBySequence(tx, subscriptionId, 33),
        leasedByEnd(tx, subscriptionId, 65),
      ]);
      expect(subscription).toHaveLength(1);
      expect(context[0]?.session_id).toBe(sessionId);
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
        other.db.run('UPDATE deliveries SET revision = revision + 1 WHERE id = ?', [leasedId]),
        'a write of the LEASED delivery',
      );
      await within(
        8000,
        other.db.run('UPDATE sessions SET last_seen_at = ? WHERE id = ?', [Date.now(), sessionId]),
        'a heartbeat (the session row)',
      );
      await within(
        8000,
        other.db.run('UPDATE subscriptions SET updated_at = ? WHERE id = ?', [Date.now(), otherSubscription]),
        'another subscription',
      );
      // The subscription row itself is locked: a second turn waits (and this test can see a lock).
      await expect(
        within(
          1000,
          other.db.run('UPDATE subscriptions SET cursor_sequence = cursor_sequence WHERE id = ?', [subscriptionId]),
          'the subscription row',
        ),
      ).rejects.toThrow(/a turn locks it/);
    } finally {
      release();
      await turn;
    }
  });
});

/**
 * A node cut off from MariaDB in the middle of a transaction leaves its rows locked only briefly
 * (store/mysql.ts, `IDLE_TRANSACTION_TIMEOUT_S`): MariaDB ends a transaction of Orbit's that sits
 * idle, so another node's turn or publish takes the rows it held instead of waiting on them until
 * its lock wait times out, again and again. The cut node is played by a transaction that stops
 * talking while it holds the log's head.
 */
import { describe, expect, it } from 'vitest';
import { IDLE_TRANSACTION_TIMEOUT_S, MysqlDatabase } from '../src/store/mysql.ts';
import { Store } from '../src/store/store.ts';
import { freshDatabase } from '@orbit/testing';

describe('a transaction left idle on MariaDB', () => {
  it('MUST be ended by the server, so that the rows it locked free up for the other nodes', async () => {
    const database = await freshDatabase('mysql');
    const store = await Store.open(database.url);
    const cut = new MysqlDatabase({ url: database.url, idleTransactionTimeoutS: 1 });
    let resume!: () => void;
    const silent = new Promise<void>((resolve) => (resume = resolve));
    let locked!: () => void;
    const holding = new Promise<void>((resolve) => (locked = resolve));
    try {
      const stuck = cut.transaction(
        async (tx) => {
          await tx.all('SELECT head_sequence FROM result_head WHERE id = 1 FOR UPDATE');
          locked();
          await silent;
          await tx.all('SELECT head_sequence FROM result_head WHERE id = 1');
        },
        { retries: 0 },
      );
      await holding;
      // Another node locks the same row, waiting at most 5 s per try and never trying again: it
      // gets the row once the server has ended the silent transaction (after 1 s idle here).
      const head = await store.db.transaction(
        async (tx) => {
          await tx.run('SET SESSION innodb_lock_wait_timeout = 5');
          const [row] = await tx.all('SELECT head_sequence FROM result_head WHERE id = 1 FOR UPDATE');
          return String(row!.head_sequence);
        },
        { retries: 0 },
      );
      expect(head).toBe('0');
      resume();
      // The silent transaction's connection is gone: it fails, and nothing of it committed.
      await expect(stuck).rejects.toThrow();
    } finally {
      resume();
      await cut.close();
      await store.close();
      await database.drop();
    }
  });

  it('MUST NOT end a pooled connection that waits between transactions (autocommit off is no open transaction)', async () => {
    const database = await freshDatabase('mysql');
    const db = new MysqlDatabase({ url: database.url, idleTransactionTimeoutS: 1, connectionLimit: 1 });
    const connection = (options = {}) =>
      db.transaction((tx) => tx.all('SELECT CONNECTION_ID() AS id'), options).then(([row]) => String(row!.id));
    try {
      const first = await connection();
      await new Promise((resolve) => setTimeout(resolve, 2500));
      expect(await connection({ retries: 0 })).toBe(first);
    } finally {
      await db.close();
      await database.drop();
    }
  });

  it('MUST be what a store opened on MariaDB sets for its transactions', async () => {
    const database = await freshDatabase('mysql');
    const store = await Store.open(database.url);
    try {
      const [row] = await store.db.transaction((tx) => tx.all('SELECT @@SESSION.idle_transaction_timeout AS idle'));
      expect(Number(row!.idle)).toBe(IDLE_TRANSACTION_TIMEOUT_S);
    } finally {
      await store.close();
      await database.drop();
    }
  });
});

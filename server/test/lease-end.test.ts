/**
 * A lease that ends before its frame is sent (spec/README.md, "What a connection is sent"): a turn
 * whose commit stalls past the lease (a row lock held here, as a Galera cluster evicting a node
 * holds commits) must not write that `event.deliver`; the lease is recovered and offered again.
 * MySQL only: SQLite has no row lock to stall a commit with.
 */
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, publish as publishAt, startTestServer, subscribe as subscribeAt, type TestServer, TestSocket } from '@orbit/testing';

describe('a lease that ends before its frame is sent (mysql: a row lock stalls the commit)', () => {
  const LEASE_MS = 800;
  let server: TestServer;
  let token: string;
  let queueId: string;
  let sql: mysql.Connection;

  beforeAll(async () => {
    server = await startTestServer('mysql', {
      ORBIT_POLL_INTERVAL_MS: '50',
      ORBIT_LEASE_DURATION_MS: String(LEASE_MS),
      ORBIT_SWEEP_INTERVAL_MS: '100',
    });
    const boot = await server.bootstrap();
    token = boot.token;
    queueId = boot.queue_ids.q!;
    sql = await mysql.createConnection({ uri: server.database.url });
  });
  afterAll(async () => {
    await sql.end();
    await server.stop();
  });

  it('sends no event.deliver whose lease has ended, and offers the delivery again', async () => {
    const sub = await subscribeAt(server.url, token, queueId);
    const s = await TestSocket.open(server.url, token);
    try {
      await s.hello(sub.id, 4);
      // Hold the session's row: the turn that leases the result reads, decides, and then waits for
      // it in its last round trip (the session's held count), past the lease's end.
      await sql.query('START TRANSACTION');
      await sql.query('SELECT id FROM sessions WHERE id = ? FOR UPDATE', [s.sessionId]);
      let held = true;
      try {
        await publishAt(server.url, token, queueId, 1);
        await eventually(
          async () => {
            const [rows] = await sql.query<mysql.RowDataPacket[]>(
              "SELECT COUNT(*) AS n FROM information_schema.processlist WHERE id <> CONNECTION_ID() AND db = DATABASE() AND info LIKE '%UPDATE sessions%'",
            );
            return Number(rows[0]!.n) >= 1;
          },
          10_000,
          'the turn waiting for the session row',
        );
        await new Promise((resolve) => setTimeout(resolve, LEASE_MS + 300));
        await sql.query('COMMIT');
        held = false;
      } finally {
        if (held) await sql.query('ROLLBACK');
      }
      // The first lease committed after its end and was never sent (the first frame the session gets
      // is the next epoch's): the sweep recovered it, and the session got the delivery again.
      const frame = await s.deliver(15_000);
      expect(frame.body.delivery.lease_epoch).toBe('2');
    } finally {
      s.close();
    }
  });
});

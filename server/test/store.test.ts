/**
 * The repository on both stores: migrations, the result log's committed head under concurrent
 * appenders, and appending inside a caller's own transaction.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Store } from '../src/store/store.ts';
import { big } from '../src/store/sql.ts';
import { migrationsFor } from '../src/store/migrations.ts';
import { freshDatabase, STORES, type TestDatabase } from '@orbit/testing';

const TASK = '66666666666666666666666666666666';

describe.each(STORES)('store on %s', (kind) => {
  let database: TestDatabase;
  let store: Store;
  let queueId: string;

  beforeAll(async () => {
    database = await freshDatabase(kind);
    store = await Store.open(database.url);
    const boot = await store.bootstrap({ namespace: 'ns', application: 'app', queues: ['q'], permissions: [] });
    queueId = boot.queue_ids.q!;
  });
  afterAll(async () => {
    await store.close();
    await database.drop();
  });

  it('applies migrations once; reopening applies nothing and keeps the data', async () => {
    const tags = migrationsFor(kind).map((m) => m.tag);
    expect(store.migrations.applied).toEqual(tags);
    await store.appendResults([{ queueId, type: 'task.succeeded', taskId: TASK, taskRevision: '1' }]);
    const again = await Store.open(database.url);
    try {
      expect(again.migrations.applied).toEqual([]);
      expect(again.migrations.current).toBe(tags.at(-1));
      expect((await again.logPosition()).head).toBe((await store.logPosition()).head);
    } finally {
      await again.close();
    }
  });

  it('bootstrap reuses the namespace, application and queues and always mints a new credential', async () => {
    const a = await store.bootstrap({ namespace: 'ns', application: 'app', queues: ['q', 'q2'], permissions: ['events:read'] });
    const b = await store.bootstrap({ namespace: 'ns', application: 'app', queues: ['q'], permissions: ['events:read'] });
    expect(a.namespace_id).toBe(b.namespace_id);
    expect(a.queue_ids.q).toBe(queueId);
    expect(a.credential_id).not.toBe(b.credential_id);
    expect(a.token).not.toBe(b.token);
    const [row] = await store.db.all('SELECT token_digest FROM credentials WHERE id = ?', [a.credential_id]);
    expect(String(row!.token_digest)).not.toContain(a.token);
    expect((await store.authenticate(a.token))?.credentialId).toBe(a.credential_id);
  });

  it('a scanner reading up to the committed head never misses a result while appenders commit late and concurrently', async () => {
    const start = (await store.logPosition()).head;
    const appenders = 12;
    const perAppender = 6;
    let stop = false;
    const violations: string[] = [];
    const scanner = (async () => {
      let scans = 0;
      while (!stop || scans < 3) {
        scans++;
        const { head } = await store.logPosition();
        const rows = await store.db.all('SELECT sequence FROM results WHERE sequence > ? AND sequence <= ? ORDER BY sequence', [
          start.toString(),
          head.toString(),
        ]);
        const expected = Number(head - start);
        if (rows.length !== expected) violations.push(`head ${head}: saw ${rows.length} of ${expected}`);
        rows.forEach((r, i) => {
          if (big(r.sequence) !== start + BigInt(i + 1)) violations.push(`gap before ${big(r.sequence)}`);
        });
        await new Promise((resolve) => setTimeout(resolve, 1));
      }
    })();
    await Promise.all(
      Array.from({ length: appenders }, async (_, a) => {
        for (let i = 0; i < perAppender; i++) {
          await store.db.transaction(async (tx) => {
            await store.appendResultsIn(tx, [{ queueId, type: 'task.failed', taskId: TASK, taskRevision: String(a * 100 + i) }]);
            // Hold the transaction open for a random while: commits land in random order.
            await new Promise((resolve) => setTimeout(resolve, Math.random() * 8));
          });
        }
      }),
    );
    stop = true;
    await scanner;
    expect(violations).toEqual([]);
    const { head } = await store.logPosition();
    expect(head - start).toBe(BigInt(appenders * perAppender));
    const rows = await store.db.all('SELECT COUNT(*) AS n FROM results WHERE sequence > ?', [start.toString()]);
    expect(Number(rows[0]!.n)).toBe(appenders * perAppender);
  });

  it('an append inside the caller’s transaction rolls back with it', async () => {
    const before = await store.logPosition();
    await expect(
      store.db.transaction(async (tx) => {
        await store.appendResultsIn(tx, [{ queueId, type: 'task.cancelled', taskId: TASK, taskRevision: '1' }]);
        throw new Error('caller failed');
      }),
    ).rejects.toThrow('caller failed');
    expect(await store.logPosition()).toEqual(before);
  });

  it('prune moves the boundary, keeps unacknowledged events, and never goes beyond the head', async () => {
    const { head } = await store.logPosition();
    const report = await store.prune(head);
    expect(report.boundary).toBe((head - 1n).toString());
    expect((await store.logPosition()).boundary).toBe(head - 1n);
    await expect(store.prune(head + 2n)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    const [row] = await store.db.all('SELECT COUNT(*) AS n FROM results WHERE sequence < ?', [head.toString()]);
    expect(Number(row!.n)).toBe(0);
  });
});

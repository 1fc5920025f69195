import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SqliteDatabase } from './sqlite.ts';

describe('SQLite group commit', () => {
  let dir: string;
  let db: SqliteDatabase;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'orbit-sqlite-'));
    db = new SqliteDatabase(join(dir, 'test.db'));
    db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)');
  });

  afterEach(async () => {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const count = async (): Promise<number> => Number((await db.all<{ n: bigint }>('SELECT COUNT(*) AS n FROM t'))[0]!.n);

  it('answers each transaction after its group committed, with fewer commits than transactions', async () => {
    const before = db.commits;
    const seen = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        db
          .transaction(async (tx) => {
            await tx.run('INSERT INTO t (id, v) VALUES (?, ?)', [i, `v${i}`]);
            return i;
          })
          // The reader connection sees only committed state: the row is there when the answer comes.
          .then(async (id) => (await db.all('SELECT id FROM t WHERE id = ?', [id])).length),
      ),
    );
    expect(seen).toEqual(Array.from({ length: 40 }, () => 1));
    expect(await count()).toBe(40);
    const commits = db.commits - before;
    expect(commits).toBeGreaterThanOrEqual(2); // at most 32 per group
    expect(commits).toBeLessThan(40);
  });

  it('rolls back a failed transaction alone: the others of its group commit (property)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.boolean(), { minLength: 1, maxLength: 50 }), async (fails) => {
        db.exec('DELETE FROM t');
        const outcomes = await Promise.allSettled(
          fails.map((fail, i) =>
            db.transaction(async (tx) => {
              await tx.run('INSERT INTO t (id, v) VALUES (?, ?)', [i, 'x']);
              // A failure after a write: that write must not survive.
              if (fail) await tx.run('INSERT INTO t (id, v) VALUES (?, ?)', [i, 'duplicate']);
              return i;
            }),
          ),
        );
        const committed = (await db.all<{ id: bigint }>('SELECT id FROM t ORDER BY id')).map((r) => Number(r.id));
        expect(committed).toEqual(fails.flatMap((fail, i) => (fail ? [] : [i])));
        expect(outcomes.map((o) => o.status)).toEqual(fails.map((fail) => (fail ? 'rejected' : 'fulfilled')));
      }),
      { numRuns: 30 },
    );
  });

  it('fails every transaction of a group whose COMMIT fails, and keeps none of their writes', async () => {
    db.exec('CREATE TABLE parent (id INTEGER PRIMARY KEY)');
    db.exec('CREATE TABLE child (id INTEGER PRIMARY KEY, parent INTEGER REFERENCES parent (id) DEFERRABLE INITIALLY DEFERRED)');
    // A deferred foreign key is checked at COMMIT: the second transaction makes the group's COMMIT fail.
    const first = db.transaction((tx) => tx.run('INSERT INTO t (id, v) VALUES (1, ?)', ['kept?']));
    const second = db.transaction((tx) => tx.run('INSERT INTO child (id, parent) VALUES (1, 99)'));
    const results = await Promise.allSettled([first, second]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect(await count()).toBe(0);
    // The store goes on: the next transaction commits.
    await db.transaction((tx) => tx.run('INSERT INTO t (id, v) VALUES (2, ?)', ['after']));
    expect(await count()).toBe(1);
  });

  it('lets asked-for transactions finish on close and refuses new ones', async () => {
    const pending = db.transaction((tx) => tx.run('INSERT INTO t (id, v) VALUES (7, ?)', ['last']));
    const closing = db.close();
    await expect(db.transaction((tx) => tx.run('SELECT 1'))).rejects.toThrow('closed');
    await pending;
    await closing;
    db = new SqliteDatabase(join(dir, 'test.db'));
    expect(await count()).toBe(1);
  });
});

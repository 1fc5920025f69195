import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import BetterSqlite3 from 'better-sqlite3';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { command, isUniqueViolation, query } from './sql.ts';
import { SqliteDatabase } from './sqlite.ts';

describe('SQLite group commit', () => {
  let dir: string;
  let db: SqliteDatabase;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'orbit-sqlite-'));
    db = new SqliteDatabase(join(dir, 'test.db'));
    await db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)');
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
        await db.exec('DELETE FROM t');
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
    await db.exec('CREATE TABLE parent (id INTEGER PRIMARY KEY)');
    await db.exec('CREATE TABLE child (id INTEGER PRIMARY KEY, parent INTEGER REFERENCES parent (id) DEFERRABLE INITIALLY DEFERRED)');
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

describe('SQLite writer thread', () => {
  let dir: string;
  let db: SqliteDatabase;
  let path: string;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'orbit-sqlite-'));
    path = join(dir, 'test.db');
    db = new SqliteDatabase(path);
    await db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL, n INTEGER)');
  });

  afterEach(async () => {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const ids = async (): Promise<number[]> => (await db.all<{ id: bigint }>('SELECT id FROM t ORDER BY id')).map((r) => Number(r.id));

  it('keeps the SQLite error code (and class) across the thread, for batches, finish and COMMIT', async () => {
    await db.transaction((tx) => tx.run('INSERT INTO t (id, v) VALUES (1, ?)', ['a']));
    const inBatch = await db.transaction((tx) => tx.run('INSERT INTO t (id, v) VALUES (1, ?)', ['b'])).catch((e: unknown) => e);
    expect(isUniqueViolation(inBatch)).toBe(true);
    expect(inBatch).toBeInstanceOf(BetterSqlite3.SqliteError);
    expect(inBatch).toMatchObject({ code: 'SQLITE_CONSTRAINT_PRIMARYKEY', message: expect.stringContaining('UNIQUE constraint failed') });
    const inFinish = await db
      .transaction((tx) => tx.finish([command('INSERT INTO t (id, v) VALUES (1, ?)', ['c'])]))
      .catch((e: unknown) => e);
    expect(isUniqueViolation(inFinish)).toBe(true);
    const notNull = await db.transaction((tx) => tx.batch([command('INSERT INTO t (id, v) VALUES (2, NULL)')])).catch((e: unknown) => e);
    expect(notNull).toMatchObject({ code: 'SQLITE_CONSTRAINT_NOTNULL' });
    const syntax = await db.transaction((tx) => tx.all('SELEC 1')).catch((e: unknown) => e);
    expect(syntax).toMatchObject({ code: 'SQLITE_ERROR' });
    await expect(db.exec('CREATE TABLE t (x)')).rejects.toMatchObject({ code: 'SQLITE_ERROR' });
    expect(await ids()).toEqual([1]);
  });

  it('carries 64-bit integers both ways as bigints, and booleans as 0/1', async () => {
    const big = 2n ** 62n + 12345n;
    const [rows] = await db.transaction(async (tx) => {
      await tx.run('INSERT INTO t (id, v, n) VALUES (?, ?, ?)', [1, 'x', big]);
      await tx.batch([command('INSERT INTO t (id, v, n) VALUES (?, ?, ?)', [2, 'y', true])]);
      return tx.finish([query('SELECT id, n FROM t ORDER BY id')]);
    });
    expect(rows).toEqual([
      { id: 1n, n: big },
      { id: 2n, n: 1n },
    ]);
    // The reader on this thread agrees.
    expect(await db.all('SELECT n FROM t WHERE n = ?', [big])).toEqual([{ n: big }]);
  });

  it('answers a batch statement by statement: rows for a query, changed rows for a command', async () => {
    const answers = await db.transaction((tx) =>
      tx.batch([
        command('INSERT INTO t (id, v) VALUES (1, ?), (2, ?)', ['a', 'b']),
        command('UPDATE t SET v = ? WHERE id > 0', ['c']),
        query('SELECT COUNT(*) AS n FROM t'),
      ]),
    );
    expect(answers).toEqual([{ changes: 2 }, { changes: 2 }, [{ n: 2n }]]);
    // A batch of reads outside a transaction goes to the reader.
    expect(await db.batch([query('SELECT v FROM t WHERE id = 1'), query('SELECT 7 AS seven')])).toEqual([[{ v: 'c' }], [{ seven: 7n }]]);
  });

  it('lets a transaction go on after a failed statement it caught, but fails one whose finish failed', async () => {
    const caught = await db.transaction(async (tx) => {
      await tx.run('INSERT INTO t (id, v) VALUES (1, ?)', ['kept']);
      const error = await tx.run('INSERT INTO t (id, v) VALUES (1, ?)', ['dup']).catch((e: unknown) => e);
      await tx.finish([command('INSERT INTO t (id, v) VALUES (2, ?)', ['kept too'])]);
      return isUniqueViolation(error);
    });
    expect(caught).toBe(true);
    const swallowed = db.transaction(async (tx) => {
      await tx.run('INSERT INTO t (id, v) VALUES (3, ?)', ['undone']);
      await tx.finish([command('INSERT INTO t (id, v) VALUES (1, ?)', ['dup'])]).catch(() => undefined);
      return 'ignored the failure';
    });
    await expect(swallowed).rejects.toMatchObject({ code: 'SQLITE_CONSTRAINT_PRIMARYKEY' });
    await expect(db.transaction((tx) => tx.finish([]).then(() => tx.run('SELECT 1')))).rejects.toThrow('finished');
    expect(await ids()).toEqual([1, 2]);
  });

  it('keeps the writes of a transaction whose finish succeeded when fn throws afterwards (as on MySQL)', async () => {
    const late = db.transaction(async (tx) => {
      await tx.finish([command('INSERT INTO t (id, v) VALUES (1, ?)', ['committed'])]);
      throw new Error('after the finish');
    });
    await expect(late).rejects.toThrow('after the finish');
    expect(await ids()).toEqual([1]);
  });

  it('starts the next transaction once one has called finish, and answers in order after the COMMIT', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const order: string[] = [];
    const first = db.transaction(async (tx) => {
      await tx.run('INSERT INTO t (id, v) VALUES (1, ?)', ['first']);
      await tx.finish([]);
      await gate; // still running after its finish
      return 'first';
    });
    const second = db.transaction(async (tx) => {
      await tx.run('INSERT INTO t (id, v) VALUES (2, ?)', ['second']);
      release();
      return 'second';
    });
    first.then((v) => order.push(v));
    second.then((v) => order.push(v));
    expect(await Promise.all([first, second])).toEqual(['first', 'second']);
    expect(order).toEqual(['first', 'second']);
    expect(await ids()).toEqual([1, 2]);
  });

  it('runs no statement of a lost group outside its transaction, even one already sent', async () => {
    await db.exec('CREATE TABLE parent (id INTEGER PRIMARY KEY)');
    await db.exec('CREATE TABLE child (id INTEGER PRIMARY KEY, parent INTEGER REFERENCES parent (id) DEFERRABLE INITIALLY DEFERRED)');
    const before = db.commits;
    // Three transactions in one group; the deferred foreign key fails the group's COMMIT.
    const results = await Promise.allSettled([
      db.transaction((tx) => tx.finish([command('INSERT INTO t (id, v) VALUES (1, ?)', ['a'])])),
      db.transaction((tx) => tx.finish([command('INSERT INTO child (id, parent) VALUES (1, 99)')])),
      db.transaction(async (tx) => {
        await tx.run('INSERT INTO t (id, v) VALUES (3, ?)', ['c']);
        return 'third';
      }),
    ]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected', 'rejected']);
    expect(results[0]).toMatchObject({ reason: { code: 'SQLITE_CONSTRAINT_FOREIGNKEY' } });
    expect(db.commits).toBe(before);
    expect(await ids()).toEqual([]);
    // The writer is not left in a transaction: the next one commits on its own.
    await db.transaction((tx) => tx.run('INSERT INTO t (id, v) VALUES (4, ?)', ['after']));
    expect(await ids()).toEqual([4]);
  });

  it('fails the transaction whose BEGIN finds the database locked by another process, and goes on', async () => {
    const other = new BetterSqlite3(path);
    other.exec('BEGIN IMMEDIATE');
    const blocked = db.transaction((tx) => tx.run('INSERT INTO t (id, v) VALUES (1, ?)', ['blocked']));
    await expect(blocked).rejects.toMatchObject({ code: 'SQLITE_BUSY' });
    other.exec('ROLLBACK');
    other.close();
    await db.transaction((tx) => tx.run('INSERT INTO t (id, v) VALUES (2, ?)', ['after']));
    expect(await ids()).toEqual([2]);
  }, 20_000);

  it('finishes the queued transactions on close, then ends the thread', async () => {
    const queued = Array.from({ length: 50 }, (_, i) =>
      db.transaction(async (tx) => {
        await tx.batch([command('INSERT INTO t (id, v) VALUES (?, ?)', [i, 'queued'])]);
        await tx.all('SELECT id FROM t WHERE id = ?', [i]);
        return tx.finish([command('UPDATE t SET n = ? WHERE id = ?', [i, i])]);
      }),
    );
    const closing = db.close();
    await expect(db.transaction(async () => 'late')).rejects.toThrow('closed');
    await Promise.all(queued);
    await closing;
    await expect(db.all('SELECT 1')).rejects.toThrow();
    db = new SqliteDatabase(path);
    expect(await ids()).toEqual(Array.from({ length: 50 }, (_, i) => i));
  });

  it('lets the process exit, closed or not', () => {
    const source = fileURLToPath(new URL('./sqlite.ts', import.meta.url));
    const script = (close: boolean) => `
      import { SqliteDatabase } from ${JSON.stringify(source)};
      const db = new SqliteDatabase(${JSON.stringify(join(dir, 'exit.db'))});
      await db.exec('CREATE TABLE IF NOT EXISTS e (id INTEGER PRIMARY KEY)');
      await db.transaction((tx) => tx.run('INSERT INTO e DEFAULT VALUES'));
      ${close ? 'await db.close();' : ''}
      console.log('done');`;
    for (const close of [true, false]) {
      const file = join(dir, `exit-${close}.mts`);
      writeFileSync(file, script(close));
      const child = spawnSync(process.execPath, ['--import', 'tsx', file], { encoding: 'utf8', timeout: 20_000 });
      expect({ status: child.status, stdout: child.stdout.trim(), stderr: child.stderr }).toEqual({
        status: 0,
        stdout: 'done',
        stderr: '',
      });
    }
  }, 60_000);

  it('serves an in-memory database from its one connection in the worker', async () => {
    const memory = new SqliteDatabase(':memory:');
    try {
      await memory.exec('CREATE TABLE m (id INTEGER PRIMARY KEY)');
      await Promise.all([1, 2, 3].map((id) => memory.transaction((tx) => tx.finish([command('INSERT INTO m (id) VALUES (?)', [id])]))));
      expect(await memory.all('SELECT id FROM m ORDER BY id')).toEqual([{ id: 1n }, { id: 2n }, { id: 3n }]);
      expect(await memory.batch([query('SELECT COUNT(*) AS n FROM m')])).toEqual([[{ n: 3n }]]);
      await expect(memory.all('SELECT nope FROM m')).rejects.toMatchObject({ code: 'SQLITE_ERROR' });
    } finally {
      await memory.close();
    }
  });

  it('fails the constructor for a path that cannot be opened', () => {
    expect(() => new SqliteDatabase(join(dir, 'missing', 'dir', 'x.db'))).toThrow(/directory does not exist/);
  });
});

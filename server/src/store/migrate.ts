/**
 * @module
 * Applies the migrations in `schema.ts` that a database has not seen yet. Safe to run from several
 * nodes at once: MySQL serializes runners with a named lock, SQLite with its write lock.
 */
import { MIGRATIONS } from './schema.ts';
import type { Database, Sql } from './sql.ts';

const LOCK_NAME = 'orbit_migrations';

export interface MigrationReport {
  readonly applied: number[];
  readonly current: number;
}

async function ensureTable(db: Sql): Promise<void> {
  const int = db.dialect === 'mysql' ? 'INT' : 'INTEGER';
  const big = db.dialect === 'mysql' ? 'BIGINT' : 'INTEGER';
  const str = db.dialect === 'mysql' ? 'VARCHAR(128)' : 'TEXT';
  await db.run(`CREATE TABLE IF NOT EXISTS orbit_migrations (version ${int} NOT NULL PRIMARY KEY, name ${str} NOT NULL, applied_at ${big} NOT NULL)`);
}

export async function appliedVersions(db: Sql): Promise<Set<number>> {
  await ensureTable(db);
  const rows = await db.all<{ version: unknown }>('SELECT version FROM orbit_migrations');
  return new Set(rows.map((r) => Number(r.version)));
}

export async function migrate(db: Database): Promise<MigrationReport> {
  if (db.dialect === 'mysql') {
    // DDL commits implicitly in MySQL, so a named lock (not a transaction) keeps runners apart.
    return db.transaction(async (tx) => {
      const [lock] = await tx.all<{ got: unknown }>('SELECT GET_LOCK(?, 60) AS got', [LOCK_NAME]);
      if (Number(lock?.got) !== 1) throw new Error('could not take the migration lock within 60 s');
      try {
        return await applyPending(tx);
      } finally {
        await tx.all('SELECT RELEASE_LOCK(?)', [LOCK_NAME]);
      }
    });
  }
  return db.transaction((tx) => applyPending(tx));
}

async function applyPending(tx: Sql): Promise<MigrationReport> {
  const done = await appliedVersions(tx);
  const applied: number[] = [];
  for (const migration of MIGRATIONS) {
    if (done.has(migration.version)) continue;
    for (const statement of migration.statements[tx.dialect]) await tx.run(statement);
    await tx.run('INSERT INTO orbit_migrations (version, name, applied_at) VALUES (?, ?, ?)', [migration.version, migration.name, Date.now()]);
    applied.push(migration.version);
  }
  const current = Math.max(0, ...done, ...applied);
  return { applied, current };
}

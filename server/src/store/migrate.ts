/**
 * @module
 * Applies the drizzle-kit migrations (`migrations.ts`) that a database has not recorded in
 * `orbit_migrations`, and adopts databases created by the hand-written migrations before drizzle.
 * Safe to run from several nodes at once: MySQL serializes runners with a named lock, SQLite runs
 * them in one write transaction.
 */
import { migrationsFor, pendingMigrations } from './migrations.ts';
import type { Database, Sql } from './sql.ts';

const LOCK_NAME = 'orbit_migrations';

/**
 * What the runner before drizzle recorded (versions 1–3), and the drizzle migrations that build the
 * same schema. The drizzle chain repeats that history step by step, so a database adopted at any
 * step goes on with the next, and nodes of the older release (which check version numbers only)
 * still find 1–3 recorded and stay ready through a rolling upgrade.
 */
const LEGACY: ReadonlyMap<string, readonly string[]> = new Map([
  ['initial', ['0000_initial', '0001_result_head']],
  ['operations_indexes', ['0002_operations_indexes']],
  ['claim_index', ['0003_claim_index']],
]);

export interface MigrationReport {
  /** Tags of the migrations this run applied, in order. */
  readonly applied: string[];
  /** Whether this run rewrote the records of a database from before drizzle. */
  readonly adopted: boolean;
  /** The tag of the newest recorded migration. */
  readonly current: string;
}

interface Recorded {
  readonly version: number;
  readonly name: string;
  readonly appliedAt: unknown;
}

async function ensureTable(db: Sql): Promise<void> {
  const int = db.dialect === 'mysql' ? 'INT' : 'INTEGER';
  const big = db.dialect === 'mysql' ? 'BIGINT' : 'INTEGER';
  const str = db.dialect === 'mysql' ? 'VARCHAR(128)' : 'TEXT';
  await db.run(
    `CREATE TABLE IF NOT EXISTS orbit_migrations (version ${int} NOT NULL PRIMARY KEY, name ${str} NOT NULL, applied_at ${big} NOT NULL)`,
  );
}

async function recorded(db: Sql): Promise<Recorded[]> {
  await ensureTable(db);
  const rows = await db.all('SELECT version, name, applied_at FROM orbit_migrations ORDER BY version');
  return rows.map((r) => ({ version: Number(r.version), name: String(r.name), appliedAt: r.applied_at }));
}

async function record(db: Sql, row: Recorded): Promise<void> {
  await db.run('INSERT INTO orbit_migrations (version, name, applied_at) VALUES (?, ?, ?)', [row.version, row.name, row.appliedAt]);
}

export async function migrate(db: Database): Promise<MigrationReport> {
  if (db.dialect === 'mysql') {
    // DDL commits implicitly in MySQL, so a named lock (not a transaction) keeps runners apart.
    return db.transaction(async (tx) => {
      const [lock] = await tx.all<{ got: unknown }>('SELECT GET_LOCK(?, 60) AS got', [LOCK_NAME]);
      if (Number(lock?.got) !== 1) throw new Error('could not take the migration lock within 60 s');
      try {
        // drizzle-kit writes no table options; the tables were always InnoDB, whatever the default.
        await tx.run('SET SESSION default_storage_engine = InnoDB');
        return await applyPending(tx);
      } finally {
        await tx.all('SELECT RELEASE_LOCK(?)', [LOCK_NAME]);
      }
    });
  }
  return db.transaction((tx) => applyPending(tx));
}

async function applyPending(tx: Sql): Promise<MigrationReport> {
  let done = await recorded(tx);
  const adopted = done.some((row) => LEGACY.has(row.name));
  if (adopted) done = await adopt(tx, done);
  const names = new Map(done.map((row) => [row.version, row.name]));
  for (const migration of migrationsFor(tx.dialect)) {
    const name = names.get(migration.version);
    // Another build's migration under our number: skipping ours would silently lose its changes.
    if (name !== undefined && name !== migration.tag)
      throw new Error(
        `orbit_migrations records version ${migration.version} as ${name}, but this build's migration ${migration.version} is ${migration.tag}`,
      );
  }
  const applied: string[] = [];
  for (const migration of pendingMigrations(tx.dialect, new Set(names.keys()))) {
    for (const statement of migration.statements) await tx.run(statement);
    await record(tx, { version: migration.version, name: migration.tag, appliedAt: Date.now() });
    names.set(migration.version, migration.tag);
    applied.push(migration.tag);
  }
  return { applied, adopted, current: names.get(Math.max(...names.keys())) ?? '' };
}

/**
 * The old chain built exactly what the drizzle migrations it maps to build (`test/migrate.test.ts`
 * compares them), so adopting a database only replaces its records and runs no DDL. Each new record
 * keeps the time its legacy migration was applied.
 */
async function adopt(tx: Sql, done: Recorded[]): Promise<Recorded[]> {
  const versions = new Map(migrationsFor(tx.dialect).map((m) => [m.tag, m.version]));
  const replacing = done.flatMap((row) =>
    (LEGACY.get(row.name) ?? []).map((tag) => ({ version: versions.get(tag)!, name: tag, appliedAt: row.appliedAt })),
  );
  const legacy = [...LEGACY.keys()];
  await tx.run(`DELETE FROM orbit_migrations WHERE name IN (${legacy.map(() => '?').join(', ')})`, legacy);
  for (const row of replacing) await record(tx, row);
  return [...done.filter((row) => !LEGACY.has(row.name)), ...replacing];
}

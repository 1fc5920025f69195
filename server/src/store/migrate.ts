/**
 * @module
 * Applies the drizzle-kit migrations (`migrations.ts`) that a database has not recorded in
 * `orbit_migrations`, and adopts databases created by the hand-written migrations before drizzle.
 * Safe to run from several nodes at once: MySQL serializes runners with a named lock, SQLite runs
 * them in one write transaction. A named lock holds only on the Galera node that granted it, so on
 * Galera runners take a lock row instead (`orbit_migration_lock`, see `withLockRow`).
 */
import { newId } from '../crypto.ts';
import { migrationsFor, pendingMigrations } from './migrations.ts';
import { isUniqueViolation, num, type Database, type Sql } from './sql.ts';

const LOCK_NAME = 'orbit_migrations';
/** How long a runner waits for another one to finish. */
const LOCK_WAIT_MS = 60_000;
/** A lock row not renewed for this long belongs to a runner that died: the next one takes it over. */
const LOCK_ROW_TTL_MS = 30_000;

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
  // MySQL commits each DDL statement as it runs, and a transaction that loses a conflict is run
  // again from its start (`mysql.ts`): the attempt after it skips the statements an earlier one ran.
  // On Galera a CREATE DATABASE replicated from a node starting at the same moment is enough to
  // abort the runner's open transaction; run again whole, it failed on "Table … already exists".
  const ran = new Map<number, number>();
  if (db.galera)
    return withLockRow(db, () =>
      db.transaction(async (tx) => {
        await tx.run('SET SESSION default_storage_engine = InnoDB');
        return applyPending(tx, ran);
      }),
    );
  if (db.dialect === 'mysql') {
    // DDL commits implicitly in MySQL, so a named lock (not a transaction) keeps runners apart.
    return db.transaction(async (tx) => {
      const [lock] = await tx.all<{ got: unknown }>('SELECT GET_LOCK(?, 60) AS got', [LOCK_NAME]);
      if (Number(lock?.got) !== 1) throw new Error('could not take the migration lock within 60 s');
      try {
        // drizzle-kit writes no table options; the tables were always InnoDB, whatever the default.
        await tx.run('SET SESSION default_storage_engine = InnoDB');
        return await applyPending(tx, ran);
      } finally {
        await tx.all('SELECT RELEASE_LOCK(?)', [LOCK_NAME]);
      }
    });
  }
  return db.transaction((tx) => applyPending(tx));
}

/**
 * Runs `fn` while holding the lock row. Taking it is a transaction that inserts the row, or takes
 * over one whose holder stopped renewing it; either way the decision rests on a row the transaction
 * changes, so when two nodes decide at once Galera's certification lets one commit and aborts the
 * other (which retries and finds the row taken). The holder renews the row while `fn` runs and
 * deletes it at the end; a runner killed meanwhile leaves a row that expires after LOCK_ROW_TTL_MS.
 * DDL on Galera runs in total order on every node (TOI), so the migrations themselves need nothing else.
 */
async function withLockRow<T>(db: Database, fn: () => Promise<T>): Promise<T> {
  await db.run(
    'CREATE TABLE IF NOT EXISTS orbit_migration_lock (name VARCHAR(64) NOT NULL PRIMARY KEY, holder CHAR(32) NOT NULL, expires_at BIGINT NOT NULL) ENGINE = InnoDB',
  );
  const holder = newId();
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    const taken = await db
      .transaction(async (tx) => {
        const now = Date.now();
        const [row] = await tx.all('SELECT expires_at FROM orbit_migration_lock WHERE name = ? FOR UPDATE', [LOCK_NAME]);
        if (!row) {
          await tx.run('INSERT INTO orbit_migration_lock (name, holder, expires_at) VALUES (?, ?, ?)', [
            LOCK_NAME,
            holder,
            now + LOCK_ROW_TTL_MS,
          ]);
          return true;
        }
        if (num(row.expires_at) > now) return false;
        await tx.run('UPDATE orbit_migration_lock SET holder = ?, expires_at = ? WHERE name = ?', [
          holder,
          now + LOCK_ROW_TTL_MS,
          LOCK_NAME,
        ]);
        return true;
      })
      // Another node's row arrived between our read and our insert: it holds the lock.
      .catch((error: unknown) => {
        if (isUniqueViolation(error)) return false;
        throw error;
      });
    if (taken) break;
    if (Date.now() > deadline) throw new Error(`could not take the migration lock row within ${LOCK_WAIT_MS / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 100 + Math.random() * 200));
  }
  const renew = setInterval(() => {
    db.run('UPDATE orbit_migration_lock SET expires_at = ? WHERE name = ? AND holder = ?', [
      Date.now() + LOCK_ROW_TTL_MS,
      LOCK_NAME,
      holder,
    ]).catch(() => undefined);
  }, LOCK_ROW_TTL_MS / 6);
  try {
    return await fn();
  } finally {
    clearInterval(renew);
    await db.run('DELETE FROM orbit_migration_lock WHERE name = ? AND holder = ?', [LOCK_NAME, holder]);
  }
}

/**
 * Applies what is not recorded. `ran` (MySQL) counts, per migration version, the statements that
 * earlier attempts of this runner committed: they are not run again. SQLite's DDL is transactional
 * and rolls back with its attempt, so it passes none and its migrations commit as one.
 */
async function applyPending(tx: Sql, ran?: Map<number, number>): Promise<MigrationReport> {
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
    const committed = ran?.get(migration.version) ?? 0;
    for (const [i, statement] of migration.statements.entries()) {
      if (i < committed) continue;
      await tx.run(statement);
      if (ran === undefined) continue;
      // Committed at once, so that what `ran` counts is what the database holds: DDL commits by
      // itself, a data statement only with the next COMMIT.
      await tx.run('COMMIT');
      ran.set(migration.version, i + 1);
    }
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

/**
 * The migration runner on both stores (real MariaDB): a fresh database gets drizzle-kit's whole
 * chain, runners that start together apply it once, and a database built by the hand-written
 * migrations before drizzle (`fixtures/pre-drizzle-schema.ts`) is adopted without running DDL: its
 * schema already equals what the drizzle chain builds, and it keeps its data.
 */
import { getTableConfig as mysqlTableConfig } from 'drizzle-orm/mysql-core';
import { getTableConfig as sqliteTableConfig } from 'drizzle-orm/sqlite-core';
import { afterEach, describe, expect, it } from 'vitest';
import { migrationsFor } from '../src/store/migrations.ts';
import { openDatabase } from '../src/store/open.ts';
import { migrate } from '../src/store/migrate.ts';
import type { Database, Row, TransactionOptions, Tx } from '../src/store/sql.ts';
import { Store } from '../src/store/store.ts';
import * as mysqlTables from '../src/store/tables/mysql.ts';
import * as sqliteTables from '../src/store/tables/sqlite.ts';
import { ORBIT_MIGRATIONS, PRE_DRIZZLE } from './fixtures/pre-drizzle-schema.ts';
import { freshDatabase, type StoreKind, STORES, type TestDatabase } from '@orbit/testing';
import { migrateTogether } from './migrate-together.ts';

const NAMESPACE = '77777777777777777777777777777777';

/** Runs `fn` on the raw database at `url` (no migrations) and closes it. */
async function withDatabase<T>(url: string, fn: (db: Database) => Promise<T>): Promise<T> {
  const db = await openDatabase(url);
  try {
    return await fn(db);
  } finally {
    await db.close();
  }
}

/** What the pre-drizzle runner left after its first `steps` migrations, with one namespace in it. */
async function legacyDatabase(kind: StoreKind, steps = PRE_DRIZZLE.length): Promise<TestDatabase> {
  const database = await freshDatabase(kind);
  await withDatabase(database.url, async (db) => {
    await db.run(ORBIT_MIGRATIONS[kind]);
    for (const migration of PRE_DRIZZLE.slice(0, steps)) {
      for (const statement of migration.statements[kind]) await db.run(statement);
      await db.run('INSERT INTO orbit_migrations (version, name, applied_at) VALUES (?, ?, ?)', [
        migration.version,
        migration.name,
        1000 + migration.version,
      ]);
    }
    await db.run("INSERT INTO namespaces (id, name, created_at) VALUES (?, 'legacy', 5)", [NAMESPACE]);
    await db.run('UPDATE result_head SET head_sequence = 41, retention_boundary = 40 WHERE id = 1');
  });
  return database;
}

/**
 * Everything about the tables that a migration or a query can notice, in a comparable form. MySQL:
 * the `SHOW CREATE TABLE` text and information_schema's columns and index entries. SQLite: the
 * pragmas. drizzle-kit writes SQLite UNIQUE constraints as named unique indexes, where the old DDL
 * made them table constraints (automatic indexes, which cannot be named), so on SQLite a UNIQUE is
 * compared by its columns; every other index is compared by name.
 */
async function schemaOf(db: Database): Promise<Row> {
  if (db.dialect === 'mysql') {
    const tables = await db.all(
      "SELECT TABLE_NAME AS name, ENGINE, TABLE_COLLATION FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME <> 'orbit_migrations' ORDER BY TABLE_NAME",
    );
    const where = "TABLE_SCHEMA = DATABASE() AND TABLE_NAME <> 'orbit_migrations'";
    return {
      tables,
      create: await Promise.all(tables.map(async (t) => (await db.all(`SHOW CREATE TABLE \`${String(t.name)}\``))[0]!['Create Table'])),
      columns: await db.all(
        `SELECT TABLE_NAME, ORDINAL_POSITION, COLUMN_NAME, COLUMN_TYPE, IS_NULLABLE, COLUMN_DEFAULT, CHARACTER_SET_NAME, COLLATION_NAME, COLUMN_KEY, EXTRA FROM information_schema.COLUMNS WHERE ${where} ORDER BY TABLE_NAME, ORDINAL_POSITION`,
      ),
      indexes: await db.all(
        `SELECT TABLE_NAME, INDEX_NAME, SEQ_IN_INDEX, COLUMN_NAME, NON_UNIQUE, COLLATION, SUB_PART, INDEX_TYPE FROM information_schema.STATISTICS WHERE ${where} ORDER BY TABLE_NAME, INDEX_NAME, SEQ_IN_INDEX`,
      ),
    };
  }
  const tables = await db.all(
    "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name <> 'orbit_migrations' ORDER BY name",
  );
  const shape: Row = {};
  for (const { name } of tables) {
    const indexes = [];
    for (const index of await db.all('SELECT name, "unique", origin, partial FROM pragma_index_list(?)', [name])) {
      const columns = await db.all('SELECT name, "desc", coll FROM pragma_index_xinfo(?) WHERE "key" = 1 ORDER BY seqno', [index.name]);
      const kind = index.origin === 'pk' ? 'PRIMARY KEY' : Number(index.unique) === 1 ? 'UNIQUE' : `INDEX ${String(index.name)}`;
      indexes.push({ kind, partial: index.partial, columns });
    }
    const order = (i: { kind: string; columns: Row[] }) => `${i.kind} ${i.columns.map((c) => String(c.name)).join()}`;
    indexes.sort((a, b) => order(a).localeCompare(order(b)));
    shape[String(name)] = {
      table: await db.all('SELECT type, ncol, wr, strict FROM pragma_table_list(?)', [name]),
      columns: await db.all('SELECT cid, name, type, "notnull", dflt_value, pk FROM pragma_table_info(?)', [name]),
      indexes,
    };
  }
  return shape;
}

/** The table and column names the drizzle definitions declare for `kind`. */
function declared(kind: StoreKind): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  const tables = kind === 'mysql' ? Object.values(mysqlTables).map(mysqlTableConfig) : Object.values(sqliteTables).map(sqliteTableConfig);
  for (const table of tables) out[table.name] = table.columns.map((c) => c.name);
  return out;
}

/** The drizzle migrations that repeat the pre-drizzle chain (versions 1–4); later ones are new. */
const LEGACY_EQUIVALENT = 4;

/** Runs the drizzle chain's statements up to `version` on a raw database, as the runner would. */
async function buildUpTo(url: string, kind: StoreKind, version: number): Promise<void> {
  await withDatabase(url, async (db) => {
    if (kind === 'mysql') await db.run('SET SESSION default_storage_engine = InnoDB');
    for (const migration of migrationsFor(kind).filter((m) => m.version <= version)) {
      for (const statement of migration.statements) await db.run(statement);
    }
  });
}

describe.each(STORES)('migrations on %s', (kind) => {
  const tags = migrationsFor(kind).map((m) => m.tag);
  /** The tags an adopted database still has to apply. */
  const newer = tags.slice(LEGACY_EQUIVALENT);
  const databases: TestDatabase[] = [];
  const fresh = async () => {
    databases.push(await freshDatabase(kind));
    return databases.at(-1)!;
  };
  const legacy = async (steps?: number) => {
    databases.push(await legacyDatabase(kind, steps));
    return databases.at(-1)!;
  };
  const recorded = (db: Database) => db.all('SELECT version, name, applied_at FROM orbit_migrations ORDER BY version');

  afterEach(async () => {
    for (const database of databases.splice(0)) await database.drop();
  });

  it('a fresh database gets every table the drizzle definitions declare, and the result_head row', async () => {
    const database = await fresh();
    const store = await Store.open(database.url);
    try {
      expect(store.migrations).toEqual({ applied: tags, adopted: false, current: tags.at(-1) });
      const columns: Record<string, string[]> = {};
      const rows =
        kind === 'mysql'
          ? await store.db.all(
              "SELECT TABLE_NAME AS t, COLUMN_NAME AS c FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME <> 'orbit_migrations' ORDER BY TABLE_NAME, ORDINAL_POSITION",
            )
          : await store.db.all(
              "SELECT m.name AS t, p.name AS c FROM sqlite_master m, pragma_table_info(m.name) p WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%' AND m.name <> 'orbit_migrations' ORDER BY m.name, p.cid",
            );
      for (const row of rows) {
        columns[String(row.t)] ??= [];
        columns[String(row.t)]!.push(String(row.c));
      }
      expect(columns).toEqual(declared(kind));
      const head = await store.db.all('SELECT id, head_sequence, retention_boundary FROM result_head');
      expect(head.map((r) => [Number(r.id), Number(r.head_sequence), Number(r.retention_boundary)])).toEqual([[1, 0, 0]]);
      expect((await recorded(store.db)).map((r) => [Number(r.version), r.name])).toEqual(tags.map((tag, i) => [i + 1, tag]));
    } finally {
      await store.close();
    }
  });

  it('`orbit migrate` processes started together on one database apply the chain once and all succeed', async () => {
    const database = await fresh();
    await migrateTogether([database.url, database.url, database.url], kind);
    await withDatabase(database.url, async (db) => {
      expect(await recorded(db)).toHaveLength(tags.length);
      expect(await db.all('SELECT id FROM result_head')).toHaveLength(1);
    });
  });

  it('the drizzle chain up to 0003 builds exactly the schema the pre-drizzle migrations built', async () => {
    const [built, old] = [await fresh(), await legacy()];
    expect(tags[LEGACY_EQUIVALENT - 1]).toBe('0003_claim_index');
    await buildUpTo(built.url, kind, LEGACY_EQUIVALENT);
    const drizzle = await withDatabase(built.url, schemaOf);
    const handWritten = await withDatabase(old.url, schemaOf);
    expect(kind === 'mysql' ? (drizzle.tables as Row[]).length : Object.keys(drizzle).length).toBe(12);
    expect(drizzle).toEqual(handWritten);
  });

  it('adopts a pre-drizzle database: rewrites its records, runs no DDL for them, applies what is newer, keeps its data', async () => {
    const database = await legacy();
    await withDatabase(database.url, (db) => db.run("INSERT INTO orbit_meta (name, value) VALUES ('cursor_secret', 'kept')"));
    const complete = await fresh();
    await (await Store.open(complete.url)).close();
    const store = await Store.open(database.url);
    try {
      expect(store.migrations).toEqual({ applied: newer, adopted: true, current: tags.at(-1) });
      // Each adopted migration keeps the time its pre-drizzle counterpart was applied.
      const records = (await recorded(store.db)).map((r) => [Number(r.version), r.name, Number(r.applied_at)]);
      expect(records.slice(0, LEGACY_EQUIVALENT)).toEqual([
        [1, '0000_initial', 1001],
        [2, '0001_result_head', 1001],
        [3, '0002_operations_indexes', 1002],
        [4, '0003_claim_index', 1003],
      ]);
      expect(records.slice(LEGACY_EQUIVALENT).map(([version, name]) => [version, name])).toEqual(
        newer.map((tag, i) => [LEGACY_EQUIVALENT + i + 1, tag]),
      );
      expect(await store.db.all('SELECT name FROM namespaces WHERE id = ?', [NAMESPACE])).toEqual([{ name: 'legacy' }]);
      expect(await store.logPosition()).toEqual({ head: 41n, boundary: 40n });
      expect(String((await store.db.all("SELECT value FROM orbit_meta WHERE name = 'cursor_secret'"))[0]!.value)).toBe('kept');
      expect(await schemaOf(store.db)).toEqual(await withDatabase(complete.url, schemaOf));
    } finally {
      await store.close();
    }
    const again = await Store.open(database.url);
    try {
      expect(again.migrations).toEqual({ applied: [], adopted: false, current: tags.at(-1) });
      expect(await again.db.all('SELECT name FROM namespaces WHERE id = ?', [NAMESPACE])).toEqual([{ name: 'legacy' }]);
    } finally {
      await again.close();
    }
  });

  it('adopts a database the pre-drizzle chain left part way, then applies the rest', async () => {
    const database = await legacy(2);
    const store = await Store.open(database.url);
    try {
      expect(store.migrations).toEqual({ applied: ['0003_claim_index', ...newer], adopted: true, current: tags.at(-1) });
      expect(await store.db.all('SELECT name FROM namespaces WHERE id = ?', [NAMESPACE])).toEqual([{ name: 'legacy' }]);
    } finally {
      await store.close();
    }
    const complete = await fresh();
    await (await Store.open(complete.url)).close();
    expect(await withDatabase(database.url, schemaOf)).toEqual(await withDatabase(complete.url, schemaOf));
  });

  it('refuses to start when a recorded version names another migration than this build’s', async () => {
    const database = await fresh();
    await (await Store.open(database.url)).close();
    await withDatabase(database.url, (db) => db.run("UPDATE orbit_migrations SET name = '0001_from_another_branch' WHERE version = 2"));
    await expect(Store.open(database.url)).rejects.toThrow(/records version 2 as 0001_from_another_branch.*0001_result_head/);
  });
});

describe('migrations on mysql, when a conflict aborts the runner part way', () => {
  /**
   * The database, with its transactions' 5th statement failing once as a lost conflict (errno 1213)
   * instead of running: what a Galera node does to the runner's open transaction when a CREATE
   * DATABASE replicated from another node starting at the same moment aborts it.
   */
  function conflictOnce(db: Database): Database & { conflicted: boolean } {
    let statements = 0;
    const wrapped = {
      conflicted: false,
      dialect: db.dialect,
      phrases: db.phrases,
      galera: db.galera,
      description: db.description,
      all: <T extends Row = Row>(sql: string, params?: readonly unknown[]) => db.all<T>(sql, params),
      run: (sql: string, params?: readonly unknown[]) => db.run(sql, params),
      batch: db.batch.bind(db),
      close: () => db.close(),
      transaction: <T>(fn: (tx: Tx) => Promise<T>, options?: TransactionOptions) =>
        db.transaction(
          (tx) =>
            fn({
              dialect: tx.dialect,
              phrases: tx.phrases,
              galera: tx.galera,
              all: <R extends Row = Row>(sql: string, params?: readonly unknown[]) => tx.all<R>(sql, params),
              batch: tx.batch.bind(tx),
              finish: tx.finish.bind(tx),
              async run(sql: string, params?: readonly unknown[]) {
                if (++statements === 5 && !wrapped.conflicted) {
                  wrapped.conflicted = true;
                  throw Object.assign(new Error('Deadlock found when trying to get lock; try restarting transaction'), { errno: 1213 });
                }
                return tx.run(sql, params);
              },
            }),
          options,
        ),
    };
    return wrapped;
  }

  it('runs the transaction again without the statements that committed: the chain is applied and recorded once', async () => {
    const tags = migrationsFor('mysql').map((m) => m.tag);
    const database = await freshDatabase('mysql');
    try {
      await withDatabase(database.url, async (db) => {
        const faulty = conflictOnce(db);
        const report = await migrate(faulty);
        expect(faulty.conflicted).toBe(true);
        expect(report).toEqual({ applied: tags, adopted: false, current: tags.at(-1) });
        const rows = await db.all('SELECT name FROM orbit_migrations ORDER BY version');
        expect(rows.map((r) => r.name)).toEqual(tags);
        expect(await db.all('SELECT id FROM result_head')).toHaveLength(1);
      });
    } finally {
      await database.drop();
    }
  });
});

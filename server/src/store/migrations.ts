/**
 * @module
 * The migrations this build knows: what drizzle-kit wrote under `server/migrations/<dialect>/` from
 * the tables in `tables/`, read once per dialect. A migration's version is its journal index + 1;
 * its tag (`0003_claim_index`) is the name `orbit_migrations` records.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readMigrationFiles } from 'drizzle-orm/migrator';
import type { Dialect } from './sql.ts';

export interface Migration {
  readonly version: number;
  readonly tag: string;
  /** The statements between drizzle-kit's breakpoints, in order. */
  readonly statements: readonly string[];
}

const loaded = new Map<Dialect, readonly Migration[]>();

export function migrationsFor(dialect: Dialect): readonly Migration[] {
  let migrations = loaded.get(dialect);
  if (!migrations) {
    // Relative to this file, so the folder is found wherever the package is installed.
    const folder = fileURLToPath(new URL(`../../migrations/${dialect}`, import.meta.url));
    const journal = JSON.parse(readFileSync(join(folder, 'meta', '_journal.json'), 'utf8')) as { entries: { tag: string }[] };
    // readMigrationFiles returns one entry per journal entry, in journal order; it has no tags.
    const files = readMigrationFiles({ migrationsFolder: folder });
    migrations = journal.entries.map((entry, index) => ({
      version: index + 1,
      tag: entry.tag,
      statements: files[index]!.sql.filter((statement) => statement.trim() !== ''),
    }));
    loaded.set(dialect, migrations);
  }
  return migrations;
}

/** The migrations that `recorded` (versions in `orbit_migrations`) lacks, in order. */
export function pendingMigrations(dialect: Dialect, recorded: ReadonlySet<number>): Migration[] {
  return migrationsFor(dialect).filter((m) => !recorded.has(m.version));
}

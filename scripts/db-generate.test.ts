/**
 * scripts/db-generate.ts: the drift check agrees with the committed migrations and catches tables
 * that no migration holds. It works on temporary copies; server/migrations/ is only read.
 */
import { cp, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { DIALECTS, migrationDrift } from './db-generate.ts';

const migrations = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'server', 'migrations');
const work = await mkdtemp(path.join(tmpdir(), 'orbit-db-generate-'));

afterAll(() => rm(work, { recursive: true, force: true }));

/**
 * A copy of `dialect`'s migrations without the newest one that changed the schema (and any data
 * migrations after it), as if it had never been generated.
 */
async function withoutNewest(dialect: (typeof DIALECTS)[number]): Promise<string> {
  const copy = path.join(work, dialect);
  await cp(path.join(migrations, dialect), copy, { recursive: true });
  const journalFile = path.join(copy, 'meta', '_journal.json');
  const journal = JSON.parse(await readFile(journalFile, 'utf8')) as { entries: { idx: number; tag: string }[] };
  const snapshot = (idx: number) => path.join(copy, 'meta', `${String(idx).padStart(4, '0')}_snapshot.json`);
  const tables = async (idx: number) => JSON.stringify((JSON.parse(await readFile(snapshot(idx), 'utf8')) as { tables: unknown }).tables);
  for (;;) {
    const newest = journal.entries.pop()!;
    const changed = (await tables(newest.idx)) !== (await tables(journal.entries[journal.entries.length - 1]!.idx));
    await rm(path.join(copy, `${newest.tag}.sql`));
    await rm(snapshot(newest.idx));
    if (changed) break;
  }
  await writeFile(journalFile, JSON.stringify(journal, null, 2));
  return copy;
}

describe.each(DIALECTS)('db:generate --check on %s', (dialect) => {
  it('agrees with the committed migrations', async () => {
    expect(await migrationDrift(dialect)).toBeNull();
  }, 60_000);

  it('fails when the tables hold a change no migration holds, and writes nothing into the migrations', async () => {
    const before = await readdir(path.join(migrations, dialect), { recursive: true });
    const copy = await withoutNewest(dialect);
    const copied = await readdir(copy, { recursive: true });
    expect(await migrationDrift(dialect, copy)).toMatch(/changes that no migration holds/);
    expect(await readdir(copy, { recursive: true })).toEqual(copied);
    expect(await readdir(path.join(migrations, dialect), { recursive: true })).toEqual(before);
  }, 60_000);
});

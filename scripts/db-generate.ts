/**
 * drizzle-kit for both stores: the tables in server/src/store/tables/ become migrations under
 * server/migrations/<dialect>/ (configs: server/drizzle.<dialect>.config.ts). From the repository root:
 *
 *   npm run db:generate                             one migration per dialect for what changed
 *   npm run db:generate -- --name add_thing         the same, named
 *   npm run db:generate -- --custom --name seed_x   an empty migration per dialect, for data changes
 *   npm run db:generate -- --check                  exit 1 when tables and migrations disagree
 *
 * The check needs no database: drizzle-kit generates into a temporary copy of each migrations
 * folder, and any new migration there means the committed ones are behind the tables.
 * `npm run generate -- --check` (CI) runs it too.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { runAsScript } from './script-main.ts';

export const DIALECTS = ['sqlite', 'mysql'] as const;
type Dialect = (typeof DIALECTS)[number];

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const serverDir = path.join(repoRoot, 'server');
const bin = path.join(repoRoot, 'node_modules', '.bin', 'drizzle-kit');

interface Config {
  readonly schema: string;
  readonly out: string;
}

async function configOf(dialect: Dialect): Promise<Config> {
  const url = pathToFileURL(path.join(serverDir, `drizzle.${dialect}.config.ts`)).href;
  return ((await import(url)) as { default: Config }).default;
}

/** Runs drizzle-kit in server/, where the configs' paths start, without a terminal. */
function drizzleKit(args: string[]): { ok: boolean; output: string } {
  const result = spawnSync(bin, args, { cwd: serverDir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 120_000 });
  return { ok: result.status === 0, output: `${result.stdout ?? ''}${result.stderr ?? ''}${result.error ? String(result.error) : ''}` };
}

function journalLength(folder: string): number {
  return (JSON.parse(readFileSync(path.join(folder, 'meta', '_journal.json'), 'utf8')) as { entries: unknown[] }).entries.length;
}

/**
 * Why `dialect`'s migrations disagree with the tables, or null when they agree. `folder` (tests)
 * replaces the committed migrations folder; it is only read.
 */
export async function migrationDrift(dialect: Dialect, folder?: string): Promise<string | null> {
  const config = await configOf(dialect);
  const committed = folder ?? path.join(serverDir, config.out);
  // drizzle-kit takes folders relative to its working directory.
  const history = drizzleKit(['check', '--dialect', dialect, '--out', path.relative(serverDir, committed)]);
  if (!history.ok || !history.output.includes("Everything's fine")) return `drizzle-kit check found a broken history:\n${history.output}`;
  const work = mkdtempSync(path.join(tmpdir(), 'orbit-drizzle-'));
  try {
    const copy = path.join(work, dialect);
    cpSync(committed, copy, { recursive: true });
    const generated = drizzleKit(['generate', '--dialect', dialect, '--schema', config.schema, '--out', path.relative(serverDir, copy)]);
    if (journalLength(copy) !== journalLength(committed)) return 'the tables have changes that no migration holds';
    // drizzle-kit can exit 0 when it fails (on a question it cannot ask without a terminal, for
    // one), so only its own word that nothing changed counts as agreement.
    if (!generated.ok || !generated.output.includes('No schema changes'))
      return `drizzle-kit generate did not confirm that nothing changed:\n${generated.output}`;
    return null;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** Prints what drifted; true when every dialect agrees. */
export async function checkMigrations(): Promise<boolean> {
  let ok = true;
  for (const dialect of DIALECTS) {
    const drift = await migrationDrift(dialect);
    if (drift === null) continue;
    ok = false;
    console.error(`server/migrations/${dialect}/ disagrees with server/src/store/tables/: ${drift}`);
  }
  if (ok) console.log('server/migrations/ is up to date with server/src/store/tables/');
  else console.error('Run `npm run db:generate` and commit the result.');
  return ok;
}

async function main(argv: string[]): Promise<number> {
  if (argv.includes('--check')) return (await checkMigrations()) ? 0 : 1;
  for (const dialect of DIALECTS) {
    const result = spawnSync(bin, ['generate', '--config', `drizzle.${dialect}.config.ts`, ...argv], { cwd: serverDir, stdio: 'inherit' });
    if (result.status !== 0) return result.status ?? 1;
  }
  return 0;
}

runAsScript(import.meta.url, main);

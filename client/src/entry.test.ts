/**
 * The main entry is light: importing `@orbit/client` loads no database driver, so an application
 * that only manages subscriptions or consumes events installs neither better-sqlite3 nor mysql2.
 * Each import runs in a fresh Node process whose resolver refuses the two drivers; the Inbox
 * entries show that the refusal bites.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const REPO = fileURLToPath(new URL('../..', import.meta.url));

/** A resolve hook that fails every import of a database driver, naming it. */
const REFUSE_DRIVERS = `export async function resolve(specifier, context, next) {
  if (/^(better-sqlite3|mysql2)(\\/|$)/.test(specifier)) throw new Error('driver loaded: ' + specifier);
  return next(specifier, context);
}`;

function importInFreshNode(entry: string): { status: number | null; stderr: string } {
  const script = [
    "import { register } from 'node:module';",
    `register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(REFUSE_DRIVERS)}`)});`,
    `await import(${JSON.stringify(entry)});`,
  ].join('\n');
  const result = spawnSync(process.execPath, ['--import', 'tsx', '--conditions=@orbit/source', '--input-type=module', '-e', script], {
    cwd: REPO,
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { status: result.status, stderr: result.stderr };
}

describe('@orbit/client entry points', () => {
  it('MUST NOT load better-sqlite3 or mysql2 from the main entry', () => {
    const { status, stderr } = importInFreshNode('@orbit/client');
    expect(stderr).not.toContain('driver loaded');
    expect(status, stderr).toBe(0);
  });

  it.each([
    ['@orbit/client/inbox/sqlite', 'better-sqlite3'],
    ['@orbit/client/inbox/mysql', 'mysql2'],
  ])('loads its driver from %s only', (entry, driver) => {
    const { status, stderr } = importInFreshNode(entry);
    expect(status).not.toBe(0);
    expect(stderr).toContain(`driver loaded: ${driver}`);
  });
});

/**
 * `orbit` explains itself, through the real command: `orbit --help` lists the commands, a command
 * answers `--help` and `-h` with its own usage and exit code 0 (every command: src/cli/main.test.ts),
 * its help shows only options it parses, `orbit --version` and `orbit version` print the package's
 * version, and a mistake exits 2 with the command's synopsis.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { type CliRun, runOrbit } from '@orbit/testing';

const VERSION = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;

/** Runs the argument lists four at a time (two cores, each run a Node process). */
async function runAll(list: string[][]): Promise<CliRun[]> {
  const out: CliRun[] = [];
  for (let i = 0; i < list.length; i += 4) out.push(...(await Promise.all(list.slice(i, i + 4).map((args) => runOrbit(args)))));
  return out;
}

/** The command names of `orbit --help`'s "commands:" section. */
function commandsOf(overview: string): string[] {
  const section = overview.split('\ncommands:\n')[1]!.split('\n\n')[0]!;
  return section.split('\n').map((line) => line.trim().split(/\s+/)[0]!);
}

describe('orbit --help and COMMAND --help', () => {
  it('MUST list the commands on --help, -h and without arguments, and exit 0', async () => {
    const runs = await runAll([['--help'], ['-h'], [], ['help']]);
    for (const run of runs) {
      expect(run.code, run.stderr).toBe(0);
      expect(run.stderr).toBe('');
      expect(run.stdout).toBe(runs[0]!.stdout);
    }
    expect(commandsOf(runs[0]!.stdout)).toEqual(
      expect.arrayContaining(['serve', 'dev', 'migrate', 'bootstrap', 'publish', 'prune', 'credentials', 'settings', 'version', 'help']),
    );
  });

  it("MUST print a command's usage on COMMAND --help and COMMAND -h, exit 0, and open no database", async () => {
    // Every command is covered in process by src/cli/main.test.ts; these go through the real bin.
    const cases = [
      ['serve', '--help'],
      ['dev', '-h'],
      ['credentials', '-h'],
      ['migrate', '--help'],
    ];
    // A database that cannot be opened: a command that tried would fail instead of printing its help.
    const runs = await runAll(cases.map((args) => [...args, '--database', 'sqlite:/nonexistent/dir/x.db']));
    runs.forEach((run, i) => {
      const name = cases[i]![0]!;
      expect(run.code, `${name}: ${run.stderr}`).toBe(0);
      expect(run.stderr, name).toBe('');
      expect(run.stdout, name).toMatch(new RegExp(`^usage: orbit ${name}\\b`));
      expect(run.stdout, name).toContain('-h, --help');
    });
  });

  it('MUST list every option the command takes, each of which the command accepts', async () => {
    const [serve, credentials, rotate, helpRotate] = await runAll([
      ['serve', '--help'],
      ['credentials', '--help'],
      ['credentials', 'rotate', '--help'],
      ['help', 'credentials', 'rotate'],
    ]);
    for (const flag of [
      '--listen HOST:PORT',
      '--database URL',
      '--create-database',
      '--config FILE',
      '--lease-duration-ms N',
      '--tls-cert FILE',
    ])
      expect(serve!.stdout).toContain(flag);
    for (const form of ['credentials list', 'credentials revoke CREDENTIAL_ID', 'credentials rotate CREDENTIAL_ID'])
      expect(credentials!.stdout).toContain(`usage: orbit ${form}`);
    expect(rotate!.stdout).toMatch(/^usage: orbit credentials rotate CREDENTIAL_ID \[options\]\n/);
    expect(rotate!.stdout).not.toContain('credentials list');
    expect(rotate!.stdout).toContain('--grace-seconds N');
    expect(helpRotate!.stdout).toBe(rotate!.stdout);
    // Every flag serve's help shows is one serve parses: given all at once with a bad value, the
    // settings refuse a value (exit 2 before anything opens), never an option.
    const flags = [...serve!.stdout.matchAll(/^ {2}(--[a-z-]+)/gm)].map((m) => m[1]!);
    expect(flags.length).toBeGreaterThan(30);
    const all = await runOrbit(['serve', ...flags.flatMap((f) => (f === '--create-database' ? [f] : [f, 'x']))]);
    expect(all.code).toBe(2);
    expect(all.stderr).toMatch(/^orbit: invalid setting: /);
  });

  it('MUST print the version of @orbit/server on --version and version, and exit 0', async () => {
    const runs = await runAll([['--version'], ['version']]);
    for (const run of runs) {
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toBe(`${VERSION}\n`);
    }
  });

  it('MUST exit 2 on a mistake, with the command synopsis and where its help is', async () => {
    const [unknownOption, unknownCommand, missing] = await runAll([
      ['serve', '--bogus'],
      ['frob'],
      ['bootstrap', '--namespace', 'ns', '--database', 'sqlite::memory:'],
    ]);
    expect(unknownOption!.code).toBe(2);
    expect(unknownOption!.stderr).toMatch(/^orbit: Unknown option '--bogus'/);
    expect(unknownOption!.stderr).toContain('usage: orbit serve [options]');
    expect(unknownOption!.stderr).toContain('orbit serve --help');
    expect(unknownCommand!.code).toBe(2);
    expect(unknownCommand!.stderr).toMatch(/unknown command "frob"; the commands are serve, dev, migrate/);
    expect(unknownCommand!.stderr).toContain('orbit --help');
    expect(missing!.code).toBe(2);
    expect(missing!.stderr).toMatch(/--application is required/);
    expect(missing!.stderr).toContain('usage: orbit bootstrap --namespace N --application A --queue Q');
  });
});

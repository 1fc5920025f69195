/**
 * The `orbit-conformance` command as a process: its help and version, and a configuration that is
 * not filled in, which stops it with exit 2 before it asks any server anything.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXIT, ROLES } from '../src/index.ts';
import { COMMANDS } from '../src/usage.ts';
import { REPO, runCli } from './cli.ts';

const VERSION = (JSON.parse(readFileSync(join(REPO, 'conformance/package.json'), 'utf8')) as { version: string }).version;

describe('orbit-conformance explains itself', () => {
  it('--help lists every command; COMMAND --help, COMMAND -h and help COMMAND print its options; all exit 0', async () => {
    const names = Object.keys(COMMANDS) as (keyof typeof COMMANDS)[];
    const [overview, ...helps] = await Promise.all([
      runCli(['--help']),
      ...names.flatMap((name) => [runCli([name, '--help']), runCli([name, '-h']), runCli(['help', name])]),
    ]);
    expect(overview!.status, overview!.stderr).toBe(EXIT.ok);
    for (const name of names) expect(overview!.stdout).toMatch(new RegExp(`^  ${name} +${COMMANDS[name].summary.slice(0, 20)}`, 'm'));
    for (const [i, name] of names.entries()) {
      const [long, short, topic] = helps.slice(3 * i, 3 * i + 3);
      for (const run of [long!, short!, topic!]) expect(run.status, `${name}: ${run.stderr}`).toBe(EXIT.ok);
      expect(short!.stdout).toBe(long!.stdout);
      expect(topic!.stdout).toBe(long!.stdout);
      expect(long!.stdout).toMatch(new RegExp(`^usage: orbit-conformance ${name} `));
      for (const option of Object.keys(COMMANDS[name].options)) expect(long!.stdout, `${name} --${option}`).toContain(`--${option}`);
    }
  }, 60_000);

  it('--version prints the package version', async () => {
    const run = await runCli(['--version']);
    expect([run.status, run.stdout]).toEqual([EXIT.ok, `orbit-conformance ${VERSION}\n`]);
  });

  it('an unknown command or option is a usage error (exit 2) that shows the usage', async () => {
    const [command, option] = await Promise.all([runCli(['frobnicate']), runCli(['run', '--frobnicate'])]);
    expect(command.status).toBe(EXIT.usage);
    expect(command.stderr).toMatch(/unknown command "frobnicate"[\s\S]*usage: orbit-conformance/);
    expect(option.status).toBe(EXIT.usage);
    expect(option.stderr).toMatch(/--frobnicate[\s\S]*usage: orbit-conformance run/);
  });
});

describe('the shipped template, left unedited', () => {
  it('is a configuration error (exit 2) naming each field at fault, and no case runs', async () => {
    const run = await runCli(['--config', join(REPO, 'conformance/examples/conformance.yaml')]);
    expect(run.status, run.stdout + run.stderr).toBe(EXIT.usage);
    const fields = [...run.stderr.matchAll(/^ {2}([a-zA-Z.]+): still the template's REPLACE_ME/gm)].map((m) => m[1]);
    expect(fields).toEqual([...Object.keys(ROLES).map((r) => `credentials.${r}`), 'queues.primary']);
    expect(run.stdout).toBe('');
  });
});

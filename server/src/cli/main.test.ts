import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { COMMANDS, main } from './main.ts';
import { formUsage, parseForm } from './usage.ts';

/** What `main` printed, by stream. */
let out: string[];
let err: string[];
beforeEach(() => {
  out = [];
  err = [];
  vi.spyOn(console, 'log').mockImplementation((...args: unknown[]) => void out.push(args.join(' ')));
  vi.spyOn(console, 'error').mockImplementation((...args: unknown[]) => void err.push(args.join(' ')));
});
afterEach(() => vi.restoreAllMocks());

describe('orbit COMMAND --help', () => {
  it('prints the usage of every command on --help and -h, exits 0 and runs nothing', async () => {
    expect(COMMANDS.length).toBeGreaterThan(0);
    for (const command of COMMANDS) {
      for (const flag of ['--help', '-h']) {
        out = [];
        // A database that cannot be opened: a command that tried would fail instead.
        expect(await main([command.name, flag, '--database', 'sqlite:/nonexistent/dir/x.db']), `${command.name} ${flag}: ${err}`).toBe(0);
        expect(err).toEqual([]);
        expect(out.join('\n')).toMatch(new RegExp(`^usage: orbit ${command.name}\\b`));
        for (const form of command.forms) expect(out.join('\n')).toContain(formUsage(form));
      }
    }
  });

  it('lists every command with its summary on --help, and one subcommand on `credentials rotate --help`', async () => {
    expect(await main(['--help'])).toBe(0);
    for (const command of COMMANDS)
      expect(out.join('\n')).toMatch(new RegExp(`^ {2}${command.name} +${command.summary.replace(/[()]/g, '\\$&')}$`, 'm'));
    out = [];
    expect(await main(['credentials', 'rotate', '--help'])).toBe(0);
    expect(out.join('\n')).toMatch(/^usage: orbit credentials rotate CREDENTIAL_ID \[options\]\n/);
    expect(out.join('\n')).not.toContain('credentials list');
  });

  it('shows every option a form parses, with its value name, and parses every option it shows', () => {
    for (const command of COMMANDS) {
      for (const form of command.forms) {
        const usage = formUsage(form);
        const args: string[] = [];
        for (const [name, spec] of Object.entries(form.options)) {
          const shown = spec.type === 'string' ? `--${name} ${spec.value}` : `--${name}`;
          expect(spec.type === 'boolean' || spec.value, `${form.name} --${name} names its value`).toBeTruthy();
          expect(usage, form.name).toContain(`  ${shown}`);
          args.push(...(spec.type === 'string' ? [`--${name}`, 'v'] : [`--${name}`]));
        }
        const { values } = parseForm(form, [...args, ...(form.positionals ? ['p'] : [])]);
        expect(Object.keys(values).sort(), form.name).toEqual(Object.keys(form.options).sort());
      }
    }
  });

  it('exits 2 on an unknown command or option, with the synopsis of the command', async () => {
    expect(await main(['frob'])).toBe(2);
    expect(err.join('\n')).toMatch(/unknown command "frob"; the commands are serve, dev/);
    err = [];
    expect(await main(['prune', '--before', '3'])).toBe(2);
    expect(err.join('\n')).toMatch(/Unknown option '--before'/);
    expect(err.join('\n')).toContain('usage: orbit prune --before-sequence N [options]');
  });
});

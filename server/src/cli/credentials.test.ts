import { describe, expect, it } from 'vitest';
import { parseCredentialsArgs } from './credentials.ts';
import { UsageError } from './usage.ts';

const ID = 'a'.repeat(32);

/** The message of what parsing throws: a UsageError or parseArgs' own ERR_PARSE_ARGS_* error. */
function refusal(args: string[]): string {
  try {
    parseCredentialsArgs(args);
  } catch (error) {
    const usage = error instanceof UsageError || String((error as { code?: string }).code).startsWith('ERR_PARSE_ARGS');
    expect(usage, String(error)).toBe(true);
    return (error as Error).message;
  }
  throw new Error(`accepted: ${args.join(' ')}`);
}

describe('orbit credentials arguments', () => {
  it('reads list, revoke and rotate with their flags', () => {
    expect(parseCredentialsArgs(['list'])).toEqual({ command: 'list', json: false, where: {} });
    expect(parseCredentialsArgs(['list', '--namespace', 'ns', '--json', '--database', 'sqlite:x.db'])).toEqual({
      command: 'list',
      namespace: 'ns',
      json: true,
      where: { database: 'sqlite:x.db' },
    });
    expect(parseCredentialsArgs(['revoke', ID, '--config', 'orbit.yaml'])).toEqual({
      command: 'revoke',
      id: ID,
      json: false,
      where: { config: 'orbit.yaml' },
    });
    expect(parseCredentialsArgs(['rotate', ID])).toMatchObject({ command: 'rotate', id: ID, graceMs: 0 });
    expect(parseCredentialsArgs(['rotate', '--grace-seconds', '90', ID, '--json'])).toMatchObject({ graceMs: 90_000, json: true });
    expect(parseCredentialsArgs(['rotate', ID, '--grace-seconds', '2592000'])).toMatchObject({ graceMs: 2_592_000_000 });
  });

  it('refuses bad flags, ids and commands before any database is opened', () => {
    expect(refusal([])).toMatch(/needs a command/);
    expect(refusal(['retire', ID])).toMatch(/unknown credentials command "retire"/);
    expect(refusal(['list', 'extra'])).toMatch(/Unexpected argument 'extra'/);
    expect(refusal(['list', '--namespace', ''])).toMatch(/--namespace needs a NAME/);
    expect(refusal(['list', '--namespace'])).toMatch(/--namespace/);
    expect(refusal(['revoke'])).toMatch(/exactly one CREDENTIAL_ID/);
    expect(refusal(['revoke', ID, ID])).toMatch(/exactly one CREDENTIAL_ID/);
    for (const bad of ['ABC', 'A'.repeat(32), `${ID}0`, 'g'.repeat(32), ''])
      expect(refusal(['revoke', bad])).toMatch(/CREDENTIAL_ID must be 32 lower-case hex/);
    expect(refusal(['revoke', ID, '--grace-seconds', '5'])).toMatch(/Unknown option '--grace-seconds'/);
    expect(refusal(['rotate', ID, '--bogus'])).toMatch(/Unknown option '--bogus'/);
    for (const grace of ['-1', '1.5', 'soon', '', '01', '1e3', ' 5', '2592001', '99999999999'])
      expect(refusal(['rotate', ID, `--grace-seconds=${grace}`])).toMatch(/--grace-seconds must be an integer from 0 to 2592000/);
  });
});

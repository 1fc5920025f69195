/**
 * Client mode, interrupted, leaves nothing behind. The CLI starts the client program of each case
 * in a process group of its own (src/client/program.ts), which a signal to the CLI does not reach;
 * so on SIGINT or SIGTERM the CLI ends those groups (the program and what it started) and removes
 * their state directories before it exits with 128 + the signal's number, as spawn mode does with
 * its server (cli-cleanup.test.ts). The client program here, test/fixture-client/lingering.mjs,
 * starts a child and never ends by itself; two cases run at once, so two such programs run when
 * the signal comes.
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { constants, tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventually } from '@orbit/testing';
import { expect, it, onTestFinished } from 'vitest';
import { isRunning, REPO, runCli } from './cli.ts';

const CASES = ['client.dedupe-by-event-id', 'client.ack-after-store'];

/** What each lingering program recorded: its PID, its child's PID and its state directory. */
interface Lingering {
  readonly pid: number;
  readonly child: number;
  readonly state_dir: string;
}

function recorded(path: string): Lingering[] {
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Lingering);
}

it.each(['SIGINT', 'SIGTERM'] as const)(
  'on %s the client CLI ends the client programs it started and removes their state directories',
  { timeout: 40_000 },
  async (signal) => {
    const dir = mkdtempSync(join(tmpdir(), 'orbit-client-cleanup-'));
    const record = join(dir, 'programs.jsonl');
    // Whatever the outcome, nothing of this test outlives it: a program the CLI left is ended here.
    onTestFinished(() => {
      for (const program of recorded(record)) {
        if (isRunning(program.pid)) process.kill(-program.pid, 'SIGKILL');
        rmSync(program.state_dir, { recursive: true, force: true });
      }
      rmSync(dir, { recursive: true, force: true });
    });
    const config = join(dir, 'client.json');
    const command = [process.execPath, join(REPO, 'conformance/test/fixture-client/lingering.mjs')];
    writeFileSync(config, JSON.stringify({ command, env: { LINGERING_RECORD: record } }));
    let cli: ChildProcess | undefined;
    const run = runCli(['client', '--config', config, '--only', CASES.join(','), '--parallel', '2'], (child) => (cli = child));

    const programs = await eventually(() => recorded(record).length === CASES.length && recorded(record), 20_000, 'both programs');
    for (const p of programs) {
      expect(isRunning(p.pid), `program ${p.pid}`).toBe(true);
      expect(isRunning(p.child), `child ${p.child} of program ${p.pid}`).toBe(true);
      expect(existsSync(p.state_dir), p.state_dir).toBe(true);
    }
    process.kill(cli!.pid!, signal);

    const left = () => programs.flatMap((p) => [p.pid, p.child]).filter(isRunning);
    await eventually(() => left().length === 0, 10_000, 'the client programs to end').catch(() => undefined);
    expect(left(), 'processes of the client programs still running').toEqual([]);
    for (const p of programs) expect(existsSync(p.state_dir), p.state_dir).toBe(false);
    const result = await run;
    expect(result.status, result.stderr).toBe(128 + constants.signals[signal]);
  },
);

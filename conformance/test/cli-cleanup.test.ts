/**
 * A test that ends while the conformance CLI runs (it fails or times out) leaves no process behind:
 * the CLI in spawn mode (as suite-sqlite.test.ts runs it) starts `orbit serve` in a process group
 * of its own, and when the test ends, however it ends, `runCli` (cli.ts) sends the CLI SIGTERM
 * from its `onTestFinished` hook, on which the CLI stops that server and removes its temp directory
 * (conformance/src/interrupt.ts). The first case ends, failing, once the suite has started against
 * the server; the second checks, after it, that the CLI, the server process, its port and its temp
 * directory are gone. The first case fails on purpose rather than by its timeout: under load the
 * server's start alone can take longer than any short timeout, and a timeout that counts it would
 * end the case before there is a server to leave behind. cli-client-cleanup.test.ts checks the same
 * of client mode.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it, onTestFinished } from 'vitest';
import { isRunning, REPO, runCli } from './cli.ts';

/**
 * What the timed-out case saw: the CLI's PID, its child processes once the suite ran, the server's
 * URL and temp directory (the `{tmpdir}` of the configuration), and how the case ended.
 */
const seen: { cli?: number; children: number[]; baseUrl?: string; tmpdir?: string; errors: string[] } = { children: [], errors: [] };

/** The PIDs of the processes whose parent is `pid` (`ps` as on Linux and macOS). */
function childrenOf(pid: number): number[] {
  const ps = spawnSync('ps', ['-eo', 'pid=,ppid='], { encoding: 'utf8' });
  return ps.stdout
    .trim()
    .split('\n')
    .map((line) => line.trim().split(/\s+/).map(Number))
    .filter(([, parent]) => parent === pid)
    .map(([child]) => child!);
}

/** How the first case ends, once the suite runs against the server. */
const ENDING = 'the case ends here, with the suite running';

it.fails('ends while the CLI runs the suite against the server it spawned', { timeout: 120_000 }, async () => {
  onTestFinished(({ task }) => {
    seen.errors = (task.result?.errors ?? []).map((e) => e.message);
  });
  let started: () => void = () => {};
  const running = new Promise<void>((resolve) => (started = resolve));
  void runCli(['--profile', 'orbit', '--config', join(REPO, 'conformance/test/fixtures/orbit-sqlite.json')], (child) => {
    seen.cli = child.pid;
    let stdout = '';
    child.stdout!.on('data', (c: Buffer) => {
      stdout += c.toString();
      seen.tmpdir ??= /^starting the server: .* --database sqlite:(\S+)\/orbit\.db/m.exec(stdout)?.[1];
      const url = /^running \d+ cases of the orbit profile against (\S+)/m.exec(stdout)?.[1];
      if (url && seen.baseUrl === undefined) {
        seen.baseUrl = url;
        started();
      }
    });
  });
  await running;
  seen.children = childrenOf(seen.cli!);
  throw new Error(ENDING);
});

it('leaves neither the CLI nor the server it spawned running after that case', async () => {
  expect(seen.errors.join('\n')).toContain(ENDING);
  expect(seen.cli).toBeDefined();
  expect(seen.baseUrl).toBeDefined();
  expect(seen.children.length).toBeGreaterThan(0);
  expect(isRunning(seen.cli!), `CLI ${seen.cli}`).toBe(false);
  for (const pid of seen.children) expect(isRunning(pid), `child ${pid} of the CLI`).toBe(false);
  const answer = await fetch(`${seen.baseUrl}/healthz`).then(
    (r) => `HTTP ${r.status}`,
    () => 'refused',
  );
  expect(answer).toBe('refused');
  expect(seen.tmpdir).toBeDefined();
  expect(existsSync(seen.tmpdir!), seen.tmpdir).toBe(false);
});

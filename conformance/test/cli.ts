/**
 * Test support: runs the conformance CLI as a separate process (as CI does) and collects its exit
 * status and output. Asynchronous, because the server under test may run in this process.
 *
 * The CLI runs in a process group of its own, and when the test that started it ends (passed,
 * failed or timed out) a CLI still running gets SIGTERM, on which it ends what it spawned
 * (conformance/src/interrupt.ts), then SIGKILL after 10 s: a timed-out run leaves no `orbit serve`.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { onTestFinished } from 'vitest';

export const REPO = fileURLToPath(new URL('../..', import.meta.url));

export function runCli(
  args: readonly string[],
  watch?: (child: ChildProcess) => void,
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [join(REPO, 'conformance/bin/orbit-conformance.mjs'), ...args], { cwd: REPO, detached: true });
  onTestFinished(() => stopCli(child));
  watch?.(child);
  return new Promise((resolve) => {
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

async function stopCli(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const signal = (s: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, s);
    } catch {
      // already gone
    }
  };
  signal('SIGTERM');
  const timer = setTimeout(() => signal('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

/**
 * Whether process `pid` still runs (`ps` as on Linux and macOS). A zombie has ended: an orphan
 * whose new parent does not reap it (PID 1 in some containers) stays one.
 */
export function isRunning(pid: number): boolean {
  const state = spawnSync('ps', ['-o', 'stat=', '-p', String(pid)], { encoding: 'utf8' }).stdout.trim();
  return state !== '' && !state.startsWith('Z');
}

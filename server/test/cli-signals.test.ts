/**
 * The production start of docs/operations.md ("Running a node") forwards SIGTERM: `orbit serve`
 * started as `node_modules/.bin/orbit` itself (a container's exec-form CMD, a systemd ExecStart), or
 * through a shell script that `exec`s it, is the process that gets the signal, shuts down
 * gracefully and leaves no process and no listener behind. `npx orbit serve` does not: npm and a
 * shell stand between the signal and the server, npm exits and the server keeps serving. That last
 * case pins what the docs warn about; if npm starts forwarding the signal, it fails and the docs
 * should say so.
 *
 * Every process here is started by the test in a process group of its own; it signals only the
 * PIDs it started or found below them, and every wait is bounded.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanEnv, eventually, freePort, freshDatabase, type TestDatabase } from '@orbit/testing';

/** The repository root, where `npm ci` put `node_modules/.bin/orbit` (what an installed server has too). */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The parent of every live process, read from /proc. */
function parents(): Map<number, number> {
  const out = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // The command name in parentheses may hold spaces; the parent PID is the second field after it.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      out.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // The process ended while we looked.
    }
  }
  return out;
}

/** `pid` and every process below it. */
function tree(pid: number): number[] {
  const byParent = parents();
  const found = [pid];
  for (let i = 0; i < found.length; i++) for (const [child, parent] of byParent) if (parent === found[i]) found.push(child);
  return found;
}

function alive(pid: number): boolean {
  try {
    // A zombie still answers signal 0; its state in /proc says it is gone.
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

/** Whether something accepts connections on the loopback port. */
function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.setTimeout(1_000, () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

interface Started {
  readonly top: ChildProcess;
  readonly output: () => string;
  readonly exited: Promise<number | null>;
}

/** Runs `command` in its own process group from the repository root and waits for "orbit is serving". */
async function start(command: string, args: string[]): Promise<Started> {
  const top = spawn(command, args, { cwd: ROOT, env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let output = '';
  top.stdout!.on('data', (c: Buffer) => (output += c.toString()));
  top.stderr!.on('data', (c: Buffer) => (output += c.toString()));
  const exited = new Promise<number | null>((resolve) => top.once('exit', (code) => resolve(code)));
  await eventually(async () => output.includes('"msg":"orbit is serving"') || top.exitCode !== null, 30_000, 'orbit is serving');
  expect(output).toContain('"msg":"orbit is serving"');
  return { top, output: () => output, exited };
}

describe('SIGTERM to the documented production start', () => {
  let database: TestDatabase;
  /** Every PID this file saw below a process it started: ended at the end whatever happened. */
  const seen = new Set<number>();

  beforeAll(async () => {
    database = await freshDatabase('sqlite');
  });
  afterAll(async () => {
    for (const pid of seen) if (alive(pid)) process.kill(pid, 'SIGKILL');
    await database?.drop();
  });

  /** Starts, records the process tree, sends SIGTERM to the top process only; resolves with what is left after `waitMs`. */
  async function terminate(command: string, args: (port: number) => string[], waitMs: number) {
    const port = await freePort();
    const started = await start(command, args(port));
    const pids = tree(started.top.pid!);
    for (const pid of pids) seen.add(pid);
    expect(await answers(port)).toBe(true);
    process.kill(started.top.pid!, 'SIGTERM');
    const code = await Promise.race([started.exited, new Promise<'running'>((r) => setTimeout(() => r('running'), 15_000))]);
    const deadline = Date.now() + waitMs;
    while (Date.now() < deadline && pids.some(alive)) await new Promise((r) => setTimeout(r, 100));
    return { port, pids, code, left: pids.filter(alive), output: started.output() };
  }

  const serveArgs = (port: number) => ['serve', '--listen', `127.0.0.1:${port}`, '--database', database.url];

  it('MUST end node_modules/.bin/orbit serve, started as the process itself, and close its port', async () => {
    const run = await terminate('./node_modules/.bin/orbit', serveArgs, 10_000);
    expect(run.code, run.output).toBe(0);
    expect(run.left, run.output).toEqual([]);
    expect(run.output).toContain('"msg":"shutdown complete"');
    expect(await answers(run.port)).toBe(false);
  });

  it('MUST end a shell script that execs node_modules/.bin/orbit serve, and close its port', async () => {
    const script = 'exec ./node_modules/.bin/orbit "$@"';
    const run = await terminate('sh', (port) => ['-c', script, 'orbit-start', ...serveArgs(port)], 10_000);
    expect(run.code, run.output).toBe(0);
    expect(run.left, run.output).toEqual([]);
    expect(await answers(run.port)).toBe(false);
  });

  it('npx orbit serve: npm exits on SIGTERM and the server it started keeps serving (why the docs say not to use it)', async () => {
    const run = await terminate('npx', (port) => ['--no-install', 'orbit', ...serveArgs(port)], 3_000);
    expect(run.code).not.toBe('running');
    const server = run.pids.find((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('.bin/orbit\0serve');
      } catch {
        return false;
      }
    });
    expect(run.left, `npm now forwards SIGTERM to the server: update docs/operations.md, "Running a node"\n${run.output}`).toContain(
      server,
    );
    expect(await answers(run.port)).toBe(true);
    // Ours to end: the orphaned server, by the PID recorded when it was started.
    process.kill(server!, 'SIGTERM');
    await eventually(async () => !alive(server!) && !(await answers(run.port)), 15_000, 'the orphaned server to stop');
  });
});

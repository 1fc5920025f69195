/**
 * @module
 * A program started in a process group of its own (`detached`), so that a signal to the group
 * reaches what the program starts too (an `npx`, `tsx` or `sh -c` launcher forks the real
 * program). Its end is registered with interrupt.ts until it has run.
 */
import { type ChildProcess, type SpawnOptions, spawn } from 'node:child_process';
import { endOnInterrupt } from './interrupt.ts';

export interface ProcessGroup {
  readonly child: ChildProcess;
  /**
   * Ends the group: SIGTERM, then SIGKILL after the grace time (0: SIGKILL at once, sent before
   * this returns); resolves when the program has exited. It runs once.
   */
  end(): Promise<void>;
}

function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    process.kill(-child.pid!, signal);
  } catch {
    // already gone
  }
}

/** Starts `file ARGS` as the leader of a new process group; `graceMs` is what `end` allows it. */
export function startGroup(file: string, args: readonly string[], options: Omit<SpawnOptions, 'detached'>, graceMs: number): ProcessGroup {
  const child = spawn(file, args, { ...options, detached: true });
  const end = endOnInterrupt(async () => {
    if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    signalGroup(child, graceMs === 0 ? 'SIGKILL' : 'SIGTERM');
    const timer = graceMs === 0 ? undefined : setTimeout(() => signalGroup(child, 'SIGKILL'), graceMs);
    await exited;
    clearTimeout(timer);
  });
  return { child, end };
}

/**
 * @module
 * What an interrupted CLI ends before it exits. Both modes start things that outlive the CLI
 * unless it ends them: process groups of their own (spawn mode's server, client mode's client
 * programs; see process-group.ts), which a signal to the CLI's group (Ctrl-C in a terminal, a test
 * runner ending the CLI) does not reach, and temporary directories. Whoever starts one registers
 * how to end it with `endOnInterrupt`; `interruptible` runs a command so that SIGINT or SIGTERM
 * ends everything registered and not yet ended, then exits as the signal would: 128 + its number
 * (conformance/README.md, "Outcomes and exit codes").
 */
import { constants } from 'node:os';

/** The ends registered and not yet finished. */
const pending = new Set<() => Promise<void>>();
let interrupted = false;

/**
 * Registers `end` until it has finished and returns it, to be called in its place: it runs once,
 * and a later call (the signal's, the owner's) shares the first one's promise. After an interrupt
 * a new registration ends at once, so that a case still running cannot start a program that
 * outlives the CLI.
 */
export function endOnInterrupt(end: () => Promise<void>): () => Promise<void> {
  let ending: Promise<void> | undefined;
  const once = (): Promise<void> => {
    ending ??= end().finally(() => pending.delete(once));
    return ending;
  };
  pending.add(once);
  if (interrupted) void once();
  return once;
}

/** Ends everything registered, and what is registered meanwhile. */
async function endAll(): Promise<void> {
  while (pending.size > 0) await Promise.allSettled([...pending].map((end) => end()));
}

/** Runs `command`; on SIGINT or SIGTERM meanwhile, ends everything registered and exits. */
export async function interruptible<T>(command: () => Promise<T>): Promise<T> {
  const onSignal = (signal: NodeJS.Signals) => {
    interrupted = true;
    void endAll().finally(() => process.exit(128 + constants.signals[signal]));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    return await command();
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

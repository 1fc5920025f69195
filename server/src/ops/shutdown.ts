/**
 * @module
 * Signal handling for `orbit serve`: the first SIGTERM or SIGINT starts a graceful close bounded by
 * `shutdown_timeout_ms` (exit 0 when it finishes, 1 when the bound passes); a second signal exits
 * at once with 1. Leases are committed before every `event.deliver`, so neither path loses one: a
 * delivery leased before the signal is still LEASED afterwards, or recovered by a sweep or claim
 * after its lease runs out.
 */
import type { Log } from './log.ts';

export interface ShutdownOptions {
  readonly close: () => Promise<void>;
  readonly timeoutMs: number;
  readonly log: Log;
  readonly exit?: (code: number) => void;
  readonly signals?: readonly NodeJS.Signals[];
  /** Where signals come from (tests pass an EventEmitter). */
  readonly source?: Pick<NodeJS.Process, 'on' | 'off'>;
}

/** Installs the handlers; returns a function that removes them. */
export function installShutdown(options: ShutdownOptions): () => void {
  const exit = options.exit ?? ((code: number) => process.exit(code));
  const source = options.source ?? process;
  const signals = options.signals ?? ['SIGTERM', 'SIGINT'];
  let started = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (started) {
      options.log('warn', 'second signal: exiting at once', { signal });
      exit(1);
      return;
    }
    started = true;
    options.log('info', 'shutting down', { signal, timeout_ms: options.timeoutMs });
    const timer = setTimeout(() => {
      options.log('error', 'shutdown did not finish in time; exiting', { timeout_ms: options.timeoutMs });
      exit(1);
    }, options.timeoutMs);
    options.close().then(
      () => {
        clearTimeout(timer);
        options.log('info', 'shutdown complete');
        exit(0);
      },
      (error: unknown) => {
        clearTimeout(timer);
        options.log('error', 'shutdown failed', { error: String((error as Error)?.message ?? error) });
        exit(1);
      },
    );
  };
  for (const signal of signals) source.on(signal, onSignal);
  return () => {
    for (const signal of signals) source.off(signal, onSignal);
  };
}

/**
 * @module
 * The suite's own errors. A `CheckFailure` is a server that misbehaved: its `kind` says how (an
 * assertion, a setup step that the server refused, the case's time limit, a network error, or
 * invalid server frames), so that a known-failing entry can name the kind of failure it expects.
 * A `SkipSignal` is a case that cannot test what it claims against this configuration.
 */

/** How a case failed; `assert` unless a helper knows better. */
export const FAILURE_KINDS = ['assert', 'setup', 'timeout', 'network', 'frames'] as const;
export type FailureKind = (typeof FAILURE_KINDS)[number];

/** The seed and the shrunk counterexample of a failed property case. */
export interface PropertyFailure {
  /** The property's own seed (derived from the run seed and the case id). */
  readonly seed: number;
  readonly path: string | null;
  /** What the client actually sent in the failing run (an HTTP request or a frame). */
  readonly sent: string;
  /** The generated value, in fast-check's notation. */
  readonly value: string;
  readonly numRuns: number;
  readonly numShrinks: number;
}

/** A failed check: the message says what was expected and what came back. */
export class CheckFailure extends Error {
  override readonly name = 'CheckFailure';

  constructor(
    message: string,
    readonly kind: FailureKind = message.startsWith('setup:') ? 'setup' : 'assert',
    readonly property?: PropertyFailure,
  ) {
    super(message);
  }
}

/** A transport failure (refused, reset, timed out) talking to the server: the server may be gone. */
export class NetworkError extends CheckFailure {
  constructor(what: string, cause: unknown) {
    super(`network: ${what}: ${cause instanceof Error ? cause.message : String(cause)}`, 'network');
  }
}

/** Thrown by `ctx.skip()`: the case cannot test what it claims against this configuration. */
export class SkipSignal extends Error {
  override readonly name = 'SkipSignal';
}

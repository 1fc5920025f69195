/**
 * @module
 * The CLI's exit codes, the contract a CI job branches on (documented in conformance/README.md).
 */

/** The exit codes. */
export const EXIT = {
  /** Nothing unexpected failed. */
  ok: 0,
  /** A case failed unexpectedly, a known-failing entry is stale (or, with --strict, a SHOULD was not met). */
  failed: 1,
  /** A usage, configuration or setup error, including timings that do not match the server's welcome. */
  usage: 2,
  /** The server stopped answering during the run: the run stopped. */
  serverGone: 3,
} as const;

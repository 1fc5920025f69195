/** @module A mistake in the command line: the CLI prints the usage and exits with 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

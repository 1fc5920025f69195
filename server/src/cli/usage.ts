/**
 * @module
 * A mistake in the command line, or a request the database refuses (an unknown id): the CLI prints
 * the message and exits with 2, having written nothing. `showUsage` adds the usage text.
 */
export class UsageError extends Error {
  override readonly name = 'UsageError';
  readonly showUsage: boolean;

  constructor(message: string, options: { showUsage?: boolean } = {}) {
    super(message);
    this.showUsage = options.showUsage ?? true;
  }
}

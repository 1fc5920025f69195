/**
 * The command-line entry of a script that is also imported as a module (by its tests, or by another
 * script): runs `main` only when node started this file, and exits with its code (2 on an error).
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export function runAsScript(moduleUrl: string, main: (argv: string[]) => Promise<number>): void {
  if (!process.argv[1] || path.resolve(process.argv[1]) !== fileURLToPath(moduleUrl)) return;
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (error: unknown) => {
      console.error(error instanceof Error ? error.message : error);
      process.exit(2);
    },
  );
}

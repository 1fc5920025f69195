/**
 * Formats generated TypeScript with the repository's Biome configuration, so that what the
 * catalogue writes is already what `biome format` would write (and `biome ci` passes on it).
 */
import { spawnSync } from 'node:child_process';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = join(dirname(fileURLToPath(import.meta.url)), '../..');

export function biomeFormat(path: string, text: string): string {
  const result = spawnSync(join(REPO, 'node_modules/.bin/biome'), ['format', `--stdin-file-path=${relative(REPO, path)}`], {
    cwd: REPO,
    input: text,
    encoding: 'utf8',
  });
  if (result.status !== 0) throw new Error(`biome format failed for ${path}: ${result.stderr}`);
  return result.stdout;
}

#!/usr/bin/env node
// The vitest suites of one folder of the repository, the unit of turbo's test cache (turbo.json):
// `node scripts/test-folder.mjs FOLDER` from the root, or `node ../scripts/test-folder.mjs` from a
// workspace (the folder is then the workspace). vitest runs from the root with the root's
// vitest.config.ts, so that every test sees the same working directory as in a whole-tree run, and
// it gets the folder as an absolute path: vitest matches a relative filter anywhere in a file's
// path (`server/` would also pick `conformance/test/fixture-server/x.test.ts`), an absolute one
// only as a prefix. New test files in the folder are picked up with no edit here.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const folder = resolve(process.argv[2] ?? process.cwd());
if (!existsSync(folder)) {
  console.error(`test-folder: no folder ${folder}`);
  process.exit(2);
}
const vitest = join(root, 'node_modules', 'vitest', 'vitest.mjs');
const result = spawnSync(process.execPath, [vitest, 'run', `${folder}/`, ...process.argv.slice(3)], { cwd: root, stdio: 'inherit' });
process.exit(result.status ?? 1);

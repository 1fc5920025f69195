#!/usr/bin/env node
// `npm test`: format and lint (Biome), type-check the whole tree, then run every vitest project (unit and property tests,
// then the real-server suites on SQLite and MariaDB). Extra arguments go to vitest.
import { spawnSync } from 'node:child_process';

function run(command, args) {
  const result = spawnSync(command, args, { stdio: 'inherit', shell: false });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

run('npx', ['biome', 'ci', '--reporter=summary', '.']);
run('npx', ['tsc', '-p', 'tsconfig.json', '--noEmit']);
run('npx', ['vitest', 'run', ...process.argv.slice(2)]);

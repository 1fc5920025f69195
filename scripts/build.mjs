#!/usr/bin/env node
// `npm run build`: every published workspace into its `dist/` (ESM, `.d.ts`, declaration and
// source maps). `tsc -b` builds the projects of tsconfig.build.json in reference order and
// incrementally; then the files tsc does not emit are copied or rendered next to the output:
// the generated validators (already JavaScript), the console's static files, the SQLite store's
// worker thread (JavaScript, started by file next to `store/sqlite-thread.js`), and the JSON
// rendering of the OpenAPI document. `--clean` first removes every `dist/`, so that nothing of a
// deleted source survives in what is packed (the consumer test builds that way).
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

const root = fileURLToPath(new URL('..', import.meta.url));
const at = (path) => `${root}${path}`;

if (process.argv.includes('--clean')) {
  for (const workspace of ['spec', 'generated', 'server', 'client', 'conformance'])
    rmSync(at(`${workspace}/dist`), { recursive: true, force: true });
}

// First, because the packages that import @orbit/generated compile against its dist/.
mkdirSync(at('generated/dist'), { recursive: true });
for (const file of ['validators.js', 'validators.d.ts']) cpSync(at(`generated/${file}`), at(`generated/dist/${file}`));

const tsc = spawnSync(process.execPath, [at('node_modules/typescript/bin/tsc'), '-b', at('tsconfig.build.json')], { stdio: 'inherit' });
if (tsc.status !== 0) process.exit(tsc.status ?? 1);

cpSync(at('server/src/console/static'), at('server/dist/console/static'), { recursive: true });
cpSync(at('server/src/store/sqlite-worker.mjs'), at('server/dist/store/sqlite-worker.mjs'));
mkdirSync(at('spec/dist'), { recursive: true });
writeFileSync(at('spec/dist/openapi.json'), `${JSON.stringify(parse(readFileSync(at('spec/openapi.yaml'), 'utf8')), null, 2)}\n`);

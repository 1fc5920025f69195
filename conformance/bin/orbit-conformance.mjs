#!/usr/bin/env node
// The `orbit-conformance` command. An installed package runs its build (`dist/`). Inside the Orbit
// repository, recognised by the package's tsconfig.build.json (which is not published), it runs
// the TypeScript sources through tsx instead: no build step, never a stale one.
import { existsSync } from 'node:fs';

let cli;
if (existsSync(new URL('../tsconfig.build.json', import.meta.url))) {
  const { registerSources } = await import('../../scripts/dev-sources.mjs');
  registerSources();
  cli = await import('../src/cli.ts');
} else {
  cli = await import('../dist/cli.js');
}
process.exitCode = await cli.main(process.argv.slice(2));

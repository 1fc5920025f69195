#!/usr/bin/env node
// The `orbit` command. An installed package runs its build (`dist/`). Inside the Orbit repository,
// recognised by the package's tsconfig.build.json (which is not published), it runs the TypeScript
// sources through tsx instead: the development loop needs no build and never runs a stale one.
import { existsSync } from 'node:fs';

let cli;
if (existsSync(new URL('../tsconfig.build.json', import.meta.url))) {
  const { registerSources } = await import('../../scripts/dev-sources.mjs');
  registerSources();
  cli = await import('../src/cli/main.ts');
} else {
  cli = await import('../dist/cli/main.js');
}
// A command that failed sets the exit code; `serve` and `dev` keep the process alive with their listeners.
const code = await cli.main(process.argv.slice(2));
if (code !== 0) process.exit(code);

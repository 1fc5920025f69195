#!/usr/bin/env node
// Thin launcher: the suite is TypeScript, loaded through tsx so it needs no build step.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/cli.ts');
process.exitCode = await main(process.argv.slice(2));

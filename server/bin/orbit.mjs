#!/usr/bin/env node
// Thin launcher: the CLI is TypeScript, loaded through tsx so the repo needs no build step.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/main.ts');

import { defineConfig } from 'vitest/config';
import { sourceResolution } from './vitest.config.ts';

// The Galera cluster suite: `npm run test:galera` (`.ci/run` runs it right after `npm test`). Its
// global setup boots three mariadbd on fixed loopback ports (scripts/galera.sh), so it is apart
// from `npm test`: two runs on one machine at once would collide. One file at a time: a node crash
// in one file must not land in another file's test.
export default defineConfig({
  ...sourceResolution,
  test: {
    reporters: ['default', './scripts/summary-reporter.ts'],
    include: ['server/test/galera/**/*.test.ts'],
    globalSetup: ['server/test/galera/setup.ts'],
    testTimeout: 240_000,
    hookTimeout: 120_000,
    fileParallelism: false,
  },
});

import { defineConfig } from 'vitest/config';
import { sourceResolution } from './vitest.config.ts';

// The deployment suite: `npm run test:cluster` (`.ci/run` runs it after `npm test` and
// `npm run test:galera`). Orbit behind HAProxy, an Orbit node cut from its database, and Galera
// partitions with each node in a network namespace of its own (docs/operations.md, "Tested
// topology"). It needs root (network namespaces) and Debian's haproxy and socat, which its global
// setup installs when they are missing. One file at a time: a partition must not land in another
// file's test, and one Galera cluster at a time is what two cores carry.
export default defineConfig({
  ...sourceResolution,
  test: {
    reporters: ['default', './scripts/summary-reporter.ts'],
    include: ['server/test/haproxy.test.ts', 'server/test/partition.test.ts', 'server/test/cluster/**/*.test.ts'],
    globalSetup: ['server/test/cluster/setup.ts'],
    testTimeout: 240_000,
    hookTimeout: 300_000,
    fileParallelism: false,
  },
});

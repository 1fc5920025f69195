import { defaultServerConditions } from 'vite';
import { defineConfig } from 'vitest/config';

/**
 * The workspaces resolve each other to their TypeScript sources (the `@orbit/source` export
 * condition), so tests never run a stale `dist/`. Processes that tests spawn get the same
 * condition through NODE_OPTIONS (their launchers load the sources through tsx).
 */
const SOURCE_CONDITION = '@orbit/source';
process.env.NODE_OPTIONS = [process.env.NODE_OPTIONS, `--conditions=${SOURCE_CONDITION}`].filter(Boolean).join(' ');

// Two projects: fast unit and property tests (pure code, no sockets), then the suites that start
// real servers on both stores. `npm test` runs both; `npx vitest run --project unit` runs the first.
/** How every vitest config of the repository resolves the workspaces (vitest.galera.config.ts too). */
export const sourceResolution = {
  resolve: { conditions: [SOURCE_CONDITION, ...defaultServerConditions] },
  ssr: { resolve: { conditions: [SOURCE_CONDITION, ...defaultServerConditions], externalConditions: [SOURCE_CONDITION] } },
};

export default defineConfig({
  ...sourceResolution,
  test: {
    reporters: ['default', './scripts/summary-reporter.ts'],
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          // Unit and property tests run first, then the real-server suites.
          sequence: { groupOrder: 0 },
          include: [
            'spec/**/*.test.ts',
            'scripts/**/*.test.ts',
            '{server,client,conformance}/src/**/*.test.ts',
            'testing/test/**/*.test.ts',
          ],
          testTimeout: 60_000,
        },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          sequence: { groupOrder: 1 },
          include: ['{server,client,conformance}/test/**/*.test.ts', 'consumer/**/*.test.ts'],
          // The Galera cluster suite and the deployment suite (balancer, partitions) have configs of
          // their own: vitest.galera.config.ts and vitest.cluster.config.ts.
          exclude: [
            'server/test/galera/**',
            'server/test/cluster/**',
            'server/test/haproxy.test.ts',
            'server/test/partition.test.ts',
            '**/node_modules/**',
          ],
          testTimeout: 120_000,
          hookTimeout: 60_000,
          // Real servers and databases: two cores, so at most two files at once.
          maxWorkers: 2,
        },
      },
    ],
  },
});

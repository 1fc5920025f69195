import { defineConfig } from 'vitest/config';

// Two projects: fast unit and property tests (pure code, no sockets), then the suites that start
// real servers on both stores. `npm test` runs both; `npx vitest run --project unit` runs the first.
export default defineConfig({
  test: {
    reporters: ['default', './scripts/summary-reporter.ts'],
    projects: [
      {
        test: {
          name: 'unit',
          // Unit and property tests run first, then the real-server suites.
          sequence: { groupOrder: 0 },
          include: ['spec/**/*.test.ts', 'scripts/**/*.test.ts', '{server,client,conformance}/src/**/*.test.ts'],
          testTimeout: 60_000,
        },
      },
      {
        test: {
          name: 'integration',
          sequence: { groupOrder: 1 },
          include: ['{server,client,conformance}/test/**/*.test.ts'],
          // The Galera cluster suite has a config of its own (vitest.galera.config.ts).
          exclude: ['server/test/galera/**', '**/node_modules/**'],
          testTimeout: 120_000,
          hookTimeout: 60_000,
          // Real servers and databases: two cores, so at most two files at once.
          maxWorkers: 2,
        },
      },
    ],
  },
});

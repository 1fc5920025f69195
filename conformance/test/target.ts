/**
 * Test support: our own server (in process, through @orbit/testing) as a conformance
 * target, with one credential per role, the timings the suite is told about, and a RunEnvironment
 * that points at it (or at a proxy in front of it).
 */
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { bootstrapRoles, parseConfig, type RunEnvironment, type SuiteConfig } from '../src/index.ts';
import { startTestServer, type StoreKind, type TestServer } from '@orbit/testing';

/** Server settings shortened so that expiry cases take about a second. */
export const SERVER_ENV: Record<string, string> = {
  ORBIT_LEASE_DURATION_MS: '1000',
  ORBIT_HEARTBEAT_INTERVAL_MS: '400',
  ORBIT_IDLE_TIMEOUT_MS: '1500',
  ORBIT_HELLO_TIMEOUT_MS: '1000',
  ORBIT_WRITE_TIMEOUT_MS: '2000',
  ORBIT_MAX_CONNECTIONS: '12',
  ORBIT_REQUEST_TIMEOUT_MS: '1500',
  ORBIT_POLL_INTERVAL_MS: '50',
};

/** The same settings as the suite's `timing`, `limits` and `features`. */
export const SUITE_SETTINGS = {
  timing: {
    leaseDurationMs: 1000,
    heartbeatIntervalMs: 400,
    idleTimeoutMs: 1500,
    helloTimeoutMs: 1000,
    writeTimeoutMs: 2000,
    requestTimeoutMs: 1500,
    quietMs: 400,
  },
  limits: { maxConnections: 12 },
  features: [
    'results-http',
    'batch-publish',
    'connection-limit',
    'subscription-limit',
    'request-timeout',
    'history',
    'queue-list',
    'attempt-budget',
  ],
};

/**
 * A CLI configuration for a server that is already running at `baseUrl` on `databaseUrl`:
 * credentials through `<orbit> bootstrap`, retention through `<orbit> prune` (`orbit` is the
 * command that runs the orbit CLI), and the suite's settings.
 */
export function runningServerConfig(baseUrl: string, orbit: string, databaseUrl: string): Record<string, unknown> {
  return {
    baseUrl,
    bootstrap: {
      command: `${orbit} bootstrap --namespace {namespace} --application {application} --queue conformance-a --queue conformance-b --permissions {permissions} --json --database '${databaseUrl}'`,
    },
    publish: { method: 'http' },
    retention: { command: `${orbit} prune --before-sequence {before_sequence} --database '${databaseUrl}'` },
    attemptBudget: { command: attemptBudgetCommand(databaseUrl, `node ${JSON.stringify(ATTEMPT_BUDGET_SCRIPT)}`) },
    ...SUITE_SETTINGS,
    features: [...SUITE_SETTINGS.features, 'retention'],
  };
}

/** Sets a delivery's attempts and budget in Orbit's database (the `attempt-budget` feature). */
const ATTEMPT_BUDGET_SCRIPT = fileURLToPath(new URL('./fixtures/orbit-attempt-budget.mjs', import.meta.url));

function attemptBudgetCommand(databaseUrl: string, script: string): string {
  return (
    `${script} --database '${databaseUrl}' ` +
    '--subscription {subscription_id} --delivery {delivery_id} --attempts {attempts} --budget {attempt_budget}'
  );
}

export interface Target {
  readonly server: TestServer;
  /** A configuration object for the CLI (tokens and queue ids filled in). */
  readonly rawConfig: Record<string, unknown>;
  env(baseUrl?: string, overrides?: { seed?: number; numRuns?: number }): RunEnvironment;
  stop(): Promise<void>;
}

/** The repository root: commands in the configuration run there. */
const REPO = fileURLToPath(new URL('../..', import.meta.url));

/**
 * Starts our server on `kind`. With `retention`, the configuration also gets the prune command
 * (`orbit prune` on the same database) and declares the retention feature.
 */
export async function startTarget(kind: StoreKind, options: { retention?: boolean } = {}): Promise<Target> {
  const server = await startTestServer(kind, SERVER_ENV);
  const { credentials, queues } = await bootstrapRoles(({ namespace, application, queues, permissions }) =>
    server.bootstrap({ namespace, application, queues: [...queues], permissions: [...permissions] }),
  );
  const rawConfig: Record<string, unknown> = {
    baseUrl: server.url,
    credentials,
    queues,
    publish: { method: 'http' },
    ...SUITE_SETTINGS,
    attemptBudget: { command: attemptBudgetCommand(server.database.url, 'node conformance/test/fixtures/orbit-attempt-budget.mjs') },
    cwd: REPO,
  };
  if (options.retention) {
    rawConfig.retention = {
      command: `node server/bin/orbit.mjs prune --before-sequence {before_sequence} --database '${server.database.url}'`,
    };
    rawConfig.features = [...SUITE_SETTINGS.features, 'retention'];
  }
  const config: SuiteConfig = parseConfig(rawConfig, REPO);
  return {
    server,
    rawConfig,
    env(baseUrl = server.url, overrides = {}) {
      return {
        config: { ...config, baseUrl },
        vars: {},
        seed: overrides.seed ?? 42,
        numRuns: overrides.numRuns ?? 25,
        runTag: randomBytes(3).toString('hex'),
      };
    },
    stop: () => server.stop(),
  };
}

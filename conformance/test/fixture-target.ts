/**
 * Test support: the independent fixture server (fixture-server/) in process, with one credential
 * per role, as a conformance target. Commands of the configuration (pruning, attempt budgets) go
 * through the fixture's admin client, as in spawn mode.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bootstrapRoles, parseConfig, type RunEnvironment } from '../src/index.ts';
import { type Fault, parseFaults } from './fixture-server/faults.ts';
import { FIXTURE_TIMING, type RunningFixture, startFixture } from './fixture-server/server.ts';

const FIXTURE_DIR = fileURLToPath(new URL('./fixture-server/', import.meta.url));

export interface FixtureTarget {
  readonly fixture: RunningFixture;
  env(overrides?: { seed?: number; numRuns?: number }): RunEnvironment;
  stop(): Promise<void>;
}

export async function startFixtureTarget(faults: readonly Fault[] = []): Promise<FixtureTarget> {
  const fixture = await startFixture({ faults: parseFaults(faults) });
  const dir = mkdtempSync(join(tmpdir(), 'orbit-fixture-'));
  const tokenFile = join(dir, 'admin-token');
  writeFileSync(tokenFile, fixture.adminToken);
  // The fixture's own queue names: its admin client (admin.mjs) uses the same ones.
  const { credentials, queues } = await bootstrapRoles(async ({ namespace, permissions }) => {
    const { credential, queueIds } = fixture.state.addCredential(namespace, permissions, ['queue-a', 'queue-b']);
    return { token: credential.token, credential_id: credential.id, queue_ids: queueIds };
  });
  const admin = `node admin.mjs --base-url ${fixture.url} --admin-token-file ${tokenFile}`;
  const config = parseConfig(
    {
      baseUrl: fixture.url,
      credentials,
      queues,
      publish: { method: 'http' },
      retention: { command: `${admin} prune --before-sequence {before_sequence}` },
      attemptBudget: {
        command:
          `${admin} attempt-budget --subscription {subscription_id} --delivery {delivery_id} --attempts {attempts} --budget ` +
          `{attempt_budget}`,
      },
      timing: {
        leaseDurationMs: FIXTURE_TIMING.leaseMs,
        heartbeatIntervalMs: FIXTURE_TIMING.heartbeatMs,
        idleTimeoutMs: FIXTURE_TIMING.idleMs,
        helloTimeoutMs: FIXTURE_TIMING.helloMs,
        writeTimeoutMs: FIXTURE_TIMING.writeMs,
        requestTimeoutMs: FIXTURE_TIMING.requestTimeoutMs,
        quietMs: 400,
      },
      limits: { maxConnections: 12 },
      features: ['results-http', 'retention', 'connection-limit', 'subscription-limit', 'request-timeout', 'attempt-budget'],
    },
    FIXTURE_DIR,
  );
  return {
    fixture,
    env: (overrides = {}) => ({
      config,
      vars: {},
      seed: overrides.seed ?? 42,
      numRuns: overrides.numRuns ?? 25,
      runTag: randomBytes(3).toString('hex'),
    }),
    async stop() {
      await fixture.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

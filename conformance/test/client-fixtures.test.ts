/**
 * Client mode judges clients, not just our SDK: the fixture client (test/fixture-client/client.mjs)
 * passes every case without faults, and each planted fault is caught by exactly the cases meant
 * for it, with the grade of their level, and by no other; the Python adapter
 * (adapters/python/orbit_adapter.py, Debian's python3-websockets) passes every case.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLIENT_CASES, type ClientEnvironment, loadClientConfig, runClientSuite } from '../src/client/index.ts';
import type { RunReport } from '../src/index.ts';
import { REPO } from './cli.ts';

const FIXTURE = loadClientConfig(join(REPO, 'conformance/test/fixture-client/fixture.yaml'));
const PYTHON_WEBSOCKETS = '/usr/lib/python3/dist-packages/websockets/__init__.py';

/** Each fault, and the cases that must catch it (every other case must pass). */
const FAULTS: Record<string, readonly string[]> = {
  'ack-before-store': ['client.ack-after-store'],
  'dedupe-by-task': ['client.dedupe-by-event-id'],
  'guessed-epoch': ['client.no-guessed-epoch'],
  'no-heartbeat': ['client.heartbeat-while-delivering', 'client.ping-unanswered'],
  // Every stop row of the close table, in every phase (src/client/cases-close.ts), is about this
  // fault: a client that reconnects after a fatal close fails each of them, and rightly.
  'reconnect-on-fatal': [
    ...['1000', '1008', '4000'].flatMap((code) =>
      ['', '-before-welcome', '-mid-delivery', '-before-ack-reply'].map((phase) => `client.stop-after-${code}${phase}`),
    ),
    'client.history-expired',
    'client.unauthenticated-mid-session',
    'client.permission-denied-mid-session',
    // So is every refusal of the upgrade that is final (src/client/cases-upgrade.ts).
    'client.stop-on-426',
    'client.stop-on-401',
    'client.stop-on-403',
  ],
  'token-in-url': ['client.no-credential-in-url'],
  'ignore-retry-after': ['client.retry-after-429-longer'],
};

/**
 * Six cases at once: the fixture is light, and one case after another would take a minute per run.
 * Six clients on two cores can fire a timer a few hundred ms late, so the heartbeat is 1 s here, not
 * the default 500 ms: `client.heartbeat-while-delivering` then tolerates 750 ms of lateness and
 * still catches one missed ping, and no innocent fault fails it by timing.
 */
function run(env: ClientEnvironment, target: string): Promise<RunReport> {
  return runClientSuite({
    cases: CLIENT_CASES,
    env: { ...env, quietMs: 1_000, heartbeatIntervalMs: 1_000 },
    target,
    concurrency: 6,
  });
}

/** The cases that did not pass, with their outcome. */
function caught(report: RunReport): Record<string, string> {
  return Object.fromEntries(report.results.filter((r) => r.outcome !== 'passed').map((r) => [r.id, r.outcome]));
}

describe('client mode against the fixture client', () => {
  it('passes every case without a fault', async () => {
    expect(caught(await run(FIXTURE, 'fixture'))).toEqual({});
  });

  it.each(Object.entries(FAULTS))('catches --fault %s with exactly its cases', async (fault, cases) => {
    const env = { ...FIXTURE, program: { ...FIXTURE.program, command: [...FIXTURE.program.command, '--fault', fault] } };
    const report = await run(env, `fixture --fault ${fault}`);
    // A MUST case fails the run; a SHOULD case is graded non-strict (it fails the run with --strict).
    const expected = Object.fromEntries(
      cases.map((id) => [id, CLIENT_CASES.find((c) => c.id === id)?.level === 'SHOULD' ? 'non-strict' : 'failed']),
    );
    expect(caught(report)).toEqual(expected);
    expect(report.ok).toBe(!Object.values(expected).includes('failed'));
  });
});

describe('client mode against the Python adapter', () => {
  it('passes every case', async () => {
    // npm test (scripts/test.mjs) installs python3-websockets when it is missing.
    expect(existsSync(PYTHON_WEBSOCKETS), 'apt-get install -y python3-websockets').toBe(true);
    const report = await run(loadClientConfig(join(REPO, 'conformance/adapters/python/client.yaml')), 'python');
    expect(caught(report)).toEqual({});
    expect(report.results).toHaveLength(CLIENT_CASES.length);
  });
});

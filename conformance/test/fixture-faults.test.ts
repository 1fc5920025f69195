/**
 * Proof against a server we did not write: the independent fixture (fixture-server/) with one
 * planted fault at a time. Each fault must be caught by the right case with the right message,
 * while a control case still passes. Also: a crash mid-run stops the run (exit 3, naming the case
 * during which the server died and the last case that passed, with the process's exit status and
 * output); a welcome that contradicts the configured timings stops it before it starts (exit 2,
 * naming the setting); a reply without reply_to fails each affected case at once, not after a
 * timeout; known-failing entries are precise and known-flaky failures do not fail the run.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ALL_CASES, ConfigError, parseKnownFailing, type RunReport, runSuite } from '../src/index.ts';
import { createServer } from 'node:net';
import type { Fault } from './fixture-server/faults.ts';
import { startFixture } from './fixture-server/server.ts';
import { startFixtureTarget } from './fixture-target.ts';
import { runCli } from './cli.ts';

const FIXTURE_DIR = fileURLToPath(new URL('./fixture-server/', import.meta.url));

interface Planted {
  readonly fault: Fault;
  /** Each case that must fail, with the message it must fail with. */
  readonly caught: Readonly<Record<string, RegExp>>;
  readonly control: readonly string[];
}

const PLANTED: readonly Planted[] = [
  {
    fault: 'retire-ignores-pending',
    caught: { 'retire.blocked-by-pending-delivery': /retire with a PENDING delivery: expected HTTP 409 STATE_CONFLICT, got HTTP 200/ },
    control: ['retire.blocked-by-open-delivery'],
  },
  {
    fault: 'retire-ignores-expired',
    caught: { 'retire.blocked-by-expired-delivery': /retire with an EXPIRED delivery: expected HTTP 409 STATE_CONFLICT, got HTTP 200/ },
    control: ['retire.blocked-by-open-delivery'],
  },
  {
    fault: 'cache-control',
    caught: {
      'envelope.cache-control-no-store': /: Cache-Control is "no-cache", expected no-store/,
      'upgrade.refusal-envelope': /426: Cache-Control is "no-cache"/,
    },
    control: ['envelope.request-id-header'],
  },
  {
    fault: 'retry-ignores-budget-cap',
    caught: {
      'deliveries.retry-budget-cap': /a retry adding 51 attempts to a budget of 999950: expected HTTP 409 STATE_CONFLICT, got HTTP 200/,
    },
    control: ['deliveries.retry-expired'],
  },
  {
    fault: 'no-write-timeout',
    caught: { 'session.write-timeout': /the server kept the connection open although the client read nothing for \d+ ms/ },
    control: ['session.welcome'],
  },
  {
    fault: 'late-ack-refused',
    caught: { 'ack.late-ack-after-expiry': /the late ACK was refused: .*"DELIVERY_LEASE_LOST"/ },
    control: ['ack.success'],
  },
  {
    fault: 'types-ignored',
    caught: {
      'ack.types-filter':
        /delivered \w+ \(task\.succeeded\), \w+ \(task\.cancelled\); expected \w+ \(task\.failed\), \w+ \(task\.needs_review\)/,
      'retire.nonmatching-results-do-not-block': /retire with only non-matching results: expected HTTP 200, got HTTP 409/,
    },
    control: ['ack.success'],
  },
  {
    fault: 'duplicate-keys-accepted',
    caught: {
      'json.duplicate-key-rejected': /create with "name" twice: expected HTTP 400 INVALID_ARGUMENT, got HTTP 201/,
      'json.prop-duplicate-keys':
        /counterexample, as sent: POST \/v1\/subscriptions \{.*\n.*expected HTTP 400 INVALID_ARGUMENT, got HTTP 201/,
    },
    control: ['json.unknown-field-rejected'],
  },
  {
    fault: 'no-hello-timeout',
    caught: {
      'session.hello-timeout':
        /without hello \(timing\.helloTimeoutMs is 1000: .*\): expected the server to close the connection within \d+ ms; it stayed open/,
    },
    control: ['session.welcome'],
  },
  {
    fault: 'capacity-ignored',
    caught: { 'ack.capacity-respected': /a third delivery arrived on a connection of capacity 2/ },
    control: ['ack.success'],
  },
  {
    fault: 'stale-revision-accepted',
    caught: {
      'subscriptions.stale-revision-conflict':
        /configure with expected_revision 1 at revision 2: expected HTTP 409 STATE_CONFLICT, got HTTP 200/,
    },
    control: ['subscriptions.pause-resume-revision'],
  },
  {
    fault: 'lenient-lease-secret',
    // A leniently decoded alias is either the proof (accepted) or another secret (lease lost): both are caught.
    caught: {
      'ack.prop-noncanonical-secret': new RegExp(
        String.raw`counterexample, as sent: frame \{.*"type":"event\.ack".*"lease_secret".*\n.*` +
          '(the ACK was accepted|expected INVALID_ARGUMENT or a 1008 close, got .*DELIVERY_LEASE_LOST)',
      ),
    },
    control: ['ack.success'],
  },
  {
    fault: 'reused-message-id',
    caught: { 'session.fresh-message-ids': /a server frame reuses a client message_id|distinct server message_ids/ },
    control: ['heartbeat.ping-reply'],
  },
];

function outcomes(report: RunReport): Record<string, string> {
  return Object.fromEntries(report.results.map((r) => [r.id, r.outcome]));
}

/** The fixture's spawn-mode configuration with the fault switched on, written to a temporary file. */
function configWith(fault: Fault): string {
  const config = JSON.parse(readFileSync(join(FIXTURE_DIR, 'conformance.json'), 'utf8'));
  config.server.env = { FIXTURE_FAULTS: fault };
  config.cwd = FIXTURE_DIR;
  const path = join(mkdtempSync(join(tmpdir(), 'orbit-fixture-config-')), 'conformance.json');
  writeFileSync(path, JSON.stringify(config));
  return path;
}

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

describe('the suite against the independent fixture with planted faults', () => {
  for (const planted of PLANTED) {
    it(`catches ${planted.fault}`, async () => {
      const target = await startFixtureTarget([planted.fault]);
      try {
        const report = await runSuite({ cases: ALL_CASES, env: target.env(), only: [...Object.keys(planted.caught), ...planted.control] });
        const byId = new Map(report.results.map((r) => [r.id, r]));
        for (const [id, message] of Object.entries(planted.caught)) {
          expect(byId.get(id)?.outcome, `${id} must fail against ${planted.fault}`).toBe('failed');
          expect(byId.get(id)?.message).toMatch(message);
        }
        for (const id of planted.control) expect(byId.get(id)?.outcome, `${id} must still pass: ${byId.get(id)?.message}`).toBe('passed');
        expect(report.ok).toBe(false);
      } finally {
        await target.stop();
      }
    });
  }

  it('fails each case that waits for a reply without reply_to at once, not after the reply timeout', async () => {
    const target = await startFixtureTarget(['missing-reply-to']);
    try {
      const report = await runSuite({ cases: ALL_CASES, env: target.env(), only: ['session.*', 'heartbeat.ping-reply', 'ack.success'] });
      const failed = report.results.filter((r) => r.outcome === 'failed');
      expect(failed.length).toBeGreaterThanOrEqual(10);
      for (const r of failed) {
        expect(r.message, r.id).toMatch(/must have required property 'reply_to'|no frame named the request \w+ in reply_to/);
        // The reply timeout is 5 s: a case that failed sooner stopped waiting when the frame came.
        expect(r.durationMs, r.id).toBeLessThan(5_000);
      }
      expect(report.preflight).toMatch(/could not be made|received no events\.welcome/);
    } finally {
      await target.stop();
    }
  });

  it('reports a listed case that fails for another reason as a new failure, and a known-flaky failure as flaky', async () => {
    const target = await startFixtureTarget(['cache-control']);
    try {
      const only = ['envelope.cache-control-no-store'];
      const other = await runSuite({
        cases: ALL_CASES,
        env: target.env(),
        only,
        knownFailing: parseKnownFailing('envelope.cache-control-no-store /GET \\/healthz/  # a proxy rewrites the health route\n'),
      });
      expect(outcomes(other)).toEqual({ 'envelope.cache-control-no-store': 'failed' });
      expect(other.results[0]?.message).toContain('but it failed differently: a new failure');
      const flaky = await runSuite({
        cases: ALL_CASES,
        env: target.env(),
        only: [...only, 'upgrade.refusal-envelope'],
        skip: ['upgrade.*'],
        knownFlaky: parseKnownFailing('envelope.cache-control-no-store /Cache-Control is/  # our CDN sometimes rewrites it\n'),
      });
      expect(outcomes(flaky)).toEqual({ 'envelope.cache-control-no-store': 'flaky', 'upgrade.refusal-envelope': 'skipped' });
      expect(flaky.results[1]?.message).toBe('skipped by --skip');
      expect(flaky.ok).toBe(true);
      expect(flaky.counts).toMatchObject({ failed: 1, flaky: 1, unexpected: 0 });
    } finally {
      await target.stop();
    }
  });

  it('stops before the first case when the welcome contradicts the configured timings, naming the setting', async () => {
    const target = await startFixtureTarget(['wrong-lease-duration']);
    try {
      const run = runSuite({ cases: ALL_CASES, env: target.env(), only: ['session.welcome'] });
      await expect(run).rejects.toThrow(ConfigError);
      await expect(run).rejects.toThrow(
        /lease_duration_ms 30000, but the configuration says timing\.leaseDurationMs: 1000; set timing\.leaseDurationMs: 30000/,
      );
    } finally {
      await target.stop();
    }
    const { status, stderr } = await runCli(['--config', configWith('wrong-lease-duration'), '--only', 'session.welcome']);
    expect(status, stderr).toBe(2);
    expect(stderr).toContain('set timing.leaseDurationMs: 30000');
  });

  it('stops the run when the server dies mid-run: exit 3, the case it died in, the last that passed, its exit and output', async () => {
    const { status, stdout, stderr } = await runCli(['--config', configWith('crash-on-oversize'), '--only', 'session.*']);
    expect(status, stdout + stderr).toBe(3);
    expect(stdout).toContain('The server stopped answering during session.oversize-frame-closes');
    expect(stdout).toContain('last case that passed: session.malformed-frame-closes;');
    expect(stdout).toContain('the server process: exit code 70');
    expect(stdout).toContain('| fixture: a frame above 512 KiB arrived; crashing on purpose');
    expect(stdout).toMatch(/FAIL {2}MUST {3}session\.oversize-frame-closes/);
    // Nothing after the crash was run, so nothing else is blamed for it.
    expect(stdout).not.toContain('session.frame-at-limit-accepted');
    expect(stdout).not.toContain('ECONNREFUSED\n    at');
  });

  it('waits for a server that is still starting with --wait-ready, and says so when it was not asked to wait', async () => {
    const port = await freePort();
    const dir = mkdtempSync(join(tmpdir(), 'orbit-fixture-late-'));
    const tokenFile = join(dir, 'admin-token');
    const spawned = JSON.parse(readFileSync(join(FIXTURE_DIR, 'conformance.json'), 'utf8'));
    const admin = `node admin.mjs --base-url http://127.0.0.1:${port} --admin-token-file ${tokenFile}`;
    const config = join(dir, 'conformance.json');
    writeFileSync(
      config,
      JSON.stringify({
        baseUrl: `http://127.0.0.1:${port}`,
        bootstrap: { command: `${admin} credentials --namespace {namespace} --permissions {permissions}` },
        publish: { method: 'http' },
        timing: spawned.timing,
        cwd: FIXTURE_DIR,
      }),
    );
    const early = await runCli(['--config', config, '--only', 'session.welcome']);
    expect(early.status, early.stdout + early.stderr).toBe(2);
    expect(early.stderr).toContain('--wait-ready SECONDS waits for one that is starting');
    const late = runCli(['--config', config, '--only', 'session.welcome', '--wait-ready', '60']);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const fixture = await startFixture({ port });
    writeFileSync(tokenFile, fixture.adminToken);
    try {
      const { status, stdout, stderr } = await late;
      expect(status, stdout + stderr).toBe(0);
      expect(stdout.trimEnd().split('\n').at(-1)).toBe('1 passed, 0 failed');
    } finally {
      await fixture.stop();
    }
  });
});

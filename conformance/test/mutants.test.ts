/**
 * Proof that the suite can fail: our server behind a mutating proxy that breaks one rule at a time.
 * For each mutant the cases that check the broken rule must fail, and a control case must still
 * pass; through a transparent proxy all of them pass. Also: the known-failing ratchet, seed replay
 * of a property counterexample, and the CLI pointed at an already running server.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify as toYaml } from 'yaml';
import { ALL_CASES, parseKnownFailing, runSuite, type CaseResult, type RunReport } from '../src/index.ts';
import { startProxy, randomId, type Mutations, type RunningProxy } from './proxy.ts';
import { REPO, runCli } from './cli.ts';
import { startTarget, type Target } from './target.ts';

function json(text: string): any {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Leniently decodes a base64/base64url text and re-encodes it canonically (what a sloppy server does). */
function canonicalSecret(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  const cleaned = value.replace(/\s|=/g, '').replace(/\+/g, '-').replace(/\//g, '_');
  const bytes = Buffer.from(cleaned, 'base64url');
  return bytes.length === 32 ? bytes.toString('base64url') : value;
}

/** Accepts "01", "+1", "1.0", 1 and friends as the canonical decimal string. */
function canonicalUint(value: unknown): unknown {
  if (typeof value === 'number' && Number.isInteger(value) && value >= 0) return String(value);
  if (typeof value === 'string' && /^\s*\+?0*[0-9]+(\.0*)?\s*$/.test(value))
    return BigInt(value.trim().replace(/^\+/, '').replace(/\.0*$/, '')).toString();
  return value;
}

function rewriteJsonBody(body: Buffer, rewrite: (value: any) => void): Buffer {
  const value = json(body.toString('utf8'));
  if (value === undefined || value === null || typeof value !== 'object') return body;
  rewrite(value);
  return Buffer.from(JSON.stringify(value));
}

interface Mutant {
  readonly name: string;
  readonly breaks: string;
  readonly mutations: Mutations;
  readonly mustFail: readonly string[];
  readonly control: readonly string[];
}

const MUTANTS: readonly Mutant[] = [
  {
    name: 'strip-cache-control',
    breaks: 'Cache-Control: no-store on every response',
    mutations: {
      response(res) {
        delete res.headers['cache-control'];
      },
    },
    mustFail: ['envelope.cache-control-no-store', 'upgrade.refusal-envelope'],
    control: ['envelope.request-id-header'],
  },
  {
    name: 'reparse-json',
    breaks: 'strict JSON: bodies pass through JSON.parse/JSON.stringify, so duplicates vanish and numbers are rewritten',
    mutations: {
      request(req) {
        if (req.body.byteLength > 0 && String(req.headers['content-type'] ?? '').includes('json'))
          req.body = rewriteJsonBody(req.body, () => {});
      },
    },
    mustFail: [
      'json.duplicate-key-rejected',
      'json.escaped-duplicate-key-rejected',
      'json.nested-duplicate-key-rejected',
      'json.prop-duplicate-keys',
      'json.result-bytes-preserved',
    ],
    control: ['json.unknown-field-rejected'],
  },
  {
    name: 'canonicalize-uint64',
    breaks: 'canonical uint64: "01", "+1", "1.0" and numbers are accepted as revisions',
    mutations: {
      request(req) {
        if (req.body.byteLength === 0) return;
        req.body = rewriteJsonBody(req.body, (v) => {
          for (const k of ['expected_revision', 'from_sequence']) if (k in v) v[k] = canonicalUint(v[k]);
        });
      },
    },
    mustFail: ['json.prop-uint64-noncanonical', 'json.uint64-as-number-rejected'],
    control: ['subscriptions.pause-resume-revision'],
  },
  {
    name: 'lenient-query',
    breaks: 'query-string rules: unknown parameters are dropped and repeats collapsed instead of refused',
    mutations: {
      request(req) {
        const url = new URL(req.target, 'http://x');
        const allowed =
          url.pathname === '/v1/subscriptions' && req.method === 'GET'
            ? ['queue_id', 'limit', 'cursor']
            : url.pathname.endsWith('/deliveries')
              ? ['limit', 'cursor', 'state']
              : [];
        const kept = new URLSearchParams();
        for (const [k, v] of url.searchParams) if (allowed.includes(k) && !kept.has(k)) kept.set(k, v);
        const query = kept.toString();
        req.target = url.pathname + (query ? `?${query}` : '');
      },
    },
    mustFail: [
      'envelope.unknown-query-rejected',
      'envelope.repeated-query-rejected',
      'envelope.query-on-write-rejected',
      'envelope.prop-bad-query',
      'upgrade.url-parameters-rejected',
    ],
    control: ['subscriptions.list-order-and-pages'],
  },
  {
    name: 'queue-list-leaks',
    breaks: "the queue list: GET /v1/queues also lists a queue the credential may not name (another namespace's)",
    mutations: {
      response(res, req) {
        if (req.method !== 'GET' || new URL(req.target, 'http://x').pathname !== '/v1/queues' || res.status !== 200) return;
        const envelope = json(res.body.toString('utf8'));
        envelope.data.items.push({ id: randomId(), name: 'someone-elses', created_at: '2000-01-01T00:00:00.000Z' });
        res.body = Buffer.from(JSON.stringify(envelope));
      },
    },
    mustFail: ['subscriptions.queue-list-own-scope'],
    control: ['subscriptions.list-own-in-queue'],
  },
  {
    name: 'not-found-as-forbidden',
    breaks: 'NOT_FOUND for resources outside the scope: 404 becomes 403 PERMISSION_DENIED',
    mutations: {
      response(res) {
        if (res.status !== 404) return;
        res.status = 403;
        res.body = Buffer.from(res.body.toString('utf8').replace('"NOT_FOUND"', '"PERMISSION_DENIED"'));
      },
    },
    mustFail: ['subscriptions.other-credential-not-found', 'faults.unknown-id-not-found', 'deliveries.detail-scoped-to-subscription'],
    control: ['subscriptions.create-defaults'],
  },
  {
    name: 'lease-lost-as-success',
    breaks: 'DELIVERY_LEASE_LOST: an ACK with a wrong or replaced proof gets a success reply',
    mutations: {
      clientFrame(text, state) {
        const f = json(text);
        if (f?.type === 'event.ack') state.memory.set(`ack:${f.message_id}`, f.body);
        return text;
      },
      serverFrame(text, state) {
        const f = json(text);
        if (f?.type === 'event.deliver') state.memory.set(`event:${f.body.delivery.id}`, f.body.event.id);
        if (f?.type !== 'error' || f.error?.code !== 'DELIVERY_LEASE_LOST' || !f.reply_to) return text;
        const ack = state.memory.get(`ack:${f.reply_to}`) as { delivery_id: string; epoch: string } | undefined;
        if (!ack) return text;
        const eventId = (state.memory.get(`event:${ack.delivery_id}`) as string | undefined) ?? randomId();
        return JSON.stringify({
          protocol_version: '1',
          type: 'ack',
          message_id: randomId(),
          reply_to: f.reply_to,
          session_id: f.session_id,
          body: {
            delivery_id: ack.delivery_id,
            event_id: eventId,
            epoch: ack.epoch,
            acknowledged_at: new Date().toISOString(),
            deduplicated: false,
          },
        });
      },
    },
    mustFail: ['ack.wrong-secret-lease-lost', 'ack.guessed-epoch-lease-lost', 'ack.replaced-epoch-lease-lost'],
    control: ['ack.success'],
  },
  {
    name: 'canonicalize-proofs',
    breaks: 'canonical proofs: ACK secrets and epochs are decoded leniently, so aliases of the real proof acknowledge',
    mutations: {
      clientFrame(text) {
        const f = json(text);
        if (f?.type !== 'event.ack' || typeof f.body !== 'object' || f.body === null) return text;
        f.body.lease_secret = canonicalSecret(f.body.lease_secret);
        f.body.epoch = canonicalUint(f.body.epoch);
        return JSON.stringify(f);
      },
    },
    mustFail: ['ack.prop-noncanonical-secret', 'ack.prop-noncanonical-epoch'],
    control: ['ack.success'],
  },
  {
    name: 'reused-message-id',
    breaks: 'fresh message ids: replies reuse the request message_id',
    mutations: {
      serverFrame(text) {
        const f = json(text);
        if (!f?.reply_to) return text;
        f.message_id = f.reply_to;
        return JSON.stringify(f);
      },
    },
    mustFail: ['session.fresh-message-ids', 'session.welcome'],
    control: ['heartbeat.ping-reply'],
  },
];

function outcomes(report: RunReport): Record<string, CaseResult['outcome']> {
  return Object.fromEntries(report.results.map((r) => [r.id, r.outcome]));
}

function describeFailures(report: RunReport): string {
  return report.results
    .filter((r) => r.outcome !== 'passed')
    .map((r) => `${r.id}: ${r.outcome}: ${r.message}`)
    .join('\n');
}

describe('the suite against deliberately broken servers', () => {
  let target: Target;
  const proxies: RunningProxy[] = [];

  async function through(mutations: Mutations): Promise<string> {
    const proxy = await startProxy(target.server.url, mutations);
    proxies.push(proxy);
    return proxy.url;
  }

  beforeAll(async () => {
    target = await startTarget('sqlite');
  });

  afterAll(async () => {
    for (const p of proxies) await p.close();
    await target?.stop();
  });

  it('passes every targeted case through a transparent proxy', async () => {
    const only = [...new Set(MUTANTS.flatMap((m) => [...m.mustFail, ...m.control]))];
    const report = await runSuite({ cases: ALL_CASES, env: target.env(await through({})), profile: 'orbit', only });
    expect(report.results.length).toBe(only.length);
    expect(describeFailures(report)).toBe('');
  });

  for (const mutant of MUTANTS) {
    it(`catches ${mutant.name} (${mutant.breaks})`, async () => {
      const report = await runSuite({
        cases: ALL_CASES,
        env: target.env(await through(mutant.mutations)),
        profile: 'orbit',
        only: [...mutant.mustFail, ...mutant.control],
      });
      const got = outcomes(report);
      for (const id of mutant.mustFail) expect(got[id], `${id} must fail against ${mutant.name}`).toBe('failed');
      for (const id of mutant.control)
        expect(got[id], `${id} must still pass against ${mutant.name}: ${describeFailures(report)}`).toBe('passed');
      expect(report.ok).toBe(false);
    });
  }

  it('reports the counterexample as the frame actually sent, the seed and the replay line, and replays it with the same seed', async () => {
    const url = await through(MUTANTS.find((m) => m.name === 'canonicalize-proofs')!.mutations);
    const run = () =>
      runSuite({ cases: ALL_CASES, env: target.env(url, { seed: 1234, numRuns: 20 }), only: ['ack.prop-noncanonical-epoch'] });
    const [first, second] = [await run(), await run()];
    const a = first.results[0]!;
    const b = second.results[0]!;
    expect(a.outcome).toBe('failed');
    expect(a.message).toMatch(/counterexample, as sent: frame \{"protocol_version":"1","type":"event\.ack",.*"epoch":/);
    expect(a.message).toContain('replay: --seed 1234 --num-runs 20 --only ack.prop-noncanonical-epoch');
    expect(a.property?.sent).toMatch(/^frame \{.*"type":"event\.ack"/);
    // The same generated value; the ids around it are new on every run.
    expect(b.property?.value).toBe(a.property?.value);
    expect(b.property?.seed).toBe(a.property?.seed);
    expect(a.evidence.some((e) => e.kind === 'ws-frame' && e.direction === 'sent' && e.text.includes('event.ack'))).toBe(true);
  });

  it('ratchets known failures: a failure as listed is expected, a listed pass is stale and fails the run', async () => {
    const url = await through(MUTANTS[0]!.mutations);
    const knownFailing = parseKnownFailing(
      '# the proxy strips Cache-Control\nenvelope.cache-control-no-store /Cache-Control is null/\nenvelope.healthz assert  # listed ' +
        'although it passes\n',
    );
    const report = await runSuite({
      cases: ALL_CASES,
      env: target.env(url),
      profile: 'orbit',
      only: ['envelope.cache-control-no-store', 'envelope.healthz'],
      knownFailing,
    });
    expect(outcomes(report)).toEqual({ 'envelope.cache-control-no-store': 'known-failing', 'envelope.healthz': 'stale' });
    expect(report.counts).toMatchObject({ passed: 0, failed: 2, knownFailing: 1, stale: 1, unexpected: 1 });
    expect(report.ok).toBe(false);
    const onlyKnown = await runSuite({
      cases: ALL_CASES,
      env: target.env(url),
      only: ['envelope.cache-control-no-store'],
      knownFailing: knownFailing.slice(0, 1),
    });
    expect(onlyKnown.ok).toBe(true);
  });

  it('reports a listed case that fails for another reason than the listed one as a new failure', async () => {
    const url = await through(MUTANTS[0]!.mutations);
    const report = await runSuite({
      cases: ALL_CASES,
      env: target.env(url),
      only: ['envelope.cache-control-no-store'],
      knownFailing: parseKnownFailing('envelope.cache-control-no-store /GET \\/healthz/  # our load balancer rewrites the health route\n'),
    });
    expect(report.results[0]?.outcome).toBe('failed');
    expect(report.results[0]?.message).toContain('but it failed differently: a new failure');
    expect(report.ok).toBe(false);
  });

  it('runs as a CLI against an already running server (YAML config, reports, exit codes, stale entries)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'orbit-conformance-cli-'));
    writeFileSync(join(dir, 'conformance.yaml'), toYaml(target.rawConfig));
    writeFileSync(join(dir, 'known-failing.txt'), 'envelope.healthz /./  # deliberately stale\n');
    const cli = (args: string[]) => runCli(['--config', join(dir, 'conformance.yaml'), ...args]);

    const ok = await cli([
      '--profile',
      'orbit',
      '--only',
      'envelope.c*,envelope.r*,upgrade.protocol-required',
      '--report-dir',
      join(dir, 'reports'),
      '--seed',
      '7',
    ]);
    expect(ok.status, ok.stdout + ok.stderr).toBe(0);
    const lines = ok.stdout.trimEnd().split('\n');
    expect(lines.at(-1)).toMatch(/^\d+ passed, 0 failed$/);
    const report = JSON.parse(readFileSync(join(dir, 'reports/report.json'), 'utf8')) as RunReport;
    expect(report.seed).toBe(7);
    expect(report.results.map((r) => r.id)).toContain('upgrade.protocol-required');
    expect(report.results[0]).toMatchObject({
      cites: [expect.objectContaining({ ref: expect.stringMatching(/^§\d+\.\d+$/) })],
      outcome: 'passed',
      durationMs: expect.any(Number),
      evidence: expect.any(Array),
    });
    expect(readFileSync(join(dir, 'reports/junit.xml'), 'utf8')).toMatch(/<testsuites name="orbit-conformance" tests="\d+" failures="0"/);
    expect(readFileSync(join(dir, 'reports/report.html'), 'utf8')).toContain('<h1>Orbit conformance</h1>');
    expect(readFileSync(join(dir, 'reports/summary.txt'), 'utf8').trimEnd().split('\n').at(-1)).toBe(lines.at(-1));

    const stale = await cli([
      '--profile',
      'orbit',
      '--only',
      'envelope.healthz,envelope.request-id-header',
      '--known-failing',
      join(dir, 'known-failing.txt'),
    ]);
    expect(stale.status, stale.stdout + stale.stderr).toBe(1);
    expect(stale.stdout).toContain('STALE');
    expect(stale.stdout.trimEnd().split('\n').at(-1)).toBe('1 passed, 1 failed');

    const skipped = await cli(['--only', 'retention.*']);
    expect(skipped.status, skipped.stdout + skipped.stderr).toBe(0);
    // retention.unacked-event-kept is an Orbit choice, outside the default seed profile.
    expect(skipped.stdout.trimEnd().split('\n').at(-1)).toBe('0 passed, 0 failed, 2 skipped');

    const usage = await cli(['--only', 'no.such-case']);
    expect(usage.status).toBe(2);
    const orbitOnly = await cli(['--only', 'envelope.healthz']);
    expect(orbitOnly.status, 'an orbit case is not in the default seed profile').toBe(2);
    expect(orbitOnly.stderr).toContain('matches no case of the seed profile');

    // Results published by a shell command (the example publisher) instead of the HTTP seam.
    const byCommand = {
      ...target.rawConfig,
      publish: {
        method: 'command',
        command: `npx tsx conformance/examples/publish-with-orbit-cli.ts --database '${target.server.database.url}'`,
      },
      cwd: REPO,
    };
    writeFileSync(join(dir, 'conformance.yaml'), toYaml(byCommand));
    const published = await cli(['--only', 'json.result-bytes-preserved,ack.deliver-shape']);
    expect(published.status, published.stdout + published.stderr).toBe(0);
    expect(published.stdout.trimEnd().split('\n').at(-1)).toBe('2 passed, 0 failed');
  });
});

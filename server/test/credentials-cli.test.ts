/**
 * `orbit credentials list | revoke | rotate` as real processes against a running server's database,
 * on both stores: list never shows a token or a digest; after revoke HTTP answers 401; rotate
 * prints a new token for the same credential id (its subscriptions stay bound) and the old token
 * works for the grace period, then stops; a bad flag or an unknown id exits 2 and writes nothing.
 * The server authenticates from a cache at most 1 s old (server/src/store/principal-cache.ts), so
 * a change by the CLI process is awaited for up to 3 s.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../src/crypto.ts';
import type { BootstrapResult } from '../src/store/principal.ts';
import { api, type CliRun, eventually, runOrbit, startTestServer, STORES, subscribe, type TestServer } from '@orbit/testing';

describe.each(STORES)('orbit credentials on %s', (kind) => {
  let server: TestServer;
  let a: BootstrapResult;
  let b: BootstrapResult;
  let other: BootstrapResult;

  const credentials = (...args: string[]): Promise<CliRun> => runOrbit(['credentials', ...args, '--database', server.database.url]);
  const json = (run: CliRun): any => {
    expect(run.code, run.stderr).toBe(0);
    return JSON.parse(run.stdout);
  };
  /** An authenticated read: 200 while the token is accepted, 401 once it is not. */
  const status = async (token: string, queueId: string): Promise<number> =>
    (await api(server.url, 'GET', `/v1/subscriptions?queue_id=${queueId}`, { token })).status;
  /** Another process changed the credential: the server's cached principal lasts at most 1 s. */
  const refusedSoon = (token: string, queueId: string): Promise<boolean> =>
    eventually(async () => (await status(token, queueId)) === 401, 3000, 'a 401 within the staleness bound');

  beforeAll(async () => {
    server = await startTestServer(kind);
    a = await server.bootstrap({ namespace: 'ns', application: 'app', queues: ['q1', 'q2'] });
    b = await server.bootstrap({ namespace: 'ns', application: 'app2', queues: ['q1'], permissions: ['events:read'] });
    other = await server.bootstrap({ namespace: 'other', application: 'app', queues: ['q'] });
  });
  afterAll(async () => server?.stop());

  it('MUST list credentials with their scope and state, by namespace, never with a token or a digest', async () => {
    const [all, ns, text] = await Promise.all([
      credentials('list', '--json'),
      credentials('list', '--json', '--namespace', 'ns'),
      credentials('list'),
    ]);
    const listed = json(all).credentials;
    expect(listed.map((c: any) => c.credential_id)).toEqual([a.credential_id, b.credential_id, other.credential_id]);
    expect(listed[0]).toEqual({
      credential_id: a.credential_id,
      namespace: 'ns',
      namespace_id: a.namespace_id,
      application: 'app',
      application_id: a.application_id,
      permissions: a.permissions,
      queue_ids: a.queue_ids,
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      revoked_at: null,
      previous_token_expires_at: null,
    });
    expect(listed[1].permissions).toEqual(['events:read']);
    expect(json(ns).credentials.map((c: any) => c.credential_id)).toEqual([a.credential_id, b.credential_id]);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^ID +NAMESPACE +APPLICATION +PERMISSIONS +QUEUES +CREATED +REVOKED\n/);
    for (const c of [a, b, other]) expect(text.stdout).toContain(c.credential_id);
    for (const output of [all.stdout, ns.stdout, text.stdout]) {
      for (const c of [a, b, other]) {
        expect(output).not.toContain(c.token);
        expect(output).not.toContain(sha256Hex(c.token));
      }
      expect(output).not.toMatch(/orbit_[A-Za-z0-9_-]{43}/);
      expect(output).not.toMatch(/digest/i);
    }
  });

  it('MUST refuse a revoked credential over HTTP with 401; a second revoke reports it and changes nothing', async () => {
    const victim = await server.bootstrap({ namespace: 'ns', application: 'app', queues: ['q1'] });
    expect(await status(victim.token, victim.queue_ids.q1!)).toBe(200);
    const first = json(await credentials('revoke', victim.credential_id, '--json'));
    expect(first).toEqual({ credential_id: victim.credential_id, revoked_at: expect.any(String), already_revoked: false });
    expect(await refusedSoon(victim.token, victim.queue_ids.q1!)).toBe(true);
    const again = json(await credentials('revoke', victim.credential_id, '--json'));
    expect(again).toEqual({ ...first, already_revoked: true });
    const [listed] = json(await credentials('list', '--json')).credentials.filter((c: any) => c.credential_id === victim.credential_id);
    expect(listed.revoked_at).toBe(first.revoked_at);
    // The other credentials of the namespace are untouched.
    expect(await status(a.token, a.queue_ids.q1!)).toBe(200);
  });

  it('MUST rotate to a new token for the same credential id: its subscriptions stay bound, the old token stops within the staleness bound', async () => {
    const owner = await server.bootstrap({ namespace: 'ns', application: 'app', queues: ['q1'] });
    const queue = owner.queue_ids.q1!;
    const subscription = await subscribe(server.url, owner.token, queue);
    const rotated = json(await credentials('rotate', owner.credential_id, '--json'));
    expect(rotated).toEqual({
      credential_id: owner.credential_id,
      token: expect.stringMatching(/^orbit_/),
      previous_token_expires_at: null,
    });
    expect(rotated.token).not.toBe(owner.token);
    expect(await refusedSoon(owner.token, queue)).toBe(true);
    const read = await api(server.url, 'GET', `/v1/subscriptions/${subscription.id}`, {
      token: rotated.token,
      expect: 'validateSubscription',
    });
    expect(read.status).toBe(200);
    expect(read.json.data.credential_id).toBe(owner.credential_id);
    const listedIds = (await api(server.url, 'GET', `/v1/subscriptions?queue_id=${queue}`, { token: rotated.token })).json.data.items.map(
      (s: any) => s.id,
    );
    expect(listedIds).toEqual([subscription.id]);
  });

  it('MUST keep the old token working for the grace period, then refuse it; a second rotation ends the first grace at once', async () => {
    const owner = await server.bootstrap({ namespace: 'ns', application: 'app', queues: ['q1'] });
    const queue = owner.queue_ids.q1!;
    const first = json(await credentials('rotate', owner.credential_id, '--grace-seconds', '3600', '--json'));
    expect(Date.parse(first.previous_token_expires_at) - Date.now()).toBeGreaterThan(3_500_000);
    expect(await status(owner.token, queue)).toBe(200);
    expect(await status(first.token, queue)).toBe(200);
    // A long-lived session re-checks the token it authenticated with by its digest.
    const session = (await server.orbit.store.authenticate(owner.token))!;
    expect(session).toMatchObject({ credentialId: owner.credential_id, tokenDigest: sha256Hex(owner.token) });
    const [listed] = json(await credentials('list', '--json')).credentials.filter((c: any) => c.credential_id === owner.credential_id);
    expect(listed.previous_token_expires_at).toBe(first.previous_token_expires_at);

    const second = json(await credentials('rotate', owner.credential_id, '--grace-seconds', '1', '--json'));
    expect(await refusedSoon(owner.token, queue)).toBe(true);
    expect(await server.orbit.store.authenticateDigest(session.tokenDigest!)).toBeNull();
    expect(await status(second.token, queue)).toBe(200);
    // The token of the first rotation is now the previous one: it works for one second, then stops.
    await eventually(async () => (await status(first.token, queue)) === 401, 10_000, 'the grace period to end');
    expect(await status(second.token, queue)).toBe(200);
  });

  it('MUST exit 2 with a clear message for an unknown id or a bad flag, and write nothing', async () => {
    const revoked = await server.bootstrap({ namespace: 'ns', application: 'app', queues: ['q1'] });
    await server.orbit.store.revokeCredential(revoked.credential_id);
    const snapshot = async () => ({
      credentials: await server.orbit.store.db.all('SELECT * FROM credentials ORDER BY id'),
      queues: await server.orbit.store.db.all('SELECT * FROM credential_queues ORDER BY credential_id, queue_id'),
    });
    const before = await snapshot();
    const unknownId = 'f'.repeat(32);
    // Every refusal of the argument parser is covered by cli/credentials.test.ts; these are the
    // ones that only the database can decide, and one of each kind of bad flag.
    const cases: Array<[string[], RegExp]> = [
      [['revoke', unknownId], /no credential f{32}/],
      [['rotate', unknownId, '--grace-seconds', '60'], /no credential f{32}/],
      [['rotate', revoked.credential_id], /was revoked/],
      [['list', '--namespace', 'nope'], /no namespace named "nope"/],
      [['revoke', 'ABC'], /CREDENTIAL_ID must be 32 lower-case hex/],
      [['rotate', a.credential_id, '--grace-seconds', '1.5'], /--grace-seconds must be an integer/],
      [['revoke', a.credential_id, '--bogus'], /Unknown option '--bogus'/],
      [['retire', a.credential_id], /unknown credentials command "retire"/],
    ];
    for (let i = 0; i < cases.length; i += 4) {
      const runs = await Promise.all(cases.slice(i, i + 4).map(([args]) => credentials(...args)));
      runs.forEach((run, k) => {
        const [args, message] = cases[i + k]!;
        expect(run.code, `${args.join(' ')}: ${run.stderr}`).toBe(2);
        expect(run.stderr, args.join(' ')).toMatch(message);
        expect(run.stdout, args.join(' ')).toBe('');
      });
    }
    expect(await snapshot()).toEqual(before);
    expect(await status(a.token, a.queue_ids.q1!)).toBe(200);
  });
});

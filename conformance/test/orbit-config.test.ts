/**
 * `orbit conformance-config` against a fresh `orbit serve` on each store: one command creates the
 * credentials and queues and writes the configuration, a second run works too (and revokes what
 * the first wrote), and `orbit-conformance` then runs on that file with no edit: every role and
 * every declared feature present, so nothing is skipped.
 */
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { EXIT, loadConfig, ROLES } from '../src/index.ts';
import { runCli } from './cli.ts';
import { SERVER_ENV, SUITE_SETTINGS } from './target.ts';
import { freshDatabase, openStore, runOrbit, spawnServer, STORES, type TestDatabase } from '@orbit/testing';

/**
 * Cases that need every role and every feature the command declares (a case whose role or feature
 * is missing is skipped, and the tally would say so), and the over-limit body.
 */
const CASES = [
  'envelope.*',
  'subscriptions.*',
  'upgrade.*',
  'history.*',
  'faults.*',
  'idempotency.batch-publish-*',
  'idempotency.publish-key-conflict',
  'json.body-over-limit-rejected',
];

const dirs: string[] = [];
const databases: TestDatabase[] = [];

afterAll(async () => {
  for (const db of databases) await db.drop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe.each(STORES)('orbit conformance-config on %s', (kind) => {
  it('writes a configuration that orbit-conformance runs on as it is, twice in a row', async () => {
    const db = await freshDatabase(kind);
    databases.push(db);
    const dir = mkdtempSync(join(tmpdir(), 'orbit-conformance-config-'));
    dirs.push(dir);
    const out = join(dir, 'orbit-conformance.yaml');
    const server = await spawnServer(db.url, SERVER_ENV);
    try {
      // The settings reach the command as they reach the server: here, the environment.
      const write = () => runOrbit(['conformance-config', '--database', db.url, '--url', server.url, '--out', out], SERVER_ENV, 60_000);
      const first = await write();
      expect(first.code, first.stderr).toBe(0);
      const firstIds = Object.values(loadConfig(out).credentials).map((c) => c.credentialId);
      const second = await write();
      expect(second.code, second.stderr).toBe(0);
      expect(second.stdout).toContain('revoked the 7 of the configuration it replaced');

      const config = loadConfig(out);
      expect(Object.keys(config.credentials).sort()).toEqual(Object.keys(ROLES).sort());
      expect(config.queues).toEqual({ primary: expect.any(String), secondary: expect.any(String), otherNamespace: expect.any(String) });
      expect(config.timing).toMatchObject(SUITE_SETTINGS.timing);
      expect(config.limits).toEqual(SUITE_SETTINGS.limits);
      expect((parseYaml(readFileSync(out, 'utf8')) as { baseUrl: string }).baseUrl).toBe(server.url);
      expect(statSync(out).mode & 0o777, 'the tokens are readable by the owner only').toBe(0o600);

      const store = await openStore(db.url);
      try {
        const live = (await store.listCredentials())!.filter((c) => c.revokedAt === null).map((c) => c.credentialId);
        expect(live.sort()).toEqual(
          Object.values(config.credentials)
            .map((c) => c.credentialId)
            .sort(),
        );
        expect(firstIds.filter((id) => live.includes(id!))).toEqual([]);
      } finally {
        await store.close();
      }

      const run = await runCli(['--config', out, '--profile', 'orbit', '--only', CASES.join(',')]);
      expect(run.status, run.stdout + run.stderr).toBe(EXIT.ok);
      expect(run.stdout.trimEnd().split('\n').at(-1)).toMatch(/^\d+ passed, 0 failed(, \d+ info)?$/);
    } finally {
      await server.stop();
    }
  }, 240_000);
});

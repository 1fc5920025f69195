/**
 * Orbit's read-only views over real HTTP on both stores (spec/README.md, The credential's own
 * view): `GET /v1/queues` lists exactly the calling credential's queues, newest first and paged
 * with cursors bound to the credential; `GET /v1/credential` shows the credential without its
 * token; `GET /v1/settings` shows the node's effective settings with the secrets replaced.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SETTING_NAMES } from '../src/config.ts';
import type { BootstrapResult } from '../src/store/principal.ts';
import { api, type ApiResponse, startTestServer, STORES, type TestServer } from '@orbit/testing';

const METRICS_TOKEN = 'metrics-token-that-must-stay-on-the-node';

function expectError(res: ApiResponse, status: number, code: string): void {
  expect({ status: res.status, code: res.json?.error?.code }, res.text).toEqual({ status, code });
}

describe.each(STORES)('the credential and node views over HTTP (%s)', (kind) => {
  let server: TestServer;
  let owner: BootstrapResult;
  let neighbour: BootstrapResult;
  let stranger: BootstrapResult;
  let publisher: BootstrapResult;

  const get = (path: string, token: string, expect?: 'validateQueueList' | 'validateCredential' | 'validateSettings') =>
    api(server.url, 'GET', path, { token, ...(expect ? { expect } : {}) });

  beforeAll(async () => {
    server = await startTestServer(kind, {
      ORBIT_LEASE_DURATION_MS: '4321',
      ORBIT_METRICS: 'token',
      ORBIT_METRICS_TOKEN: METRICS_TOKEN,
    });
    owner = await server.bootstrap({ namespace: 'access', application: 'app', queues: ['alpha', 'beta', 'gamma'] });
    // Same namespace, one shared queue and one of its own; another namespace with a queue of the same name.
    neighbour = await server.bootstrap({ namespace: 'access', application: 'app-2', queues: ['gamma', 'delta'] });
    stranger = await server.bootstrap({ namespace: 'elsewhere', application: 'app', queues: ['alpha'] });
    publisher = await server.bootstrap({ namespace: 'access', application: 'app', queues: ['alpha'], permissions: ['results:publish'] });
  });

  afterAll(async () => {
    await server?.stop();
  });

  describe('GET /v1/queues', () => {
    it("lists exactly the credential's queues with their names, newest first", async () => {
      const res = await get('/v1/queues?limit=100', owner.token, 'validateQueueList');
      expect(res.status, res.text).toBe(200);
      const items: { id: string; name: string; created_at: string }[] = res.json.data.items;
      expect(Object.fromEntries(items.map((q) => [q.name, q.id]))).toEqual(owner.queue_ids);
      expect(res.json.data.next_cursor).toBeUndefined();
      const newestFirst = [...items].sort((a, b) => b.created_at.localeCompare(a.created_at) || b.id.localeCompare(a.id));
      expect(items.map((q) => q.id)).toEqual(newestFirst.map((q) => q.id));

      const theirs = (await get('/v1/queues', neighbour.token, 'validateQueueList')).json.data.items;
      expect(Object.fromEntries(theirs.map((q: { name: string; id: string }) => [q.name, q.id]))).toEqual(neighbour.queue_ids);
      expect(neighbour.queue_ids.gamma).toBe(owner.queue_ids.gamma);
      const other = (await get('/v1/queues', stranger.token, 'validateQueueList')).json.data.items;
      expect(other.map((q: { id: string }) => q.id)).toEqual([stranger.queue_ids.alpha]);
      expect(stranger.queue_ids.alpha).not.toBe(owner.queue_ids.alpha);
    });

    it('pages with next_cursor, and refuses a cursor of another credential or an altered one', async () => {
      const whole = (await get('/v1/queues', owner.token)).json.data.items.map((q: { id: string }) => q.id);
      const paged: string[] = [];
      let cursor: string | undefined;
      do {
        const res = await get(
          `/v1/queues?limit=1${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
          owner.token,
          'validateQueueList',
        );
        expect(res.status, res.text).toBe(200);
        expect(res.json.data.items).toHaveLength(1);
        paged.push(res.json.data.items[0].id);
        cursor = res.json.data.next_cursor;
      } while (cursor !== undefined && paged.length < 10);
      expect(paged).toEqual(whole);

      const first: string = (await get('/v1/queues?limit=1', owner.token)).json.data.next_cursor;
      expectError(await get(`/v1/queues?cursor=${encodeURIComponent(first)}`, neighbour.token), 400, 'INVALID_ARGUMENT');
      const altered = `${first.slice(0, -1)}${first.endsWith('A') ? 'B' : 'A'}`;
      expectError(await get(`/v1/queues?cursor=${encodeURIComponent(altered)}`, owner.token), 400, 'INVALID_ARGUMENT');
    });

    it('refuses bad queries, a missing token and a credential without events:read', async () => {
      for (const query of ['limit=0', 'limit=101', 'limit=01', 'queue_id=x', 'limit=1&limit=2', 'cursor='])
        expectError(await get(`/v1/queues?${query}`, owner.token), 400, 'INVALID_ARGUMENT');
      expectError(await api(server.url, 'GET', '/v1/queues'), 401, 'UNAUTHENTICATED');
      expectError(await get('/v1/queues', 'not-a-token'), 401, 'UNAUTHENTICATED');
      expectError(await get('/v1/queues', publisher.token), 403, 'PERMISSION_DENIED');
    });
  });

  describe('GET /v1/credential', () => {
    it('shows who the caller is and what it may do, never its token', async () => {
      const res = await get('/v1/credential', neighbour.token, 'validateCredential');
      expect(res.status, res.text).toBe(200);
      expect(res.json.data).toEqual({
        credential_id: neighbour.credential_id,
        namespace_id: neighbour.namespace_id,
        application_id: neighbour.application_id,
        permissions: [...neighbour.permissions].sort(),
        queue_count: 2,
      });
      expect(res.text).not.toContain(neighbour.token);
      expectError(await get('/v1/credential?verbose=1', owner.token), 400, 'INVALID_ARGUMENT');
      expectError(await get('/v1/credential', publisher.token), 403, 'PERMISSION_DENIED');
      expectError(await api(server.url, 'GET', '/v1/credential'), 401, 'UNAUTHENTICATED');
    });
  });

  describe('GET /v1/settings', () => {
    it("shows every setting of the node in the table's order, its effective value, and no secret", async () => {
      const res = await get('/v1/settings', owner.token, 'validateSettings');
      expect(res.status, res.text).toBe(200);
      const items: { name: string; value: unknown }[] = res.json.data.items;
      expect(items.map((s) => s.name)).toEqual(SETTING_NAMES.filter((name) => name !== 'config'));
      const value = Object.fromEntries(items.map((s) => [s.name, s.value]));
      expect(value).toMatchObject({
        lease_duration_ms: 4321,
        heartbeat_interval_ms: 15_000,
        listen: '127.0.0.1:0',
        database_url: server.database.url,
        metrics: 'token',
        metrics_token: '[redacted]',
        tls_cert: null,
        create_database: false,
      });
      expect(res.text).not.toContain(METRICS_TOKEN);
      expectError(await get('/v1/settings?name=listen', owner.token), 400, 'INVALID_ARGUMENT');
      expectError(await get('/v1/settings', publisher.token), 403, 'PERMISSION_DENIED');
      expectError(await api(server.url, 'GET', '/v1/settings'), 401, 'UNAUTHENTICATED');
    });
  });
});

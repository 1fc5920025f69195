/**
 * Health (docs/operations.md, Health checks): `/healthz` says the process is up; `/readyz` says the
 * node can serve — the database answers and every migration is applied — with the envelope, or 503
 * UNAVAILABLE. Real servers, both stores.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { api, startTestServer, STORES, type TestServer } from '@orbit/testing';

describe.each(STORES)('health on %s', (kind) => {
  let server: TestServer | undefined;

  afterEach(async () => {
    await server?.stop();
    server = undefined;
  });

  it('MUST answer /healthz and /readyz with the envelope, and refuse query parameters', async () => {
    server = await startTestServer(kind);
    const health = await api(server.url, 'GET', '/healthz', { expect: 'validateHealth' });
    expect(health.status).toBe(200);
    const ready = await api(server.url, 'GET', '/readyz', { expect: 'validateReadiness' });
    expect(ready.status).toBe(200);
    expect(ready.json.data).toEqual({ status: 'ready' });
    expect((await api(server.url, 'GET', '/readyz?verbose=1')).json.error.code).toBe('INVALID_ARGUMENT');
    // Metrics are off by default: the route does not exist.
    const metrics = await api(server.url, 'GET', '/metrics');
    expect(metrics.status).toBe(404);
    expect(metrics.json.error.code).toBe('NOT_FOUND');
  });

  it('MUST answer 503 UNAVAILABLE while a migration is missing, and 200 again once it is applied', async () => {
    server = await startTestServer(kind);
    const [row] = await server.orbit.store.db.all('SELECT version, name, applied_at FROM orbit_migrations ORDER BY version DESC LIMIT 1');
    await server.orbit.store.db.run('DELETE FROM orbit_migrations WHERE version = ?', [row!.version]);
    const refused = await api(server.url, 'GET', '/readyz');
    expect(refused.status).toBe(503);
    expect(refused.json.error.code).toBe('UNAVAILABLE');
    expect(refused.json.error.message).toMatch(/migrations/);
    expect(refused.headers.get('retry-after')).toBe('1');
    // /healthz only says the process is up.
    expect((await api(server.url, 'GET', '/healthz')).status).toBe(200);
    await server.orbit.store.db.run('INSERT INTO orbit_migrations (version, name, applied_at) VALUES (?, ?, ?)', [
      row!.version,
      row!.name,
      row!.applied_at,
    ]);
    expect((await api(server.url, 'GET', '/readyz')).status).toBe(200);
  });

  it('MUST answer 503 UNAVAILABLE when the database is unreachable, without its details', async () => {
    const running = await startTestServer(kind);
    try {
      await running.orbit.store.db.close();
      const refused = await api(running.url, 'GET', '/readyz');
      expect(refused.status).toBe(503);
      expect(refused.json.error).toEqual({ code: 'UNAVAILABLE', message: 'not ready: the database is unreachable' });
      expect((await api(running.url, 'GET', '/healthz')).status).toBe(200);
    } finally {
      await running.close().catch(() => undefined);
      await running.database.drop();
    }
  });

  it('MUST answer 503 once shutdown has begun', async () => {
    server = await startTestServer(kind);
    server.orbit.beginShutdown();
    const refused = await api(server.url, 'GET', '/readyz');
    expect(refused.status).toBe(503);
    expect(refused.json.error.message).toMatch(/shutting down/);
  });
});

/**
 * Logs (docs/operations.md, Logs): a real `orbit serve` process writes pino JSON lines with
 * `request_id` and `session_id`, at the level of `ORBIT_LOG_LEVEL`, and never a token, a lease
 * secret or a digest of either — checked by scanning everything the process wrote after a session
 * that handled all of them (including refused credentials and a wrong secret). Both stores.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { sha256Hex } from '../src/crypto.ts';
import { Store } from '../src/store/store.ts';
import {
  ALL_PERMISSIONS,
  api,
  freshDatabase,
  type OrbitProcess,
  publish,
  serveOrbit,
  STORES,
  subscribe,
  type TestDatabase,
  TestSocket,
} from '@orbit/testing';

const METRICS_TOKEN = 'metrics-token-for-the-log-test-0001';

describe.each(STORES)('logs on %s', (kind) => {
  let database: TestDatabase | undefined;
  let server: OrbitProcess | undefined;

  afterEach(async () => {
    await server?.stop('SIGKILL');
    await database?.drop();
    server = undefined;
    database = undefined;
  });

  it('MUST write JSON lines with request_id and session_id and never a token, lease secret or digest', async () => {
    database = await freshDatabase(kind);
    const store = await Store.open(database.url);
    const boot = await store.bootstrap({ namespace: 'ns', application: 'app', queues: ['q'], permissions: ALL_PERMISSIONS });
    await store.close();
    const queue = boot.queue_ids.q!;
    server = await serveOrbit(['--listen', '127.0.0.1:0', '--database', database.url], {
      ORBIT_LOG_LEVEL: 'trace',
      ORBIT_LEASE_DURATION_MS: '400',
      ORBIT_SWEEP_INTERVAL_MS: '100',
      ORBIT_METRICS: 'token',
      ORBIT_METRICS_TOKEN: METRICS_TOKEN,
    });
    const secrets = [boot.token, METRICS_TOKEN];

    const subscription = await subscribe(server.url, boot.token, queue);
    await publish(server.url, boot.token, queue, 1);
    expect((await api(server.url, 'GET', `/v1/subscriptions/${subscription.id}`, { token: `${boot.token}x` })).status).toBe(401);
    expect((await api(server.url, 'GET', '/readyz')).status).toBe(200);
    expect((await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).status).toBe(200);
    expect((await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}x` } })).status).toBe(401);
    const refused: any = await TestSocket.open(server.url, `${boot.token}x`).catch((e) => e);
    expect(refused.status).toBe(401);

    const socket = await TestSocket.open(server.url, boot.token);
    const welcome = await socket.hello(subscription.id);
    const first = await socket.deliver();
    secrets.push(first.body.lease_secret);
    // A wrong secret, then the lease runs out and the delivery comes again with a new secret.
    const wrong = first.body.lease_secret.replace(/^./, (c: string) => (c === 'A' ? 'B' : 'A'));
    secrets.push(wrong);
    expect((await socket.ack(first, { lease_secret: wrong })).error!.code).toBe('DELIVERY_LEASE_LOST');
    const second = await socket.deliver(5_000);
    secrets.push(second.body.lease_secret);
    expect((await socket.ack(second)).type).toBe('ack');
    expect((await socket.ack(first)).error!.code).toBe('DELIVERY_LEASE_LOST');
    socket.close();
    await socket.waitClosed();
    expect(await server.stop('SIGTERM')).toBe(0);

    const text = server.text();
    for (const secret of secrets) {
      expect(text).not.toContain(secret);
      expect(text).not.toContain(sha256Hex(secret));
    }
    const lines = text.split('\n').filter(Boolean);
    const entries = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    for (const entry of entries) {
      expect(typeof entry.time).toBe('string');
      expect(['trace', 'debug', 'info', 'warn', 'error', 'fatal']).toContain(entry.level);
      expect(typeof entry.msg).toBe('string');
    }
    const requests = entries.filter((e) => e.msg === 'request');
    expect(requests.length).toBeGreaterThanOrEqual(6);
    for (const r of requests) expect(r.request_id).toMatch(/^[0-9a-f]{32}$/);
    expect(requests.find((r) => r.route === '/v1/subscriptions/:target' && r.status === 401)).toBeDefined();
    expect(entries.find((e) => e.session_id === welcome.session_id && e.msg === 'event connection closed')).toBeDefined();
    expect(entries.find((e) => e.msg === 'shutdown complete')).toBeDefined();
  });
});

/**
 * Metrics (docs/operations.md, Metrics): `GET /metrics` in the Prometheus text format from the
 * server's own registry, counting what the engine and the API do, with the backlog computed at
 * scrape time; access by `ORBIT_METRICS` (off / open / token) and `ORBIT_METRICS_LISTEN`; refusals
 * keep the envelope rules. Real servers, both stores.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { validateErrorEnvelope } from '@orbit/generated';
import { METRICS } from '../src/ops/metrics.ts';
import { api, eventually, publish, startTestServer, STORES, subscribe, type TestServer, TestSocket } from '@orbit/testing';
import { sample, scrape } from './metrics-scrape.ts';

const METRICS_TOKEN = 'metrics-token-0123456789abcdef';

describe.each(STORES)('metrics on %s', (kind) => {
  const servers: TestServer[] = [];
  const sockets: TestSocket[] = [];

  afterEach(async () => {
    for (const s of sockets.splice(0)) s.close();
    for (const s of servers.splice(0)) await s.stop();
  });

  it('MUST count connections, claims, deliveries, ACK outcomes, latencies, HTTP requests, refused upgrades and the backlog', async () => {
    const server = await startTestServer(kind, { ORBIT_METRICS: 'open', ORBIT_POLL_INTERVAL_MS: '50' });
    servers.push(server);
    const boot = await server.bootstrap();
    const queue = boot.queue_ids.q!;
    const subscription = await subscribe(server.url, boot.token, queue);
    const backlogged = await subscribe(server.url, boot.token, queue, { max_pending: 5 });
    await publish(server.url, boot.token, queue, 3);

    const socket = await TestSocket.open(server.url, boot.token);
    sockets.push(socket);
    await socket.hello(subscription.id, 1);
    const first = await socket.deliver();
    expect((await socket.ack(first)).body.deduplicated).toBe(false);
    expect((await socket.ack(first)).body.deduplicated).toBe(true);
    const second = await socket.deliver();
    expect((await socket.ack(second, { lease_secret: first.body.lease_secret })).error!.code).toBe('DELIVERY_LEASE_LOST');
    const refused: any = await TestSocket.open(server.url, boot.token, { protocol: null }).catch((e) => e);
    expect(refused.status).toBe(426);
    // The second subscription is materialized by a claim: connect, receive one, leave.
    const other = await TestSocket.open(server.url, boot.token);
    sockets.push(other);
    await other.hello(backlogged.id, 1);
    await other.deliver();

    const { status, text, headers } = await scrape(server.url);
    expect(status).toBe(200);
    expect(headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(headers.get('cache-control')).toBe('no-store');
    expect(headers.get('x-request-id')).toMatch(/^[0-9a-f]{32}$/);
    for (const name of Object.keys(METRICS)) expect(text, name).toContain(`# HELP ${name} `);
    expect(text).toContain('# HELP process_cpu_seconds_total');

    expect(sample(text, 'orbit_event_connections')).toBe(2);
    expect(sample(text, 'orbit_event_sessions')).toBe(2);
    expect(sample(text, 'orbit_claims_total', { outcome: 'claimed' })).toBeGreaterThanOrEqual(3);
    expect(sample(text, 'orbit_claim_pool_depth')).toBeGreaterThanOrEqual(0);
    expect(sample(text, 'orbit_deliveries_sent_total')).toBe(3);
    expect(sample(text, 'orbit_acks_total', { outcome: 'new' })).toBe(1);
    expect(sample(text, 'orbit_acks_total', { outcome: 'deduplicated' })).toBe(1);
    expect(sample(text, 'orbit_acks_total', { outcome: 'lease_lost' })).toBe(1);
    expect(sample(text, 'orbit_publish_to_deliver_seconds_count')).toBe(3);
    expect(sample(text, 'orbit_deliver_to_ack_seconds_count')).toBe(1);
    expect(sample(text, 'orbit_http_requests_total', { method: 'POST', route: '/v1/subscriptions', code: '201' })).toBe(2);
    expect(sample(text, 'orbit_http_requests_total', { method: 'POST', route: '/v1/queues/:queue/results', code: '201' })).toBe(3);
    expect(sample(text, 'orbit_http_request_duration_seconds_count', { method: 'POST', route: '/v1/subscriptions' })).toBe(2);
    expect(sample(text, 'orbit_upgrades_rejected_total', { code: 'PROTOCOL_REQUIRED' })).toBe(1);
    expect(sample(text, 'orbit_result_log_head')).toBe(3);
    expect(sample(text, 'orbit_result_log_retention_boundary')).toBe(0);

    // Backlog at scrape time: each subscription holds 1 LEASED delivery; the rest of the log waits
    // until a session has room for it (results become deliveries when they are leased).
    const labels = (s: { id: string }) => ({ subscription_id: s.id, queue_id: queue });
    expect(sample(text, 'orbit_subscription_pending', labels(subscription))).toBe(1);
    expect(sample(text, 'orbit_subscription_pending', labels(backlogged))).toBe(1);
    expect(sample(text, 'orbit_subscription_oldest_unacked_age_seconds', labels(backlogged))).toBeGreaterThan(0);

    // Unmatched routes are one label, not one per path.
    await api(server.url, 'GET', '/no/such/path');
    const after = (await scrape(server.url)).text;
    expect(sample(after, 'orbit_http_requests_total', { method: 'GET', route: 'unmatched', code: '404' })).toBe(1);
    socket.close();
    other.close();
    await eventually(async () => sample((await scrape(server.url)).text, 'orbit_event_connections') === 0, 5_000, 'connections closed');
  });

  it('MUST require the metrics token when ORBIT_METRICS=token, with envelope refusals, and serve a separate ORBIT_METRICS_LISTEN only there', async () => {
    const server = await startTestServer(kind, { ORBIT_METRICS: 'token', ORBIT_METRICS_TOKEN: METRICS_TOKEN });
    servers.push(server);
    const boot = await server.bootstrap();
    for (const token of [undefined, 'metrics-token-wrong-0000000000', boot.token]) {
      const refused = await api(server.url, 'GET', '/metrics', token ? { headers: { authorization: `Bearer ${token}` } } : {});
      expect(refused.status).toBe(401);
      expect(refused.json.error.code).toBe('UNAUTHENTICATED');
    }
    expect((await api(server.url, 'GET', '/metrics?x=1', { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).status).toBe(400);
    const ok = await scrape(server.url, METRICS_TOKEN);
    expect(ok.status).toBe(200);
    expect(ok.text).toContain('orbit_claims_total');
    // The token never shows up in the output.
    expect(ok.text).not.toContain(METRICS_TOKEN);

    const separate = await startTestServer(kind, { ORBIT_METRICS: 'open', ORBIT_METRICS_LISTEN: '127.0.0.1:0' }, server.database);
    servers.unshift(separate);
    expect(separate.metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(separate.metricsUrl).not.toBe(separate.url);
    const main = await api(separate.url, 'GET', '/metrics');
    expect(main.status).toBe(404);
    const scraped = await scrape(separate.metricsUrl!);
    expect(scraped.status).toBe(200);
    expect(scraped.text).toContain('orbit_event_connections');
    const elsewhere = await fetch(`${separate.metricsUrl}/v1/subscriptions`);
    expect(elsewhere.status).toBe(404);
    expect(validateErrorEnvelope(JSON.parse(await elsewhere.text()))).toBe(true);
  });
});

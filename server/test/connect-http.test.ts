/**
 * `GET /v1/events/connect` over plain HTTP, without an upgrade: 426 PROTOCOL_REQUIRED with the
 * envelope and the headers that say how to upgrade, as the contract answers a missing upgrade.
 * Real servers, both stores.
 */
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, startTestServer, STORES, type TestServer } from '@orbit/testing';

describe.each(STORES)('plain HTTP on the connect path on %s', (kind) => {
  let server: TestServer;
  let token: string;

  beforeAll(async () => {
    server = await startTestServer(kind);
    token = (await server.bootstrap()).token;
  });
  afterAll(async () => server.stop());

  it('MUST answer a GET without Upgrade with 426 PROTOCOL_REQUIRED, the envelope and Upgrade: websocket', async () => {
    for (const t of [undefined, token]) {
      const answer = await api(server.url, 'GET', '/v1/events/connect', t ? { token: t } : {});
      expect(answer.status).toBe(426);
      expect(answer.json.error.code).toBe('PROTOCOL_REQUIRED');
      expect(answer.headers.get('upgrade')).toBe('websocket');
      expect(answer.headers.get('sec-websocket-protocol')).toBe('orbit.events.v1');
      expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
    }
  });

  it('MUST answer 426 also when only the Upgrade header is sent (no Connection: Upgrade, so no upgrade happens)', async () => {
    const url = new URL('/v1/events/connect', server.url);
    const answer = await new Promise<{ status: number; headers: Record<string, unknown>; body: string }>((resolve, reject) => {
      const req = request(url, { headers: { upgrade: 'websocket', 'sec-websocket-protocol': 'orbit.events.v1' } }, (res) => {
        let body = '';
        res.on('data', (chunk: Buffer) => (body += chunk.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      });
      req.on('error', reject);
      req.end();
    });
    expect(answer.status).toBe(426);
    expect(JSON.parse(answer.body).error.code).toBe('PROTOCOL_REQUIRED');
    expect(answer.headers['x-request-id']).toBe(JSON.parse(answer.body).request_id);
  });

  it('MUST keep other methods on the connect path NOT_FOUND, and the connection usable after a 426', async () => {
    const post = await api(server.url, 'POST', '/v1/events/connect', { token, key: 'k', body: {} });
    expect(post.status).toBe(404);
    expect((await api(server.url, 'GET', '/v1/events/connect')).status).toBe(426);
    expect((await api(server.url, 'GET', '/healthz')).status).toBe(200);
  });
});

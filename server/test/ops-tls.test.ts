/**
 * TLS (docs/operations.md, TLS): with a certificate and key (`ORBIT_TLS_CERT`/`ORBIT_TLS_KEY` or
 * `--tls-cert`/`--tls-key`) the server speaks HTTPS and WSS directly. A self-signed certificate for
 * 127.0.0.1 is made at test time with openssl; clients trust it through the `ca` option. Both
 * stores.
 */
import { request } from 'node:https';
import { readFileSync, rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { parseStrict } from '@orbit/spec/codec';
import { freshDatabase, selfSignedCertificate, serveOrbit, startTestServer, STORES, TASK, type TestServer } from '@orbit/testing';

interface Answer {
  readonly status: number;
  readonly json: any;
  readonly headers: Record<string, string | string[] | undefined>;
}

function https(
  base: string,
  ca: string | undefined,
  method: string,
  path: string,
  options: { token?: string; body?: unknown; key?: string } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const body = options.body === undefined ? undefined : JSON.stringify(options.body);
    const req = request(
      `${base}${path}`,
      {
        method,
        ...(ca ? { ca } : {}),
        headers: {
          ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
          ...(options.key ? { 'idempotency-key': options.key } : {}),
          ...(body ? { 'content-type': 'application/json' } : {}),
        },
      },
      (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode!, json: text ? parseStrict(text) : undefined, headers: res.headers }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

function wss(base: string, ca: string, token: string): Promise<WebSocket> {
  const ws = new WebSocket(`${base.replace(/^https/, 'wss')}/v1/events/connect`, 'orbit.events.v1', {
    ca,
    headers: { authorization: `Bearer ${token}` },
    perMessageDeflate: false,
  });
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve(ws));
    ws.once('error', reject);
  });
}

function nextFrame(ws: WebSocket, type: string): Promise<any> {
  return new Promise((resolve) => {
    const onMessage = (data: Buffer) => {
      const frame = JSON.parse(data.toString());
      if (frame.type !== type) return;
      ws.off('message', onMessage);
      resolve(frame);
    };
    ws.on('message', onMessage);
  });
}

const frame = (type: string, body: unknown, sessionId?: string) =>
  JSON.stringify({
    protocol_version: '1',
    type,
    message_id: Math.random().toString(16).slice(2).padEnd(32, '0').slice(0, 32),
    ...(sessionId ? { session_id: sessionId } : {}),
    body,
  });

describe.each(STORES)('TLS on %s', (kind) => {
  let tls: ReturnType<typeof selfSignedCertificate>;
  let ca: string;
  let server: TestServer;

  beforeAll(async () => {
    tls = selfSignedCertificate();
    ca = readFileSync(tls.cert, 'utf8');
    server = await startTestServer(kind, { ORBIT_TLS_CERT: tls.cert, ORBIT_TLS_KEY: tls.key, ORBIT_METRICS: 'open' });
  });
  afterAll(async () => {
    await server.stop();
    rmSync(tls.dir, { recursive: true, force: true });
  });

  it('MUST serve the API over HTTPS and orbit.events.v1 over WSS to a client that trusts the certificate', async () => {
    expect(server.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const health = await https(server.url, ca, 'GET', '/healthz');
    expect(health.status).toBe(200);
    expect(health.headers['cache-control']).toBe('no-store');
    expect((await https(server.url, ca, 'GET', '/readyz')).json.data).toEqual({ status: 'ready' });

    const boot = await server.bootstrap();
    const queue = boot.queue_ids.q!;
    const created = await https(server.url, ca, 'POST', '/v1/subscriptions', {
      token: boot.token,
      key: 'tls-sub',
      body: { name: 'over-tls', queue_id: queue },
    });
    expect(created.status).toBe(201);
    const published = await https(server.url, ca, 'POST', `/v1/queues/${queue}/results`, {
      token: boot.token,
      key: 'tls-pub',
      // biome-ignore lint/correctness/noPrecisionLoss: the literal is the point: JSON.stringify writes its double
      body: { type: 'task.succeeded', task_id: TASK, task_revision: '1', result: 12345678901234567890123 },
    });
    expect(published.status).toBe(201);

    const ws = await wss(server.url, ca, boot.token);
    try {
      const welcomed = nextFrame(ws, 'events.welcome');
      ws.send(frame('events.hello', { subscription_id: created.json.data.subscription.id, capacity: 1 }));
      const welcome = await welcomed;
      const deliver = await nextFrame(ws, 'event.deliver');
      expect(deliver.body.event.sequence).toBe(published.json.data.event.sequence);
      const acked = nextFrame(ws, 'ack');
      ws.send(
        frame(
          'event.ack',
          { delivery_id: deliver.body.delivery.id, epoch: deliver.body.delivery.lease_epoch, lease_secret: deliver.body.lease_secret },
          welcome.session_id,
        ),
      );
      expect((await acked).body.deduplicated).toBe(false);
    } finally {
      ws.close();
    }
  });

  it('MUST refuse clients that do not trust the certificate, and plain HTTP on the TLS port', async () => {
    await expect(https(server.url, undefined, 'GET', '/healthz')).rejects.toThrow(/self[- ]signed|certificate/i);
    await expect(fetch(`${server.url.replace(/^https/, 'http')}/healthz`)).rejects.toThrow();
  });
});

describe('TLS from the command line', () => {
  it('MUST serve HTTPS with --tls-cert/--tls-key, and stop with exit code 2 naming the setting when the key is missing', async () => {
    const tls = selfSignedCertificate();
    const database = await freshDatabase('sqlite');
    try {
      const server = await serveOrbit([
        '--listen',
        '127.0.0.1:0',
        '--database',
        database.url,
        '--tls-cert',
        tls.cert,
        '--tls-key',
        tls.key,
      ]);
      try {
        expect(server.url).toMatch(/^https:/);
        expect((await https(server.url, readFileSync(tls.cert, 'utf8'), 'GET', '/healthz')).status).toBe(200);
      } finally {
        expect(await server.stop()).toBe(0);
      }
      const broken = await serveOrbit(['--listen', '127.0.0.1:0', '--database', database.url, '--tls-cert', tls.cert]).catch(
        (e: Error) => e,
      );
      expect(broken).toBeInstanceOf(Error);
      expect((broken as Error).message).toMatch(/exited with 2/);
      expect((broken as Error).message).toMatch(/--tls-cert is set without tls_key/);
    } finally {
      rmSync(tls.dir, { recursive: true, force: true });
      await database.drop();
    }
  });
});

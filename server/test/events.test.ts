/**
 * The orbit.events.v1 engine over real sockets, on both stores (spec/rules.md#s5-1 to #s7-24).
 * Every server frame is checked against the generated serverFrame validator by TestSocket.
 *
 * Longer than 400 lines: one describe per stage of a session (upgrade, session, liveness, delivery
 * and ACK, leases, retention) on one tuned server per store and one socket helper; splitting would
 * scatter that shared setup.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  api,
  configure as configureAt,
  eventually,
  publish as publishAt,
  startTestServer,
  STORES,
  subscribe as subscribeAt,
  TASK,
  type TestServer,
  TestSocket,
} from '@orbit/testing';

// The suite's own servers are TestServers; the shared fixtures take a base URL.
const publish = (server: TestServer, token: string, queueId: string, n = 1, type = 'task.succeeded') =>
  publishAt(server.url, token, queueId, n, type);
const subscribe = (server: TestServer, token: string, queueId: string, extra: Record<string, unknown> = {}) =>
  subscribeAt(server.url, token, queueId, extra);
const configure = (server: TestServer, token: string, sub: { id: string }, enabled: boolean) =>
  configureAt(server.url, token, sub.id, enabled);

describe.each(STORES)('events on %s', (kind) => {
  let server: TestServer;
  let token: string;
  let queueId: string;
  const sockets: TestSocket[] = [];

  async function open(t: string | null = token, options?: Parameters<typeof TestSocket.open>[2]): Promise<TestSocket> {
    const socket = await TestSocket.open(server.url, t, options);
    sockets.push(socket);
    return socket;
  }

  beforeAll(async () => {
    server = await startTestServer(kind, {
      ORBIT_LEASE_DURATION_MS: '800',
      ORBIT_MAX_CONNECTIONS: '12',
      ORBIT_POLL_INTERVAL_MS: '50',
      ORBIT_ALLOWED_ORIGINS: 'https://console.example',
    });
    const boot = await server.bootstrap();
    token = boot.token;
    queueId = boot.queue_ids.q!;
  });
  afterEach(() => {
    for (const s of sockets.splice(0)) {
      expect(s.invalid).toEqual([]);
      s.close();
    }
  });
  afterAll(async () => server.stop());

  describe('upgrade', () => {
    it('MUST require the orbit.events.v1 subprotocol (426 PROTOCOL_REQUIRED with the envelope)', async () => {
      const error: any = await open(token, { protocol: null }).catch((e) => e);
      expect(error.status).toBe(426);
      expect(JSON.parse(error.body).error.code).toBe('PROTOCOL_REQUIRED');
      expect(error.headers['cache-control']).toBe('no-store');
    });

    it('MUST authenticate with the Authorization header and require events:consume', async () => {
      expect(((await open(null).catch((e) => e)) as any).status).toBe(401);
      expect(((await open('orbit_wrong').catch((e) => e)) as any).status).toBe(401);
      const reader = await server.bootstrap({ permissions: ['events:read', 'events:manage'] });
      const refused: any = await open(reader.token).catch((e) => e);
      expect(refused.status).toBe(403);
      expect(JSON.parse(refused.body).error.code).toBe('PERMISSION_DENIED');
    });

    it('MUST refuse query parameters and cross-origin requests; same-origin and listed origins pass', async () => {
      const query: any = await open(token, { path: `/v1/events/connect?access_token=${token}` }).catch((e) => e);
      expect(query.status).toBe(400);
      const cross: any = await open(token, { headers: { origin: 'https://evil.example' } }).catch((e) => e);
      expect(cross.status).toBe(403);
      const host = new URL(server.url).host;
      const same = await open(token, { headers: { origin: `http://${host}` } });
      const listed = await open(token, { headers: { origin: 'https://console.example' } });
      expect(same.closed).toBeNull();
      expect(listed.closed).toBeNull();
      expect(same.upgradeHeaders['cache-control']).toBe('no-store');
      expect(same.upgradeHeaders['x-request-id']).toMatch(/^[0-9a-f]{32}$/);
      expect(same.upgradeHeaders['sec-websocket-protocol']).toBe('orbit.events.v1');
    });

    it('MUST refuse connections beyond ORBIT_MAX_CONNECTIONS with 429 and Retry-After: 1', async () => {
      const held = [];
      for (let i = 0; i < 12; i++) held.push(await open());
      const refused: any = await open().catch((e) => e);
      expect(refused.status).toBe(429);
      expect(refused.headers['retry-after']).toBe('1');
      expect(JSON.parse(refused.body).error.code).toBe('CAPACITY_EXCEEDED');
      for (const s of held) s.close();
      await eventually(async () => (await open().catch(() => null)) ?? false, 5000, 'a free connection slot');
    });
  });

  describe('session', () => {
    it('MUST answer hello with welcome carrying a server-generated session_id and the configured durations', async () => {
      const sub = await subscribe(server, token, queueId);
      const s = await open();
      const welcome = await s.hello(sub.id, 3);
      expect(welcome.type).toBe('events.welcome');
      expect(welcome.session_id).toMatch(/^[0-9a-f]{32}$/);
      expect(welcome.body).toMatchObject({
        session_id: welcome.session_id,
        subscription_id: sub.id,
        capacity: 3,
        lease_duration_ms: 800,
        heartbeat_interval_ms: 15000,
        enabled: true,
      });
    });

    it('MUST refuse another credential’s subscription with NOT_FOUND, no session_id, and close', async () => {
      const sub = await subscribe(server, token, queueId);
      const other = await server.bootstrap({ application: 'other-app' });
      const s = await open(other.token);
      const id = s.send('events.hello', { subscription_id: sub.id, capacity: 1 });
      const error = await s.reply(id);
      expect(error.type).toBe('error');
      expect(error.error!.code).toBe('NOT_FOUND');
      expect(error.session_id).toBeUndefined();
      expect((await s.waitClosed()).code).toBe(1008);
    });

    it('MUST refuse capacity outside 1–32 with INVALID_ARGUMENT', async () => {
      const sub = await subscribe(server, token, queueId);
      for (const capacity of [0, 33]) {
        const s = await open();
        const id = s.send('events.hello', { subscription_id: sub.id, capacity });
        expect((await s.reply(id)).error!.code).toBe('INVALID_ARGUMENT');
        await s.waitClosed();
      }
    });

    it('MUST close with 1008 on binary frames, broken JSON, duplicate keys, and a wrong session_id', async () => {
      const sub = await subscribe(server, token, queueId);
      const cases: Array<(s: TestSocket) => void> = [
        (s) => s.sendRaw(Buffer.from('{}'), true),
        (s) => s.sendRaw('{not json'),
        (s) =>
          s.sendRaw(
            `{"protocol_version":"1","type":"events.ping","message_id":"${'a'.repeat(32)}","session_id":"${s.sessionId}","body":{},"body":{}}`,
          ),
        (s) =>
          s.sendRaw(
            JSON.stringify({
              protocol_version: '1',
              type: 'events.ping',
              message_id: 'b'.repeat(32),
              session_id: 'c'.repeat(32),
              body: {},
            }),
          ),
      ];
      for (const sendBad of cases) {
        const s = await open();
        await s.hello(sub.id);
        sendBad(s);
        expect((await s.waitClosed()).code).toBe(1008);
      }
    });

    it('MUST close a connection that sends a frame over 512 KiB (closed by ws with 1009)', async () => {
      const sub = await subscribe(server, token, queueId);
      const s = await open();
      await s.hello(sub.id);
      s.send('events.ping', { padding: 'x'.repeat(512 * 1024) });
      expect((await s.waitClosed()).code).toBe(1009);
    });

    it('SHOULD answer a sound envelope with a bad body with INVALID_ARGUMENT and keep the connection', async () => {
      const sub = await subscribe(server, token, queueId);
      const s = await open();
      await s.hello(sub.id);
      const id = s.send('event.ack', { delivery_id: 'd'.repeat(32), epoch: '01', lease_secret: 'A'.repeat(43) });
      expect((await s.reply(id)).error!.code).toBe('INVALID_ARGUMENT');
      const ping = s.send('events.ping', {});
      expect((await s.reply(ping)).type).toBe('ack');
    });

    it('MUST answer events.ping with ack {server_time, enabled}; a revoked credential ends the session', async () => {
      const boot = await server.bootstrap({ application: 'pinger' });
      const sub = await subscribe(server, boot.token, boot.queue_ids.q!);
      const s = await open(boot.token);
      await s.hello(sub.id);
      const reply = await s.reply(s.send('events.ping', {}));
      expect(reply.type).toBe('ack');
      expect(Object.keys(reply.body).sort()).toEqual(['enabled', 'server_time']);
      await server.orbit.store.revokeCredential(boot.credential_id);
      const error = await s.reply(s.send('events.ping', {}));
      expect(error.error!.code).toBe('UNAUTHENTICATED');
      expect((await s.waitClosed()).code).toBe(1008);
    });
  });

  describe('liveness', () => {
    it('MUST end the session on ping once the subscription is retired', async () => {
      const sub = await subscribe(server, token, queueId, { types: ['task.needs_review'], from_sequence: null });
      const s = await open();
      await s.hello(sub.id);
      const current = await api(server.url, 'GET', `/v1/subscriptions/${sub.id}`, { token });
      const retired = await api(server.url, 'POST', `/v1/subscriptions/${sub.id}:retire`, {
        token,
        key: `r-${sub.id}`,
        body: { expected_revision: current.json.data.revision, reason: 'done' },
      });
      expect(retired.status).toBe(200);
      const ping = s.send('events.ping', {});
      // The ping re-checks the subscription and answers NOT_FOUND. A background claim (the head poll
      // or the sweep) may notice the retirement first; it ends the session the same way, without
      // reply_to. Either way the session ends with one NOT_FOUND error and 1008.
      const error = await s.next((f) => f.type === 'error');
      expect(error.error!.code).toBe('NOT_FOUND');
      if (error.reply_to !== undefined) expect(error.reply_to).toBe(ping);
      expect((await s.waitClosed()).code).toBe(1008);
      expect(s.frames.filter((f) => f.type === 'error')).toEqual([]);
    });
  });

  describe('delivery and ACK', () => {
    it('MUST deliver a published result and acknowledge it once; a repeat ACK is deduplicated from any connection', async () => {
      const sub = await subscribe(server, token, queueId);
      const s = await open();
      await s.hello(sub.id);
      await publish(server, token, queueId);
      const deliver = await s.deliver();
      expect(deliver.body.delivery).toMatchObject({
        subscription_id: sub.id,
        state: 'LEASED',
        lease_epoch: '1',
        attempts: 1,
        attempt_budget: 20,
      });
      expect(deliver.body.event.id).toBe(deliver.body.delivery.event_id);
      const before = await api(server.url, 'GET', `/v1/subscriptions/${sub.id}`, { token });
      expect(before.json.data.pending_count).toBe(1);
      const ack = await s.ack(deliver);
      expect(ack.type).toBe('ack');
      expect(ack.body).toMatchObject({
        delivery_id: deliver.body.delivery.id,
        event_id: deliver.body.event.id,
        epoch: '1',
        deduplicated: false,
      });
      const again = await s.ack(deliver);
      expect(again.body).toMatchObject({ deduplicated: true, acknowledged_at: ack.body.acknowledged_at });
      const other = await open();
      await other.hello(sub.id);
      const fromOther = await other.ack(deliver);
      expect(fromOther.body).toMatchObject({ deduplicated: true, acknowledged_at: ack.body.acknowledged_at });
      const after = await api(server.url, 'GET', `/v1/subscriptions/${sub.id}`, { token });
      expect(after.json.data.pending_count).toBe(0);
    });

    it('MUST keep the result byte-exact in event.deliver', async () => {
      const sub = await subscribe(server, token, queueId);
      const s = await open();
      await s.hello(sub.id);
      const result = '{"big":123456789012345678901234567890,"x":0.1000000000000000055511151231257827}';
      const r = await api(server.url, 'POST', `/v1/queues/${queueId}/results`, {
        token,
        key: 'exact-1',
        rawBody: `{"type":"task.failed","task_id":"${TASK}","task_revision":"18446744073709551615","result":${result}}`,
      });
      expect(r.status).toBe(201);
      const deliver = await s.deliver();
      expect(deliver.body.event.snapshot.result.text).toBe(result);
      expect(deliver.body.event.aggregate_revision).toBe('18446744073709551615');
      await s.ack(deliver);
    });

    it('MUST never hold more than the connection’s capacity', async () => {
      const sub = await subscribe(server, token, queueId);
      await publish(server, token, queueId, 5);
      const s = await open();
      await s.hello(sub.id, 2);
      const first = [await s.deliver(), await s.deliver()];
      await expect(s.deliver(400)).rejects.toThrow(/timed out/);
      await s.ack(first[0]!);
      const third = await s.deliver();
      expect(third.body.delivery.sequence).not.toBe(first[1]!.body.delivery.sequence);
    });

    it('MUST NOT materialize beyond max_pending', async () => {
      const sub = await subscribe(server, token, queueId, { max_pending: 3 });
      await publish(server, token, queueId, 6);
      const s = await open();
      await s.hello(sub.id, 32);
      const got = [await s.deliver(), await s.deliver(), await s.deliver()];
      await expect(s.deliver(400)).rejects.toThrow(/timed out/);
      const list = await api(server.url, 'GET', `/v1/subscriptions/${sub.id}/deliveries`, { token, expect: 'validateDeliveryList' });
      expect(list.json.data.items).toHaveLength(3);
      await s.ack(got[0]!);
      await s.deliver();
    });

    it('MUST share one subscription between competing connections without holding a delivery twice', async () => {
      const sub = await subscribe(server, token, queueId);
      const a = await open();
      const b = await open();
      await a.hello(sub.id, 4);
      await b.hello(sub.id, 4);
      await publish(server, token, queueId, 20);
      const seen = new Map<string, string>();
      const acks: Promise<unknown>[] = [];
      await eventually(
        async () => {
          for (const s of [a, b]) {
            for (const f of s.frames.splice(0).filter((x) => x.type === 'event.deliver')) {
              // A lease that ran out may be offered again, but never the same lease twice.
              const lease = `${f.body.delivery.id}:${f.body.delivery.lease_epoch}`;
              expect(seen.has(lease)).toBe(false);
              seen.set(lease, f.session_id!);
              acks.push(s.ack(f));
            }
          }
          return new Set([...seen.keys()].map((k) => k.split(':')[0])).size === 20;
        },
        20_000,
        'twenty deliveries',
      );
      await Promise.all(acks);
      expect(new Set(seen.values()).size).toBe(2);
    });

    it('MUST pause new deliveries while disabled, still accept ACKs and pings, and resume', async () => {
      const sub = await subscribe(server, token, queueId);
      const s = await open();
      await s.hello(sub.id, 2);
      await publish(server, token, queueId, 1);
      const first = await s.deliver();
      await configure(server, token, sub, false);
      await publish(server, token, queueId, 1);
      await expect(s.deliver(500)).rejects.toThrow(/timed out/);
      expect((await s.ack(first)).type).toBe('ack');
      expect((await s.reply(s.send('events.ping', {}))).body.enabled).toBe(false);
      await configure(server, token, sub, true);
      await s.reply(s.send('events.ping', {}));
      await s.ack(await s.deliver());
    });
  });

  describe('leases', () => {
    it('MUST redeliver an expired lease with a new epoch; the old proof gets DELIVERY_LEASE_LOST and the connection stays open', async () => {
      const sub = await subscribe(server, token, queueId);
      const s = await open();
      await s.hello(sub.id, 1);
      await publish(server, token, queueId);
      const first = await s.deliver();
      const second = await s.deliver(5000);
      expect(second.body.delivery.id).toBe(first.body.delivery.id);
      expect(second.body.delivery.lease_epoch).toBe('2');
      expect(second.body.delivery.attempts).toBe(2);
      expect(second.body.lease_secret).not.toBe(first.body.lease_secret);
      const lost = await s.ack(first);
      expect(lost.error!.code).toBe('DELIVERY_LEASE_LOST');
      expect(s.closed).toBeNull();
      expect((await s.ack(second)).body.deduplicated).toBe(false);
    });

    it('MUST accept a late ACK while the proof is still the newest', async () => {
      const sub = await subscribe(server, token, queueId);
      const s = await open();
      await s.hello(sub.id, 1);
      await publish(server, token, queueId);
      const deliver = await s.deliver();
      await configure(server, token, sub, false);
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const ack = await s.ack(deliver);
      expect(ack.type).toBe('ack');
      expect(ack.body.deduplicated).toBe(false);
    });

    it('MUST reject a proof with the right epoch but a wrong secret', async () => {
      const sub = await subscribe(server, token, queueId);
      const s = await open();
      await s.hello(sub.id, 1);
      await publish(server, token, queueId);
      const deliver = await s.deliver();
      const wrong = await s.ack(deliver, { lease_secret: `${'B'.repeat(42)}A` });
      expect(wrong.error!.code).toBe('DELIVERY_LEASE_LOST');
      expect((await s.ack(deliver)).type).toBe('ack');
    });

    it('MUST move a delivery to EXPIRED once its attempts are used up', async () => {
      const sub = await subscribe(server, token, queueId, { max_attempts: 1 });
      const s = await open();
      await s.hello(sub.id, 1);
      await publish(server, token, queueId);
      await s.deliver();
      await eventually(
        async () => {
          const list = await api(server.url, 'GET', `/v1/subscriptions/${sub.id}/deliveries?state=EXPIRED`, { token });
          return list.json.data.items.length === 1;
        },
        8000,
        'an EXPIRED delivery',
      );
    });
  });

  describe('retention', () => {
    it('MUST start "0" at the oldest retained result and refuse an older explicit cursor with 410', async () => {
      await publish(server, token, queueId, 2, 'task.needs_review');
      const { head } = await server.orbit.store.logPosition();
      await server.orbit.store.prune(head);
      const fromZero = await subscribe(server, token, queueId, { from_sequence: '0', types: ['task.needs_review'] });
      expect(fromZero.cursor_sequence).toBe((head - 1n).toString());
      const refused = await api(server.url, 'POST', '/v1/subscriptions', {
        token,
        key: `old-${head}`,
        body: { name: `old${head}`, queue_id: queueId, from_sequence: (head - 2n).toString() },
      });
      expect(refused.status).toBe(410);
      expect(refused.json.error.code).toBe('EVENT_HISTORY_EXPIRED');
      const s = await open();
      await s.hello(fromZero.id, 1);
      const deliver = await s.deliver();
      expect(deliver.body.delivery.sequence).toBe(head.toString());
      await s.ack(deliver);
    });

    it('MUST end a session whose cursor fell behind the retention boundary with EVENT_HISTORY_EXPIRED', async () => {
      const sub = await subscribe(server, token, queueId, { types: ['task.cancelled'] });
      await configure(server, token, sub, false);
      await publish(server, token, queueId, 2, 'task.cancelled');
      const { head } = await server.orbit.store.logPosition();
      await server.orbit.store.prune(head + 1n);
      await configure(server, token, sub, true);
      const s = await open();
      await s.hello(sub.id, 1);
      const error = await s.next((f) => f.type === 'error');
      expect(error.error!.code).toBe('EVENT_HISTORY_EXPIRED');
      expect((await s.waitClosed()).code).toBe(1008);
      // It can never be drained now, so later matching results do not block its retirement.
      await publish(server, token, queueId, 1, 'task.cancelled');
      const current = await api(server.url, 'GET', `/v1/subscriptions/${sub.id}`, { token });
      const retired = await api(server.url, 'POST', `/v1/subscriptions/${sub.id}:retire`, {
        token,
        key: `gap-${sub.id}`,
        body: { expected_revision: current.json.data.revision, reason: 'history expired' },
      });
      expect(retired.status).toBe(200);
    });
  });
});

describe.each(STORES)('timeouts on %s', (kind) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(kind, { ORBIT_HELLO_TIMEOUT_MS: '300', ORBIT_IDLE_TIMEOUT_MS: '3000', ORBIT_WRITE_TIMEOUT_MS: '500' });
  });

  it('MUST cut off a peer that stops reading once a write waits longer than the write timeout', async () => {
    const boot = await server.bootstrap({ application: 'slow-reader' });
    const queue = boot.queue_ids.q!;
    const sub = (
      await api(server.url, 'POST', '/v1/subscriptions', { token: boot.token, key: 'slow', body: { name: 'slow', queue_id: queue } })
    ).json.data.subscription;
    const s = await TestSocket.open(server.url, boot.token);
    await s.hello(sub.id, 32);
    // Stop reading: the kernel buffers fill and the server's writes stop completing.
    (s.ws as unknown as { _socket: { pause(): void; resume(): void } })._socket.pause();
    const big = `"${'x'.repeat(400 * 1024)}"`;
    for (let i = 0; i < 12; i++) {
      const r = await api(server.url, 'POST', `/v1/queues/${queue}/results`, {
        token: boot.token,
        key: `big-${i}`,
        rawBody: `{"type":"task.succeeded","task_id":"${'6'.repeat(32)}","task_revision":"1","result":${big}}`,
      });
      expect(r.status).toBe(201);
    }
    await new Promise((resolve) => setTimeout(resolve, 1500));
    (s.ws as unknown as { _socket: { resume(): void } })._socket.resume();
    const closed = await s.waitClosed(5000);
    expect(closed.code).not.toBe(1000);
  });
  afterAll(async () => server.stop());

  it('MUST close a connection that sends no hello in time', async () => {
    const boot = await server.bootstrap();
    const s = await TestSocket.open(server.url, boot.token);
    expect((await s.waitClosed(3000)).code).toBe(1008);
  });

  it('MUST close a connection with no valid client frame within the idle timeout', { timeout: 20_000 }, async () => {
    const boot = await server.bootstrap();
    const sub = (
      await api(server.url, 'POST', '/v1/subscriptions', {
        token: boot.token,
        key: 'idle',
        body: { name: 'idle', queue_id: boot.queue_ids.q },
      })
    ).json.data.subscription;
    const s = await TestSocket.open(server.url, boot.token);
    await s.hello(sub.id);
    const started = Date.now();
    expect((await s.waitClosed(8000)).code).toBe(1008);
    expect(Date.now() - started).toBeGreaterThanOrEqual(2500);
  });
});

describe.each(STORES)('faults on %s', (kind) => {
  it('MUST answer a database failure during a session with UNAVAILABLE and close', async () => {
    const server = await startTestServer(kind, { ORBIT_LEASE_DURATION_MS: '400' });
    try {
      const boot = await server.bootstrap();
      const sub = (
        await api(server.url, 'POST', '/v1/subscriptions', {
          token: boot.token,
          key: 'fault',
          body: { name: 'fault', queue_id: boot.queue_ids.q },
        })
      ).json.data.subscription;
      const s = await TestSocket.open(server.url, boot.token);
      await s.hello(sub.id);
      await server.orbit.store.db.close();
      // The next claim (the engine sweeps about every 200 ms here) meets the closed database.
      const error = await s.next((f) => f.type === 'error', 5000);
      expect(error.error!.code).toBe('UNAVAILABLE');
      // 1013 "try again later": a temporary failure, not the client's fault (spec/README.md "Close codes").
      expect((await s.waitClosed()).code).toBe(1013);
      expect(s.invalid).toEqual([]);
    } finally {
      await server.stop().catch(() => undefined);
      await server.database.drop().catch(() => undefined);
    }
  });
});

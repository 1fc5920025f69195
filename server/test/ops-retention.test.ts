/**
 * Periodic history retention (spec/README.md, Retention; docs/operations.md, Background work):
 * `ORBIT_RETENTION_MAX_RESULTS` and `ORBIT_RETENTION_MAX_AGE_MS` move the retention boundary
 * through the same `prune` as `orbit prune`; a from_sequence below the boundary is 410
 * EVENT_HISTORY_EXPIRED; a lagging subscription's session gets EVENT_HISTORY_EXPIRED and is closed;
 * the event of a delivery that is not ACKED is never deleted. Real servers, both stores.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { api, eventually, publish, startTestServer, STORES, subscribe, type TestServer, TestSocket } from '@orbit/testing';

describe.each(STORES)('periodic retention on %s', (kind) => {
  let server: TestServer | undefined;
  const sockets: TestSocket[] = [];

  afterEach(async () => {
    for (const s of sockets.splice(0)) {
      expect(s.invalid).toEqual([]);
      s.close();
    }
    await server?.stop();
    server = undefined;
  });

  async function start(env: Record<string, string>): Promise<{ server: TestServer; token: string; queue: string }> {
    server = await startTestServer(kind, { ORBIT_RETENTION_INTERVAL_MS: '100', ORBIT_POLL_INTERVAL_MS: '50', ...env });
    const boot = await server.bootstrap();
    return { server, token: boot.token, queue: boot.queue_ids.q! };
  }

  async function open(s: TestServer, token: string, subscriptionId: string, capacity = 1): Promise<TestSocket> {
    const socket = await TestSocket.open(s.url, token);
    sockets.push(socket);
    expect((await socket.hello(subscriptionId, capacity)).type).toBe('events.welcome');
    return socket;
  }

  const boundary = async (s: TestServer) => (await s.orbit.store.logPosition()).boundary;
  const storedSequences = async (s: TestServer) =>
    (await s.orbit.store.db.all('SELECT sequence FROM results ORDER BY sequence')).map((r) => Number(r.sequence));

  it('MUST keep the newest max_results results, refuse from_sequence below the boundary with 410, and keep the event of an unacknowledged delivery', async () => {
    const { server, token, queue } = await start({ ORBIT_RETENTION_MAX_RESULTS: '3' });
    // Result 1 gets a delivery that is never acknowledged: its event must survive the boundary.
    const holder = await subscribe(server.url, token, queue, { max_pending: 1 });
    await publish(server.url, token, queue, 1);
    const socket = await open(server, token, holder.id);
    const held = (await socket.deliver()).body.delivery;
    await publish(server.url, token, queue, 7);

    await eventually(async () => (await boundary(server)) === 5n, 5_000, 'boundary 5');
    await eventually(async () => (await storedSequences(server)).join() === '1,6,7,8', 5_000, 'pruned 2..5');
    const detail = await api(server.url, 'GET', `/v1/subscriptions/${holder.id}/deliveries/${held.id}`, {
      token,
      expect: 'validateDeliveryDetail',
    });
    expect(detail.status).toBe(200);
    expect(detail.json.data.event.sequence).toBe('1');

    const refused = await api(server.url, 'POST', '/v1/subscriptions', {
      token,
      key: 'old',
      body: { name: 'too-old', queue_id: queue, from_sequence: '4' },
    });
    expect(refused.status).toBe(410);
    expect(refused.json.error.code).toBe('EVENT_HISTORY_EXPIRED');
    expect((await subscribe(server.url, token, queue, { from_sequence: '5' })).cursor_sequence).toBe('5');
    expect((await subscribe(server.url, token, queue, { from_sequence: '0' })).cursor_sequence).toBe('5');

    // The boundary only moves forward and keeps following the head.
    await publish(server.url, token, queue, 2);
    await eventually(async () => (await boundary(server)) === 7n, 5_000, 'boundary 7');
  });

  it("MUST send EVENT_HISTORY_EXPIRED and close a lagging subscription's session, never jump silently", async () => {
    const { server, token, queue } = await start({ ORBIT_RETENTION_MAX_RESULTS: '2' });
    // max_pending 1 and one unacknowledged delivery: the cursor cannot move past result 1.
    const lagging = await subscribe(server.url, token, queue, { max_pending: 1 });
    await publish(server.url, token, queue, 1);
    const socket = await open(server, token, lagging.id);
    const first = await socket.deliver();
    await publish(server.url, token, queue, 5);
    await eventually(async () => (await boundary(server)) === 4n, 5_000, 'boundary 4');

    // Acknowledging frees the capacity; the next claim finds the cursor (1) behind the boundary (4).
    const ack = await socket.ack(first);
    expect(ack.type).toBe('ack');
    const error = await socket.next((f) => f.type === 'error');
    expect(error.error!.code).toBe('EVENT_HISTORY_EXPIRED');
    expect(error.session_id).toBe(socket.sessionId);
    expect((await socket.waitClosed()).code).toBe(1008);
    expect(socket.frames.filter((f) => f.type === 'event.deliver')).toEqual([]);

    // A new connection to the same subscription is refused the same way on its first claim.
    const again = await open(server, token, lagging.id);
    expect((await again.next((f) => f.type === 'error')).error!.code).toBe('EVENT_HISTORY_EXPIRED');
    expect((await again.waitClosed()).code).toBe(1008);
  });

  it('MUST prune results older than max_age_ms, stopping at the first younger one', async () => {
    const { server, token, queue } = await start({ ORBIT_RETENTION_MAX_AGE_MS: '800' });
    await publish(server.url, token, queue, 3);
    expect(await boundary(server)).toBe(0n);
    await new Promise((resolve) => setTimeout(resolve, 400));
    await publish(server.url, token, queue, 1); // sequence 4 is younger than the first three
    await eventually(async () => (await boundary(server)) === 3n && (await storedSequences(server)).join() === '4', 5_000, 'boundary 3');
    await eventually(async () => (await boundary(server)) === 4n && (await storedSequences(server)).length === 0, 5_000, 'boundary 4');
  });
});

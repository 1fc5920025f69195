/**
 * The refill rule (server/src/domain/delivery.ts `wantsClaim`; spec/README.md, "The event engine
 * (`orbit.events.v1`)"), over real sockets on both stores: a connection that holds deliveries
 * claims again at a refill's worth of room, and any smaller room once it has waited a few
 * milliseconds, so a consumer that holds its whole window before it ACKs still gets every slot.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publish, startTestServer, STORES, subscribe, type TestServer, TestSocket } from '@orbit/testing';

describe.each(STORES)('refilling a window on %s', (kind) => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer(kind, { ORBIT_LEASE_DURATION_MS: '60000' });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('fills every slot of a window whose consumer ACKs nothing, results arriving one by one', async () => {
    const boot = await server.bootstrap({ namespace: `refill-${kind}` });
    const queueId = boot.queue_ids.q!;
    const subscription = await subscribe(server.url, boot.token, queueId);
    const socket = await TestSocket.open(server.url, boot.token);
    try {
      expect((await socket.hello(subscription.id, 8)).type).toBe('events.welcome');
      // Each result is published once the one before it has arrived: from the fifth on, the room
      // left (3, 2, 1) is below the refill of 4, which a wait of a few milliseconds lets through.
      const ids = new Set<string>();
      for (let i = 0; i < 8; i++) {
        await publish(server.url, boot.token, queueId);
        const delivered = await socket.deliver(5000);
        ids.add(delivered.body.delivery.id);
      }
      expect(ids.size).toBe(8);
      expect(socket.invalid).toEqual([]);
    } finally {
      socket.close();
    }
  });
});

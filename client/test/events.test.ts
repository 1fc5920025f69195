/**
 * The event connection against a real server on both stores: welcome, deliver, ACK (and its
 * replay on a new connection), ping, DELIVERY_LEASE_LOST after a redelivery, refusals at the
 * upgrade and at hello, errors that close the connection, and the delivery history operations
 * of the management client (list, detail, manual retry).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { eventually, STORES } from '@orbit/testing';
import {
  connectEvents,
  ConnectionClosedError,
  createClient,
  OrbitError,
  RawJson,
  toBigInt,
  type Delivery,
  type EventConnection,
} from '../src/index.ts';
import { id, key, name, setup, type Setup } from './support.ts';

const LEASE_MS = 700;

describe.each(STORES)('event connection on %s', (kind) => {
  let env: Setup;
  const open: EventConnection[] = [];

  beforeAll(async () => {
    env = await setup(kind, { ORBIT_LEASE_DURATION_MS: String(LEASE_MS) });
  });
  afterEach(async () => {
    for (const conn of open.splice(0)) await conn.close();
  });
  afterAll(async () => env.server.stop());

  async function subscription(extra: { max_attempts?: number } = {}): Promise<string> {
    return (await env.client.createSubscription(key(), { name: name(), queue_id: env.queueId, ...extra })).subscription.id;
  }

  async function publish(n = 1, result?: RawJson): Promise<void> {
    for (let i = 0; i < n; i++) {
      await env.client.publishResult(env.queueId, key('p'), {
        type: 'task.succeeded',
        task_id: id(),
        task_revision: '1',
        ...(result ? { result } : {}),
      });
    }
  }

  async function connect(subscriptionId: string, capacity = 1, token = env.token): Promise<EventConnection> {
    const conn = await connectEvents({ baseUrl: env.server.url, token, subscriptionId, capacity });
    open.push(conn);
    return conn;
  }

  async function next(conn: EventConnection, timeoutMs = 5000): Promise<Delivery> {
    const iterator = conn[Symbol.asyncIterator]();
    const timer = new Promise<never>((_, reject) => setTimeout(() => reject(new Error('no delivery in time')), timeoutMs));
    const item = await Promise.race([iterator.next(), timer]);
    if (item.done) throw new Error('the connection ended');
    return item.value;
  }

  it('MUST resolve after events.welcome and deliver events with the exact result text; ACK answers with the server body', async () => {
    const sub = await subscription();
    const conn = await connect(sub, 2);
    expect(conn.sessionId).toMatch(/^[0-9a-f]{32}$/);
    expect(conn.welcome).toMatchObject({
      session_id: conn.sessionId,
      subscription_id: sub,
      capacity: 2,
      lease_duration_ms: LEASE_MS,
      enabled: true,
    });
    await publish(1, new RawJson('[98765432109876543210987, 1.10]'));
    const d = await next(conn);
    expect(d.delivery).toMatchObject({ subscription_id: sub, state: 'LEASED', lease_epoch: '1' });
    expect(d.event.snapshot.result?.text).toBe('[98765432109876543210987, 1.10]');
    expect(d.proof).toEqual({ delivery_id: d.delivery.id, epoch: '1', lease_secret: d.leaseSecret });
    const acked = await conn.ack(d.proof);
    expect(acked).toMatchObject({ delivery_id: d.delivery.id, event_id: d.event.id, epoch: '1', deduplicated: false });

    // The same proof re-reported on a new connection: deduplicated, original acknowledged_at.
    await conn.close();
    const second = await connect(sub);
    expect(second.sessionId).not.toBe(conn.sessionId);
    expect(await second.ack(d.proof)).toEqual({ ...acked, deduplicated: true });
    const detail = await env.client.getEventDelivery(sub, d.delivery.id);
    expect(detail.delivery).toMatchObject({ state: 'ACKED', acknowledged_at: acked.acknowledged_at });
    expect(detail.event.snapshot.result?.text).toBe('[98765432109876543210987, 1.10]');
  });

  it('MUST answer ping with {server_time, enabled}, also while paused', async () => {
    const sub = await subscription();
    const conn = await connect(sub);
    expect(await conn.ping()).toMatchObject({ enabled: true, server_time: expect.stringMatching(/Z$/) });
    const current = await env.client.getSubscription(sub);
    await env.client.configureSubscription(sub, key(), { expected_revision: current.revision, enabled: false, reason: 'pause' });
    expect((await conn.ping()).enabled).toBe(false);
  });

  it('MUST reject an ACK with a replaced proof with DELIVERY_LEASE_LOST and keep the connection open', async () => {
    const sub = await subscription();
    const conn = await connect(sub);
    await publish();
    const first = await next(conn);
    // Not acknowledged: the lease runs out and the server delivers again with a new epoch.
    const again = await next(conn, LEASE_MS * 6);
    expect(again.delivery.id).toBe(first.delivery.id);
    expect(toBigInt(again.proof.epoch)).toBe(toBigInt(first.proof.epoch) + 1n);
    const error = (await conn.ack(first.proof).catch((e: unknown) => e)) as OrbitError;
    expect(error).toBeInstanceOf(OrbitError);
    expect({ code: error.code, status: error.status }).toEqual({ code: 'DELIVERY_LEASE_LOST', status: null });
    expect(conn.isOpen).toBe(true);
    expect((await conn.ack(again.proof)).deduplicated).toBe(false);
  });

  it('MUST refuse locally a malformed proof, never sending it', async () => {
    const conn = await connect(await subscription());
    for (const proof of [
      { delivery_id: 'x', epoch: '1', lease_secret: 'A'.repeat(43) },
      { delivery_id: id(), epoch: '01', lease_secret: 'A'.repeat(43) },
      { delivery_id: id(), epoch: '1', lease_secret: `${'A'.repeat(42)}B` },
    ]) {
      expect(() => conn.ack(proof)).toThrow(OrbitError);
    }
    expect(conn.isOpen).toBe(true);
  });

  it('MUST map refusals: 401 and 403 at the upgrade, NOT_FOUND at hello (with HTTP status only for the upgrade)', async () => {
    const sub = await subscription();
    const bad = (await connectEvents({ baseUrl: env.server.url, token: 'orbit_wrong', subscriptionId: sub, capacity: 1 }).catch(
      (e: unknown) => e,
    )) as OrbitError;
    expect({ code: bad.code, status: bad.status }).toEqual({ code: 'UNAUTHENTICATED', status: 401 });
    expect(bad.requestId).toMatch(/^[0-9a-f]{32}$/);
    const reader = await env.server.bootstrap({ application: `reader-${kind}`, permissions: ['events:read'] });
    const denied = (await connectEvents({ baseUrl: env.server.url, token: reader.token, subscriptionId: sub, capacity: 1 }).catch(
      (e: unknown) => e,
    )) as OrbitError;
    expect({ code: denied.code, status: denied.status }).toEqual({ code: 'PERMISSION_DENIED', status: 403 });
    const other = await env.server.bootstrap({ application: `other-${kind}` });
    const foreign = (await connectEvents({ baseUrl: env.server.url, token: other.token, subscriptionId: sub, capacity: 1 }).catch(
      (e: unknown) => e,
    )) as OrbitError;
    expect({ code: foreign.code, status: foreign.status }).toEqual({ code: 'NOT_FOUND', status: null });
    const unknown = (await connectEvents({ baseUrl: env.server.url, token: env.token, subscriptionId: id(), capacity: 1 }).catch(
      (e: unknown) => e,
    )) as OrbitError;
    expect(unknown.code).toBe('NOT_FOUND');
    const refused = (await connectEvents({ baseUrl: env.server.url, token: env.token, subscriptionId: sub, capacity: 33 }).catch(
      (e: unknown) => e,
    )) as OrbitError;
    expect(refused.code).toBe('INVALID_ARGUMENT');
  });

  it('MUST end the stream with a typed error when the server closes: NOT_FOUND once the subscription is retired', async () => {
    const sub = await subscription();
    const conn = await connect(sub);
    const current = await env.client.getSubscription(sub);
    await env.client.retireSubscription(sub, key(), { expected_revision: current.revision, reason: 'done' });
    const error = await (async () => {
      try {
        for await (const _ of conn) {
          /* nothing is delivered */
        }
      } catch (e) {
        return e;
      }
      return null;
    })();
    expect(error).toBeInstanceOf(ConnectionClosedError);
    expect((error as ConnectionClosedError).code).toBe('NOT_FOUND');
    expect((error as ConnectionClosedError).closeCode).toBe(1008);
    const closed = await conn.closed;
    expect(closed.error?.code).toBe('NOT_FOUND');
    expect(conn.isOpen).toBe(false);
    await expect(conn.ping()).rejects.toBeInstanceOf(ConnectionClosedError);
  });

  it('MUST end cleanly (no error) after close(), and fail pending requests', async () => {
    const conn = await connect(await subscription());
    const info = await conn.close();
    expect(info).toMatchObject({ code: 1000, error: null });
    const items: Delivery[] = [];
    for await (const d of conn) items.push(d);
    expect(items).toEqual([]);
  });

  it('MUST list deliveries by state, read one with its event, and retry an EXPIRED one (same key deduplicated)', async () => {
    const sub = await subscription({ max_attempts: 1 });
    const conn = await connect(sub, 2);
    await publish(2);
    const a = await next(conn);
    const b = await next(conn);
    await conn.ack(a.proof);
    // b is never acknowledged: with one attempt in the budget it becomes EXPIRED.
    const expired = await eventually(
      async () => (await env.client.listEventDeliveries(sub, { state: 'EXPIRED' })).items[0],
      LEASE_MS * 8,
      'an EXPIRED delivery',
    );
    expect(expired.id).toBe(b.delivery.id);
    expect((await env.client.listEventDeliveries(sub, { state: 'ACKED' })).items.map((d) => d.id)).toEqual([a.delivery.id]);
    const all: string[] = [];
    for await (const d of env.client.iterateEventDeliveries(sub, { limit: 1 })) all.push(d.id);
    expect(new Set(all)).toEqual(new Set([a.delivery.id, b.delivery.id]));

    const retryKey = key('retry');
    const retryBody = { expected_revision: expired.revision, reason: 'receiver fixed', additional_attempts: 2 };
    const retried = await env.client.retryEventDelivery(sub, expired.id, retryKey, retryBody);
    expect(retried.delivery).toMatchObject({
      id: expired.id,
      state: 'PENDING',
      attempt_budget: expired.attempt_budget + 2,
      attempts: expired.attempts,
    });
    expect(retried.deduplicated).toBe(false);
    expect((await env.client.retryEventDelivery(sub, expired.id, retryKey, retryBody)).deduplicated).toBe(true);
    const conflict = (await env.client
      .retryEventDelivery(sub, a.delivery.id, key(), { ...retryBody, expected_revision: '1' })
      .catch((e: unknown) => e)) as OrbitError;
    expect({ code: conflict.code, status: conflict.status }).toEqual({ code: 'STATE_CONFLICT', status: 409 });
    // Delivered again, with a new epoch, to a consumer.
    const again = await next(conn, LEASE_MS * 6);
    expect(again.delivery.id).toBe(b.delivery.id);
    await conn.ack(again.proof);
  });

  it('MUST close with EVENT_HISTORY_EXPIRED when the cursor falls behind the retention boundary (never a silent jump)', async () => {
    const boot = await env.server.bootstrap({ application: `retention-${kind}`, queues: ['retained'] });
    const own = createClient({ baseUrl: env.server.url, token: boot.token });
    const queue = boot.queue_ids.retained!;
    const sub = (await own.createSubscription(key(), { name: name(), queue_id: queue, types: ['task.cancelled'] })).subscription.id;
    let last = '0';
    for (let i = 0; i < 3; i++)
      last = (await own.publishResult(queue, key(), { type: 'task.failed', task_id: id(), task_revision: '1' })).event.sequence;
    // Not materialized (the subscription only takes task.cancelled, so nothing blocks pruning) ...
    const cancelled = (await own.publishResult(queue, key(), { type: 'task.cancelled', task_id: id(), task_revision: '1' })).event.sequence;
    await env.server.orbit.store.prune(toBigInt(cancelled) + 1n);
    const outcome = await connectEvents({ baseUrl: env.server.url, token: boot.token, subscriptionId: sub, capacity: 1 }).then(
      async (conn) => {
        open.push(conn);
        try {
          for await (const _ of conn) {
            /* the gap is reported, not skipped */
          }
        } catch (e) {
          return e;
        }
        return null;
      },
      (e: unknown) => e,
    );
    expect(last).not.toBe('0');
    expect(outcome).toBeInstanceOf(OrbitError);
    expect((outcome as OrbitError).code).toBe('EVENT_HISTORY_EXPIRED');
  });
});

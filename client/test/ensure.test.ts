/**
 * `ensureSubscription` against a real server on both stores: a program that ensures its
 * subscription at start finds, on its second run, what the first created; other settings under
 * the same name are a `SubscriptionMismatchError` that changes nothing; a paused subscription is
 * returned paused; a retired one frees the name; a name that another credential holds is
 * `STATE_CONFLICT`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORES } from '@orbit/testing';
import { createClient, ensureKey, ensureSubscription, OrbitError, SubscriptionMismatchError } from '../src/index.ts';
import { key, name, setup, type Setup } from './support.ts';

describe.each(STORES)('ensureSubscription (%s)', (kind) => {
  let s: Setup;

  beforeAll(async () => {
    s = await setup(kind);
  });
  afterAll(async () => {
    await s?.server.stop();
  });

  it('creates on the first run; the second run, with the same key or another, finds the same subscription', async () => {
    const body = { name: name(), queue_id: s.queueId, types: ['task.succeeded' as const, 'task.failed' as const], max_attempts: 5 };
    const first = await ensureSubscription(s.client, body);
    expect(first.created).toBe(true);
    expect(first.subscription).toMatchObject({
      name: body.name,
      types: ['task.failed', 'task.succeeded'],
      max_attempts: 5,
      max_pending: 100,
    });
    // The same key: the server replays the receipt.
    const again = await ensureSubscription(s.client, body);
    expect(again).toEqual({ created: false, subscription: first.subscription });
    // Another key (receipts expired, another process of the same credential): found by name.
    const found = await ensureSubscription(s.client, { ...body, types: ['task.succeeded', 'task.failed'] }, { key: key() });
    expect(found).toEqual({ created: false, subscription: first.subscription });
    const history = await s.client.listSubscriptionHistory(first.subscription.id, {});
    expect(history.items.map((h) => h.action)).toEqual(['create']);
  });

  it('processes that start together make one subscription', async () => {
    const body = { name: name(), queue_id: s.queueId };
    const results = await Promise.all(Array.from({ length: 5 }, () => ensureSubscription(s.client, body, { key: key() })));
    expect(results.filter((r) => r.created)).toHaveLength(1);
    expect(new Set(results.map((r) => r.subscription.id)).size).toBe(1);
  });

  it('other settings under the name: SubscriptionMismatchError naming each, and the subscription is left as it was', async () => {
    const body = { name: name(), queue_id: s.queueId };
    const { subscription } = await ensureSubscription(s.client, body);
    const asked = { ...body, types: ['task.failed' as const], max_pending: 5 };
    const error = await ensureSubscription(s.client, asked).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SubscriptionMismatchError);
    const mismatch = error as SubscriptionMismatchError;
    expect(mismatch).toBeInstanceOf(OrbitError);
    expect(mismatch.code).toBe('STATE_CONFLICT');
    expect(mismatch.subscription.id).toBe(subscription.id);
    expect(mismatch.differences).toEqual([
      { field: 'types', existing: ['task.cancelled', 'task.failed', 'task.needs_review', 'task.succeeded'], requested: ['task.failed'] },
      { field: 'max_pending', existing: 100, requested: 5 },
    ]);
    expect(mismatch.message).toContain('max_pending is 100, asked 5');
    expect(await s.client.getSubscription(subscription.id)).toEqual(subscription);
  });

  it('a paused subscription is returned as it is, paused', async () => {
    const body = { name: name(), queue_id: s.queueId };
    const { subscription } = await ensureSubscription(s.client, body);
    await s.client.configureSubscription(subscription.id, key(), { expected_revision: '1', enabled: false, reason: 'maintenance' });
    const found = await ensureSubscription(s.client, body);
    expect(found.created).toBe(false);
    expect(found.subscription).toMatchObject({ id: subscription.id, enabled: false, revision: '2' });
  });

  it('after a retire the name is free: the old key is refused with STATE_CONFLICT, a new key creates a new subscription', async () => {
    const body = { name: name(), queue_id: s.queueId };
    const { subscription } = await ensureSubscription(s.client, body);
    await s.client.retireSubscription(subscription.id, key(), { expected_revision: '1', reason: 'done' });
    const error = (await ensureSubscription(s.client, body).catch((e: unknown) => e)) as OrbitError;
    expect(error).toBeInstanceOf(OrbitError);
    expect(error.code).toBe('STATE_CONFLICT');
    expect(error.message).toContain(
      `${ensureKey(body)} replays the creation of subscription "${body.name}" (${subscription.id}), retired since`,
    );
    const fresh = await ensureSubscription(s.client, body, { key: key() });
    expect(fresh.created).toBe(true);
    expect(fresh.subscription.id).not.toBe(subscription.id);
  });

  it("a name that another credential's subscription holds is STATE_CONFLICT", async () => {
    const body = { name: name(), queue_id: s.queueId };
    await ensureSubscription(s.client, body);
    const other = await s.server.bootstrap({ application: `other-${kind}` });
    expect(other.queue_ids.q).toBe(s.queueId);
    const client = createClient({ baseUrl: s.server.url, token: other.token });
    const error = (await ensureSubscription(client, body).catch((e: unknown) => e)) as OrbitError;
    expect(error).toBeInstanceOf(OrbitError);
    expect(error).not.toBeInstanceOf(SubscriptionMismatchError);
    expect(error.code).toBe('STATE_CONFLICT');
    expect(error.message).toBe(
      `the name "${body.name}" is taken by a subscription that is not in queue ${s.queueId} or belongs to another credential`,
    );
  });
});

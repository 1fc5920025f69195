/**
 * Server behaviour found while building the SDK that breaks the contract. These tests state the
 * contract and FAIL until the server is fixed (the SDK must not work around them silently).
 *
 * 1. Frame limit (spec/rules.md#s5-5: "each frame is one text JSON message of at most 512 KiB"):
 *    the server accepts a publish whose body fits the 512 KiB body limit (spec/rules.md#s1-19) but
 *    whose `event.deliver` frame is larger than 512 KiB. A client that enforces the frame limit can
 *    never receive that delivery: every attempt ends the connection, until the delivery is EXPIRED.
 *    Expected: the publish is refused with INVALID_ARGUMENT (the event could never be delivered), or
 *    the frame stays within the limit.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORES } from '@orbit/testing';
import { connectEvents, MAX_FRAME_BYTES, type OrbitError, RawJson } from '../src/index.ts';
import { id, key, name, setup, type Setup } from './support.ts';

describe.each(STORES)('server contract checks found by the SDK on %s', (kind) => {
  let env: Setup;
  beforeAll(async () => {
    env = await setup(kind);
  });
  afterAll(async () => env.server.stop());

  it('MUST NOT accept a result whose event.deliver frame would exceed 512 KiB (or must deliver it within 512 KiB)', async () => {
    const sub = (await env.client.createSubscription(key(), { name: name(), queue_id: env.queueId })).subscription.id;
    // A body just under the 512 KiB request limit.
    const result = new RawJson(JSON.stringify('x'.repeat(MAX_FRAME_BYTES - 200)));
    const published = await env.client
      .publishResult(env.queueId, key(), { type: 'task.succeeded', task_id: id(), task_revision: '1', result })
      .then(
        () => 'accepted' as const,
        (error: unknown) => error,
      );
    if (published !== 'accepted') {
      // Refusing it is a correct answer.
      expect((published as OrbitError).code).toBe('INVALID_ARGUMENT');
      return;
    }
    // Accepted: then a client that enforces the 512 KiB frame limit must be able to receive it.
    const conn = await connectEvents({ baseUrl: env.server.url, token: env.token, subscriptionId: sub, capacity: 1 });
    try {
      const outcome = await Promise.race([
        (async () => {
          for await (const d of conn) return `delivered ${d.event.snapshot.result?.text.length} bytes of result`;
          return 'ended';
        })().catch((error: unknown) => `connection ended: ${(error as Error).message}`),
        new Promise<string>((resolve) => setTimeout(() => resolve('nothing delivered in 5 s'), 5000)),
      ]);
      expect(outcome).toBe(`delivered ${result.text.length} bytes of result`);
    } finally {
      await conn.close();
    }
  });
});

/**
 * docs/sdk.md, "Management client": create a subscription with a key persisted before the call.
 * Run by client/test/docs-snippets.test.ts: ORBIT_URL, ORBIT_TOKEN, ORBIT_QUEUE_ID.
 */
import { createClient, newIdempotencyKey } from '@orbit/client';

const token = process.env.ORBIT_TOKEN ?? '';
const queueId = process.env.ORBIT_QUEUE_ID ?? '';
const baseUrl = process.env.ORBIT_URL ?? 'http://127.0.0.1:8080';
const persist = (key: string): void => console.log(JSON.stringify({ persisted: key }));

// #region docs
const client = createClient({ baseUrl, token });
const key = newIdempotencyKey('create');
persist(key); // BEFORE the call: after a failure, resend the same key and body
const { subscription, deduplicated } = await client.createSubscription(key, { name: 'object-results', queue_id: queueId });
// #endregion docs

const again = await client.createSubscription(key, { name: 'object-results', queue_id: queueId });
console.log(
  JSON.stringify({ id: subscription.id, deduplicated, replayed: again.deduplicated, sameId: again.subscription.id === subscription.id }),
);

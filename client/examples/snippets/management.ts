/**
 * docs/sdk.md, "Ensuring a subscription": what a program does at every start. The first run
 * creates the subscription, every later run finds it.
 * Run by client/test/docs-snippets.test.ts and consumer/ (twice): ORBIT_URL, ORBIT_TOKEN,
 * ORBIT_QUEUE_ID.
 */
import { createClient, ensureSubscription } from '@orbit/client';

const token = process.env.ORBIT_TOKEN ?? '';
const queueId = process.env.ORBIT_QUEUE_ID ?? '';
const baseUrl = process.env.ORBIT_URL ?? 'http://127.0.0.1:8080';

// #region docs
const client = createClient({ baseUrl, token });
// Created on the first run; found by name on every later one. Other settings under the name throw.
const { subscription, created } = await ensureSubscription(client, {
  name: 'object-results',
  queue_id: queueId,
  types: ['task.succeeded'],
});
console.log(`${created ? 'created' : 'found'} ${subscription.name} ${subscription.id}${subscription.enabled ? '' : ' (paused)'}`);
// #endregion docs

console.log(JSON.stringify({ id: subscription.id, created }));

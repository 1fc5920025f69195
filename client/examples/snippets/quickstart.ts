/**
 * client/README.md, "Quickstart": ensure a subscription, consume it into a SQLite Inbox, stop on
 * SIGTERM. Runs twice in a row: the second run finds the subscription of the first.
 * Run by consumer/ (twice): ORBIT_URL, ORBIT_TOKEN, ORBIT_QUEUE_ID, INBOX_PATH.
 */
// #region docs
import { createClient, createEventConsumer, ensureSubscription } from '@orbit/client';
import { SqliteInbox } from '@orbit/client/inbox/sqlite';

const baseUrl = process.env.ORBIT_URL ?? 'http://127.0.0.1:8080';
const token = process.env.ORBIT_TOKEN ?? '';
const queueId = process.env.ORBIT_QUEUE_ID ?? '';

const client = createClient({ baseUrl, token });
// Creates `object-results` on the first run and finds it on every later one (docs/sdk.md, Ensuring a subscription).
const { subscription } = await ensureSubscription(client, { name: 'object-results', queue_id: queueId, types: ['task.succeeded'] });

const inbox = new SqliteInbox({ path: process.env.INBOX_PATH ?? './inbox.db' });
const consumer = createEventConsumer({
  baseUrl,
  token,
  subscriptionId: subscription.id,
  capacity: 4,
  inbox,
  // Runs inside the Inbox transaction: the event's effect and its record commit together, then it is acknowledged.
  handler: ({ event }) => console.log(event.type, event.snapshot.task_id),
});
process.once('SIGTERM', () => void consumer.stop().then(() => inbox.close()));
await consumer.done;
// #endregion docs

/**
 * docs/sdk.md, "Logging": one logger for the management client and the consumer, writing JSON
 * lines; the consumer stops after its first connection.
 * Run by client/test/docs-snippets.test.ts: ORBIT_URL, ORBIT_TOKEN, ORBIT_QUEUE_ID,
 * ORBIT_SUBSCRIPTION_ID, INBOX_PATH.
 */
import { createClient, createEventConsumer, type Log } from '@orbit/client';
import { SqliteInbox } from '@orbit/client/inbox/sqlite';

const baseUrl = process.env.ORBIT_URL ?? 'http://127.0.0.1:8080';
const token = process.env.ORBIT_TOKEN ?? '';
const queueId = process.env.ORBIT_QUEUE_ID ?? '';
const subscriptionId = process.env.ORBIT_SUBSCRIPTION_ID ?? '';
const inbox = new SqliteInbox({ path: process.env.INBOX_PATH ?? './inbox.db' });

// #region docs
// One JSON line per entry, debug included; the SDK logs nothing without a `log`.
const log: Log = (level, message, fields) => console.log(JSON.stringify({ time: new Date().toISOString(), level, message, ...fields }));

const client = createClient({ baseUrl, token, log });
const consumer = createEventConsumer({ baseUrl, token, subscriptionId, capacity: 4, inbox, handler: () => {}, log });
// #endregion docs

// Listened for before anything is awaited: the consumer may connect while the listing runs.
const connected = new Promise<void>((resolve) => consumer.on('connected', () => resolve()));
await client.listSubscriptions({ queueId });
await connected;
await consumer.stop();
await inbox.close();

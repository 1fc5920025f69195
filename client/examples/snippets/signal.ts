/**
 * docs/sdk.md, "Stopping with a signal": a consumer that an AbortSignal stops (here SIGTERM's).
 * Run by client/test/docs-snippets.test.ts: ORBIT_URL, ORBIT_TOKEN, ORBIT_SUBSCRIPTION_ID,
 * INBOX_PATH.
 */
import { createEventConsumer } from '@orbit/client';
import { SqliteInbox } from '@orbit/client/inbox/sqlite';

const baseUrl = process.env.ORBIT_URL ?? 'http://127.0.0.1:8080';
const token = process.env.ORBIT_TOKEN ?? '';
const subscriptionId = process.env.ORBIT_SUBSCRIPTION_ID ?? '';
const inbox = new SqliteInbox({ path: process.env.INBOX_PATH ?? './inbox.db' });
const handler = (): void => {};

// #region docs
const controller = new AbortController();
process.once('SIGTERM', () => controller.abort());
const consumer = createEventConsumer({ baseUrl, token, subscriptionId, capacity: 4, inbox, handler, signal: controller.signal });
consumer.on('connected', () => console.log('connected'));
await consumer.done; // resolves once the abort has stopped it: drained, closed with 1000, not reconnecting
await inbox.close();
// #endregion docs
console.log(`stopped ${consumer.state}`);

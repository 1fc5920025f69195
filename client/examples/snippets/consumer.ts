/**
 * docs/sdk.md, "Automatic consumer": a consumer whose handler writes to the application's own
 * table in the Inbox transaction; SIGTERM stops it gracefully.
 * Run by client/test/docs-snippets.test.ts: ORBIT_URL, ORBIT_TOKEN, ORBIT_SUBSCRIPTION_ID,
 * INBOX_PATH.
 */
import { createEventConsumer } from '@orbit/client';
import { SqliteInbox } from '@orbit/client/inbox/sqlite';

const baseUrl = process.env.ORBIT_URL ?? 'http://127.0.0.1:8080';
const token = process.env.ORBIT_TOKEN ?? '';
const subscriptionId = process.env.ORBIT_SUBSCRIPTION_ID ?? '';
const path = process.env.INBOX_PATH ?? './inbox.db';

// #region docs
const inbox = new SqliteInbox({ path });
// The application's own table, in the Inbox's database: written in the same transaction.
inbox.database.exec('CREATE TABLE IF NOT EXISTS results (event_id TEXT PRIMARY KEY, body TEXT)');
const consumer = createEventConsumer({
  baseUrl,
  token,
  subscriptionId,
  capacity: 8,
  inbox,
  handler: ({ event, tx }) => {
    tx.prepare('INSERT INTO results (event_id, body) VALUES (?, ?)').run(event.id, event.snapshot.result?.text ?? null);
  },
  onEvent: (e) => console.log(e.type),
});
process.once('SIGTERM', async () => {
  await consumer.stop({ timeoutMs: 10_000 });
  await inbox.close();
});
await consumer.done; // resolves after stop(); rejects with the error that stopped it (NOT_FOUND, ...)
// #endregion docs

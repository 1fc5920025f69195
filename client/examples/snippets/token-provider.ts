/**
 * docs/sdk.md, "Token provider": the token is read from a file that the deployment rewrites when
 * the credential is rotated; the client and the consumer follow without being rebuilt.
 * Run by client/test/docs-snippets.test.ts: ORBIT_URL, ORBIT_QUEUE_ID, ORBIT_SUBSCRIPTION_ID,
 * TOKEN_FILE, INBOX_PATH; on each connection it lists the queue's subscriptions; SIGTERM stops it.
 */
import { readFile } from 'node:fs/promises';
import { createClient, createEventConsumer } from '@orbit/client';
import { SqliteInbox } from '@orbit/client/inbox/sqlite';

const baseUrl = process.env.ORBIT_URL ?? 'http://127.0.0.1:8080';
const queueId = process.env.ORBIT_QUEUE_ID ?? '';
const subscriptionId = process.env.ORBIT_SUBSCRIPTION_ID ?? '';
const tokenFile = process.env.TOKEN_FILE ?? '/run/secrets/orbit-token';
const inbox = new SqliteInbox({ path: process.env.INBOX_PATH ?? './inbox.db' });
const handler = (): void => {};

// #region docs
// Asked for every HTTP attempt and every event connection: a rotated token is picked up as soon as the file has it.
const token = async (): Promise<string> => (await readFile(tokenFile, 'utf8')).trim();

const client = createClient({ baseUrl, token });
const consumer = createEventConsumer({ baseUrl, token, subscriptionId, capacity: 4, inbox, handler });
// #endregion docs

// Each connection (the first, and the one after a rotation) lists the subscriptions with the file's token.
consumer.on('connected', () => {
  console.log('connected');
  void client.listSubscriptions({ queueId }).then(({ items }) => console.log(`listed ${items.length}`));
});
process.once('SIGTERM', () => void consumer.stop());
await consumer.done;
await inbox.close();

/**
 * docs/sdk.md, "Event connection": receive, save durably, then acknowledge.
 * Run by client/test/docs-snippets.test.ts: ORBIT_URL, ORBIT_TOKEN, ORBIT_SUBSCRIPTION_ID; it
 * stops after ORBIT_STOP_AFTER deliveries.
 */
import { connectEvents, type ResultEvent } from '@orbit/client';

const baseUrl = process.env.ORBIT_URL ?? 'http://127.0.0.1:8080';
const token = process.env.ORBIT_TOKEN ?? '';
const subscriptionId = process.env.ORBIT_SUBSCRIPTION_ID ?? '';
const stopAfter = Number(process.env.ORBIT_STOP_AFTER ?? 1);
let saved = 0;
const saveDurably = async (event: ResultEvent): Promise<void> => {
  saved++;
  console.log(JSON.stringify({ saved: event.id }));
};
const shouldStop = (): boolean => saved >= stopAfter;

// #region docs
const conn = await connectEvents({ baseUrl, token, subscriptionId, capacity: 4 });
for await (const { event, proof } of conn) {
  await saveDurably(event); // your own transaction, keyed by event.id
  const { acknowledged_at } = await conn.ack(proof); // only after the commit
  console.log(`acknowledged ${event.id} at ${acknowledged_at}`);
  if (shouldStop()) break;
}
await conn.close();
// #endregion docs

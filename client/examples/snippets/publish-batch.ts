/**
 * docs/sdk.md, "Batch publish": publish several results in one request, each under its own key
 * persisted before the call, and read each item's outcome.
 * Run by client/test/docs-snippets.test.ts: ORBIT_URL, ORBIT_TOKEN, ORBIT_QUEUE_ID.
 */
import { randomBytes } from 'node:crypto';
import { createClient, newIdempotencyKey } from '@orbit/client';

const token = process.env.ORBIT_TOKEN ?? '';
const queueId = process.env.ORBIT_QUEUE_ID ?? '';
const baseUrl = process.env.ORBIT_URL ?? 'http://127.0.0.1:8080';
const persist = (keys: string[]): void => console.log(JSON.stringify({ persisted: keys }));
const finished = [randomBytes(16).toString('hex'), randomBytes(16).toString('hex')];

// #region docs
const client = createClient({ baseUrl, token });
const items = finished.map((taskId) => ({
  idempotency_key: newIdempotencyKey('result'),
  type: 'task.succeeded' as const,
  task_id: taskId,
  task_revision: '1',
  result: { ok: true },
}));
persist(items.map((item) => item.idempotency_key)); // BEFORE the call, with the items
const { results } = await client.publishResults(queueId, items);
for (const [i, outcome] of results.entries()) {
  if ('error' in outcome)
    console.error(`item ${i}: ${outcome.error.code}`); // this item only
  else console.log(`item ${i}: sequence ${outcome.event.sequence}${outcome.deduplicated ? ' (replayed)' : ''}`);
}
// #endregion docs

const again = await client.publishResults(queueId, items);
console.log(
  JSON.stringify({
    appended: results.filter((r) => 'event' in r && !r.deduplicated).length,
    replayed: again.results.filter((r) => 'event' in r && r.deduplicated).length,
  }),
);

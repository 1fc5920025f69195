/**
 * docs/sdk.md, "Management client": a create whose Idempotency-Key is persisted before the call,
 * so that a run after a failure (or any later run) sends the same key and body and gets the
 * original receipt.
 * Run by client/test/docs-snippets.test.ts and consumer/ (twice): ORBIT_URL, ORBIT_TOKEN,
 * ORBIT_QUEUE_ID, KEY_FILE.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createClient, newIdempotencyKey } from '@orbit/client';

const token = process.env.ORBIT_TOKEN ?? '';
const queueId = process.env.ORBIT_QUEUE_ID ?? '';
const baseUrl = process.env.ORBIT_URL ?? 'http://127.0.0.1:8080';
const keyFile = process.env.KEY_FILE ?? './create-key.txt';
const loadKey = (): string | undefined => (existsSync(keyFile) ? readFileSync(keyFile, 'utf8') : undefined);
const persist = (key: string): void => writeFileSync(keyFile, key);

// #region docs
const client = createClient({ baseUrl, token });
const key = loadKey() ?? newIdempotencyKey('create');
persist(key); // BEFORE the call: after a failure, resend the same key and body
const { subscription, deduplicated } = await client.createSubscription(key, { name: 'nightly-report', queue_id: queueId });
// #endregion docs

console.log(JSON.stringify({ id: subscription.id, deduplicated }));

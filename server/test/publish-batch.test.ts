/**
 * `store.publishResults`, the batch publish's store call (spec/README.md, Batch publish), on both
 * stores: one transaction per batch, and a property over random batches of fresh, replayed and
 * conflicting keys — each item's outcome is what a model of "first content per key wins" says, and
 * each key is appended once.
 */
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OrbitError } from '@orbit/spec/errors';
import type { Principal } from '../src/store/principal.ts';
import { Store, type PublishOutcome, type ResultInput, type ResultRecord } from '../src/store/store.ts';
import { eventJson } from '../src/wire/json.ts';
import { writeKey } from '../src/wire/receipts.ts';
import { freshDatabase, STORES, type TestDatabase } from '@orbit/testing';

const hex32 = (): string => randomBytes(16).toString('hex');

describe.each(STORES)('batch publish in the store (%s)', (kind) => {
  let database: TestDatabase;
  let store: Store;
  let principal: Principal;
  let queueId: string;

  beforeAll(async () => {
    database = await freshDatabase(kind);
    store = await Store.open(database.url);
    const boot = await store.bootstrap({ namespace: 'ns', application: 'app', queues: ['q'], permissions: ['results:publish'] });
    queueId = boot.queue_ids.q!;
    principal = (await store.authenticate(boot.token))!;
  });
  afterAll(async () => {
    await store?.close();
    await database?.drop();
  });

  /** An item as the route builds it; the digest stands for the item's canonical content. */
  const itemOf = (key: string, content: string) => ({
    input: { queueId, type: 'task.succeeded', taskId: hex32(), taskRevision: '1' } satisfies ResultInput,
    write: writeKey(key, `digest-${content}`, 201, (event: ResultRecord) => ({ event: eventJson(event) })),
  });

  async function resultCount(): Promise<number> {
    const [row] = await store.db.all('SELECT COUNT(*) AS n FROM results');
    return Number(row!.n);
  }

  it('commits a batch of 100 in one transaction on consecutive sequences', async () => {
    const { head } = await store.logPosition();
    let transactions = 0;
    const transaction = store.db.transaction.bind(store.db);
    store.db.transaction = ((fn, options) => {
      transactions++;
      return transaction(fn, options);
    }) as typeof store.db.transaction;
    let outcomes: PublishOutcome[];
    try {
      outcomes = await store.publishResults(
        principal,
        queueId,
        Array.from({ length: 100 }, (_, i) => itemOf(`one-${i}-${hex32()}`, `c${i}`)),
      );
    } finally {
      store.db.transaction = transaction;
    }
    expect(transactions).toBe(1);
    expect(outcomes.map((o) => ('written' in o && !o.written.replayed ? o.written.value.sequence : o))).toEqual(
      Array.from({ length: 100 }, (_, i) => head + BigInt(i + 1)),
    );
  });

  it('refuses an unknown queue before writing anything', async () => {
    const before = await resultCount();
    await expect(store.publishResults(principal, hex32(), [])).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect(await resultCount()).toBe(before);
  });

  it('answers every item as a model of first-content-wins says, appending each key once', async () => {
    const run = `p${hex32().slice(0, 8)}`;
    // Across all runs: key -> the content of its first publish and the sequence it got.
    const model = new Map<string, { content: string; sequence: bigint }>();
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(fc.record({ key: fc.integer({ min: 0, max: 11 }), content: fc.constantFrom('a', 'b') }), {
          minLength: 1,
          maxLength: 8,
          selector: (item) => item.key,
        }),
        async (batch) => {
          const before = await resultCount();
          const outcomes = await store.publishResults(
            principal,
            queueId,
            batch.map(({ key, content }) => itemOf(`${run}-${key}`, content)),
          );
          let fresh = 0;
          batch.forEach(({ key, content }, i) => {
            const outcome = outcomes[i]!;
            const known = model.get(`${run}-${key}`);
            if (known === undefined) {
              expect('written' in outcome && !outcome.written.replayed).toBe(true);
              if ('written' in outcome && !outcome.written.replayed)
                model.set(`${run}-${key}`, { content, sequence: outcome.written.value.sequence });
              fresh++;
            } else if (known.content === content) {
              expect('written' in outcome && outcome.written.replayed).toBe(true);
              if ('written' in outcome) expect(JSON.parse(outcome.written.answer.body).event.sequence).toBe(known.sequence.toString());
            } else {
              expect('error' in outcome && outcome.error instanceof OrbitError && outcome.error.code).toBe('IDEMPOTENCY_CONFLICT');
            }
          });
          expect(await resultCount()).toBe(before + fresh);
        },
      ),
      { numRuns: 25 },
    );
  });
});

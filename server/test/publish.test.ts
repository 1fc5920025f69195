/**
 * Group commit of the result seam on both stores: publishes that arrive together share one
 * transaction, yet each keeps its own idempotency — a repeat replays, other content under a used
 * key conflicts, and two stores (two nodes) racing on the same keys append each key once.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OrbitError } from '@orbit/spec/errors';
import { RawJson, stringify } from '@orbit/spec/codec';
import type { Principal } from '../src/store/principal.ts';
import { FROM_LOG } from '../src/store/idempotency.ts';
import type { ResultRecord } from '../src/store/records.ts';
import { Store, type PublishOutcome, type ResultInput } from '../src/store/store.ts';
import { eventJson } from '../src/wire/json.ts';
import { writeKey, writtenAnswer } from '../src/wire/receipts.ts';
import { freshDatabase, STORES, type TestDatabase } from '@orbit/testing';

const hex32 = (): string => randomBytes(16).toString('hex');

describe.each(STORES)('publishing through the seam on %s', (kind) => {
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

  /** Publishes through `node` as the HTTP route does, and answers with the route's status and data. */
  const publishVia = (node: Store) => (who: Principal, _queue: string, key: string, digest: string, input: ResultInput) =>
    node
      .publishResult(
        who,
        input,
        writeKey(key, digest, 201, (event) => ({ event: eventJson(event) })),
      )
      .then(writtenAnswer);

  /** What the HTTP route hands the store: the digest stands for the request's canonical content. */
  const request = (key: string, content: string) =>
    [
      principal,
      queueId,
      key,
      `digest-${content}`,
      { queueId, type: 'task.succeeded' as const, taskId: hex32(), taskRevision: '1', result: new RawJson(`{"content":"${content}"}`) },
    ] as const;

  async function resultCount(): Promise<number> {
    const [row] = await store.db.all('SELECT COUNT(*) AS n FROM results');
    return Number(row!.n);
  }

  it('commits concurrent publishes in groups; repeats replay and changed content conflicts', async () => {
    const before = await resultCount();
    const head = (await store.logPosition()).head;
    let transactions = 0;
    const transaction = store.db.transaction.bind(store.db);
    store.db.transaction = ((fn, options) => {
      transactions++;
      return transaction(fn, options);
    }) as typeof store.db.transaction;
    try {
      const keys = Array.from({ length: 200 }, (_, i) => `group-${i}-${hex32()}`);
      // Every key once, then 40 repeats with the same content and 20 with other content, all at once.
      const calls = [
        ...keys.map((key, i) => ({ key, content: `c${i}`, kind: 'first' as const })),
        ...keys.slice(0, 40).map((key, i) => ({ key, content: `c${i}`, kind: 'repeat' as const })),
        ...keys.slice(40, 60).map((key) => ({ key, content: 'other', kind: 'conflict' as const })),
      ];
      const settled = await Promise.allSettled(calls.map((c) => publishVia(store)(...request(c.key, c.content))));

      // Each publish first reads its queue, so calls reach the group in any order: per key, one
      // call appends (201) and fixes the content; the same content replays it, other content conflicts.
      type Data = { event: { sequence: string; id: string; snapshot: { result: { content: string } } }; deduplicated: boolean };
      const events = new Map<string, Data['event']>();
      const answers = calls.map((call, i) => {
        const outcome = settled[i]!;
        if (outcome.status === 'rejected')
          return { call, code: outcome.reason instanceof OrbitError ? outcome.reason.code : String(outcome.reason) };
        const data = JSON.parse(stringify(outcome.value.data)) as Data;
        if (outcome.value.status === 201) {
          expect(events.has(call.key), `${call.key} appended twice`).toBe(false);
          expect(data.deduplicated).toBe(false);
          expect(data.event.snapshot.result).toEqual({ content: call.content });
          events.set(call.key, data.event);
        }
        return { call, status: outcome.value.status, data };
      });
      expect(events.size).toBe(keys.length);
      for (const answer of answers) {
        const winner = events.get(answer.call.key)!;
        if (answer.call.content !== winner.snapshot.result.content) {
          expect(answer.code, answer.call.key).toBe('IDEMPOTENCY_CONFLICT');
        } else if ('status' in answer && answer.status === 200) {
          expect(answer.data!.deduplicated).toBe(true);
          expect(answer.data!.event).toEqual(winner);
        } else {
          expect('status' in answer && answer.status, answer.call.key).toBe(201);
        }
      }
      // Exactly one refusal per key that was sent with two contents, and no other.
      expect(
        answers
          .filter((a) => 'code' in a)
          .map((a) => a.call.key)
          .sort(),
      ).toEqual(keys.slice(40, 60).sort());
      // One result per key, on contiguous sequences right after the old head.
      expect(await resultCount()).toBe(before + keys.length);
      const sequences = [...events.values()].map((e) => BigInt(e.sequence)).sort((a, b) => (a < b ? -1 : 1));
      expect(sequences).toEqual(keys.map((_, i) => head + BigInt(i + 1)));
      expect((await store.logPosition()).head).toBe(head + BigInt(keys.length));
      // Grouped: far fewer transactions than publishes (each repeat and conflict replays alone).
      expect(transactions).toBeLessThan(keys.length / 2 + 60);
    } finally {
      store.db.transaction = transaction;
    }
  });

  it('one key sent many times at once appends once; the same content replays, other content conflicts', async () => {
    const before = await resultCount();
    const key = `same-${hex32()}`;
    const contents = ['a', 'a', 'b', 'a', 'b', 'a', 'a', 'b', 'a', 'a', 'b', 'a'];
    const settled = await Promise.allSettled(contents.map((content) => publishVia(store)(...request(key, content))));
    expect(await resultCount()).toBe(before + 1);
    const statuses = settled.map((s) =>
      s.status === 'fulfilled' ? s.value.status : s.reason instanceof OrbitError ? s.reason.code : String(s.reason),
    );
    // Whichever call reached the group first appended; calls reach it in any order (each first
    // reads its queue), so the winner's content decides what replays and what conflicts.
    expect(statuses.filter((status) => status === 201)).toHaveLength(1);
    const winner = contents[statuses.indexOf(201)]!;
    expect(statuses).toEqual(contents.map((c, i) => (i === statuses.indexOf(201) ? 201 : c === winner ? 200 : 'IDEMPOTENCY_CONFLICT')));
  });

  // Several nodes share MySQL only; two SQLite connections in one process would block each other.
  if (kind === 'mysql')
    it('two stores (two nodes) racing on the same keys append each key once and answer every caller', async () => {
      const other = await Store.open(database.url);
      try {
        const before = await resultCount();
        const keys = Array.from({ length: 60 }, (_, i) => `race-${i}-${hex32()}`);
        const bothNodes = keys.flatMap((key, i) => [
          publishVia(store)(...request(key, `r${i}`)),
          publishVia(other)(...request(key, `r${i}`)),
        ]);
        const receipts = await Promise.all(bothNodes);
        expect(await resultCount()).toBe(before + keys.length);
        for (let i = 0; i < keys.length; i++) {
          const [a, b] = [receipts[2 * i]!, receipts[2 * i + 1]!];
          // One of the two appended (201); the other replayed the same event (200).
          expect([a.status, b.status].sort()).toEqual([200, 201]);
          const event = (r: typeof a): unknown => (JSON.parse(stringify(r.data)) as { event: unknown }).event;
          expect(event(a)).toEqual(event(b));
        }
      } finally {
        await other.close();
      }
    });

  /** One item of a batch publish as the routes hand it to the store. */
  const item = (key: string, content: string, result = `{"content":"${content}"}`) => ({
    input: { queueId, type: 'task.succeeded' as const, taskId: hex32(), taskRevision: '1', result: new RawJson(result) },
    write: writeKey(key, `digest-${content}`, 201, (event: ResultRecord) => ({ event: eventJson(event) })),
  });

  const receipt = async (key: string) => {
    const [row] = await store.db.all('SELECT status, response, sequence FROM idempotency_records WHERE idem_key = ?', [key]);
    return { status: Number(row!.status), response: String(row!.response), sequence: String(row!.sequence) };
  };

  const written = (outcome: PublishOutcome) => {
    if (!('written' in outcome)) throw outcome.error;
    return outcome.written;
  };

  /** The result a publish appended and its answer (it fails the test when the publish replayed). */
  const appended = (outcome: PublishOutcome) => {
    const w = written(outcome);
    if (w.replayed) throw new Error('the publish replayed instead of appending');
    return w;
  };

  it('commits a group of fresh keys in one round trip; each receipt refers to its result, and a replay answers byte for byte', async () => {
    const keys = Array.from({ length: 5 }, (_, i) => `fresh-${i}-${hex32()}`);
    const trips = store.db.counts.roundTrips;
    const outcomes = await store.publishResults(
      principal,
      queueId,
      keys.map((key, i) => item(key, `f${i}`)),
    );
    expect(store.db.counts.roundTrips - trips).toBe(1);
    const answers = keys.map((key, i) => {
      const { value, answer } = appended(outcomes[i]!);
      // The answer is the route's rendering of the committed result.
      expect(answer).toEqual({ status: 201, body: stringify({ event: eventJson(value) }) });
      return { key, value, answer };
    });
    // The receipt keeps no copy of the event: its sequence names the result (spec/README.md, Idempotency).
    for (const { key, value } of answers)
      expect(await receipt(key)).toEqual({ status: FROM_LOG, response: '', sequence: value.sequence.toString() });
    // Replayed through the receipts (a group with a used key) and alone (a key repeated in its group).
    const replays = await store.publishResults(principal, queueId, [...keys.map((key, i) => item(key, `f${i}`)), item(keys[0]!, 'f0')]);
    for (const [i, outcome] of replays.entries())
      expect(written(outcome)).toEqual({ replayed: true, answer: answers[i % keys.length]!.answer });
  });

  it('replays a receipt that an earlier release wrote with its answer embedded, as stored', async () => {
    const key = `embedded-${hex32()}`;
    const [first] = await store.publishResults(principal, queueId, [item(key, 'e')]);
    const { answer } = appended(first!);
    // What a release before receipts referred to their results stored: the answer itself.
    const stored = answer.body.replace('"content":"e"', '"content":"e", "as":"stored"');
    await store.db.run('UPDATE idempotency_records SET status = 201, response = ? WHERE idem_key = ?', [stored, key]);
    const [again] = await store.publishResults(principal, queueId, [item(key, 'e')]);
    expect(written(again!)).toEqual({ replayed: true, answer: { status: 201, body: stored } });
    const single = await publishVia(store)(...request(key, 'e'));
    expect(single.status).toBe(200);
    expect(stringify(single.data)).toBe(`${stored.slice(0, -1)},"deduplicated":true}`);
  });

  it('sends a group with a used key through the receipts: the key replays, the others append once, on the next sequences', async () => {
    const used = `used-${hex32()}`;
    const [first] = await store.publishResults(principal, queueId, [item(used, 'u')]);
    const before = await resultCount();
    const head = (await store.logPosition()).head;
    const fresh = `fresh-${hex32()}`;
    const [again, other] = await store.publishResults(principal, queueId, [item(used, 'u'), item(fresh, 'v')]);
    expect(written(again!)).toEqual({ replayed: true, answer: { status: 201, body: written(first!).answer.body } });
    const { value, answer } = appended(other!);
    expect(value.sequence).toBe(head + 1n);
    expect(await resultCount()).toBe(before + 1);
    expect(answer.body).toBe(stringify({ event: eventJson(value) }));
    expect(await receipt(fresh)).toEqual({ status: FROM_LOG, response: '', sequence: (head + 1n).toString() });
  });

  it('splits large publishes into groups that fit a MySQL packet (16 MiB by default)', async () => {
    // 40 results of 500 KiB arriving together: 20 MB in one INSERT would exceed the packet.
    const large = 'x'.repeat(500 * 1024);
    const before = await resultCount();
    const receipts = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        publishVia(store)(principal, queueId, `large-${i}-${hex32()}`, `digest-large-${i}`, {
          queueId,
          type: 'task.failed',
          taskId: hex32(),
          taskRevision: '1',
          result: new RawJson(`"${large}"`),
        }),
      ),
    );
    expect(receipts.map((r) => r.status)).toEqual(Array(40).fill(201));
    expect(await resultCount()).toBe(before + 40);
  });
});

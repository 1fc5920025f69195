/**
 * Idempotency receipts have a retention window, and pruned results leave nothing behind in them
 * (spec/README.md, Idempotency), on both stores:
 * - receipts older than `idempotency_retention_ms` are deleted by a periodic job, oldest first in
 *   bounded batches; a request with a forgotten key is new;
 * - a publish receipt refers to its result by sequence; once `orbit prune` removed the result, a
 *   replay answers 410 EVENT_HISTORY_EXPIRED instead of appending again (other content under the
 *   key is still IDEMPOTENCY_CONFLICT), and a receipt of an earlier release, which embeds its
 *   event, is scrubbed in the same transaction.
 */
import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { RawJson, stringify } from '@orbit/spec/codec';
import { expireReceipts } from '../src/store/idempotency.ts';
import { publishAll } from '../src/store/publish.ts';
import type { Database, TransactionOptions, Tx } from '../src/store/sql.ts';
import { Store, type Principal, type ResultInput } from '../src/store/store.ts';
import { eventJson } from '../src/wire/json.ts';
import { writeKey, writtenAnswer } from '../src/wire/receipts.ts';
import { api, eventually, freshDatabase, runOrbit, startTestServer, STORES, type TestServer } from '@orbit/testing';

const TASK = '66666666666666666666666666666666';

describe.each(STORES)('idempotency receipts on %s', (kind) => {
  let server: TestServer | undefined;

  afterEach(async () => {
    await server?.stop();
    server = undefined;
  });

  async function start(env: Record<string, string> = {}) {
    server = await startTestServer(kind, env);
    const boot = await server.bootstrap();
    return { server, token: boot.token, queue: boot.queue_ids.q! };
  }

  const publish = (s: TestServer, token: string, queue: string, key: string, result: string) =>
    api(s.url, 'POST', `/v1/queues/${queue}/results`, {
      token,
      key,
      rawBody: `{"type":"task.succeeded","task_id":"${TASK}","task_revision":"1","result":${result}}`,
    });
  const receipts = (s: TestServer) =>
    s.orbit.store.db.all('SELECT idem_key, status, response, sequence FROM idempotency_records ORDER BY idem_key');
  const head = async (s: TestServer) => (await s.orbit.store.logPosition()).head;

  it.each([
    ['written by this release (it refers to its result)', false],
    ['of an earlier release (it embeds its event)', true],
  ])(
    'MUST leave nothing of a pruned result in its receipt, %s: a replay is 410 EVENT_HISTORY_EXPIRED and never appends again',
    async (_, embedded) => {
      const { server, token, queue } = await start();
      const secret = `"pruned-payload-${randomBytes(8).toString('hex')}"`;
      const first = await publish(server, token, queue, 'k-old', `{"secret":${secret}}`);
      expect(first.status).toBe(201);
      const kept = await publish(server, token, queue, 'k-kept', '{"kept":true}');
      const [old, young] = [first.json.data.event.sequence, kept.json.data.event.sequence];
      expect((await receipts(server)).map((r) => [r.idem_key, String(r.sequence)])).toEqual([
        ['k-kept', young],
        ['k-old', old],
      ]);
      if (embedded) {
        // What an earlier release stored: the answer itself, the event and its payload in it.
        await server.orbit.store.db.run("UPDATE idempotency_records SET status = 201, response = ? WHERE idem_key = 'k-old'", [
          stringify({ event: first.json.data.event }),
        ]);
        expect(String((await receipts(server)).find((r) => r.idem_key === 'k-old')!.response)).toContain(secret);
      }

      const pruned = await runOrbit(['prune', '--before-sequence', young, '--database', server.database.url]);
      expect(pruned.code, pruned.stderr).toBe(0);
      expect(JSON.parse(pruned.stdout)).toEqual({ boundary: old, deleted: 1, receipts_scrubbed: embedded ? 1 : 0 });

      const stored = await receipts(server);
      for (const r of stored) expect(String(r.response)).not.toContain(secret);
      const headBefore = await head(server);
      const replay = await publish(server, token, queue, 'k-old', `{"secret":${secret}}`);
      expect(replay.status).toBe(410);
      expect(replay.json.error.code).toBe('EVENT_HISTORY_EXPIRED');
      expect(replay.text).not.toContain(secret);
      expect(await head(server)).toBe(headBefore);
      const conflicting = await publish(server, token, queue, 'k-old', '{"other":1}');
      expect(conflicting.status).toBe(409);
      expect(conflicting.json.error.code).toBe('IDEMPOTENCY_CONFLICT');
      // The receipt of a result that is still in the log replays as before.
      const again = await publish(server, token, queue, 'k-kept', '{"kept":true}');
      expect(again.status).toBe(200);
      expect(again.json.data).toEqual({ ...kept.json.data, deduplicated: true });
      expect(await head(server)).toBe(headBefore);
    },
  );

  it('MUST forget a key once idempotency_retention_ms has passed; a request with it is then new', async () => {
    const { server, token, queue } = await start({ ORBIT_IDEMPOTENCY_RETENTION_MS: '1000', ORBIT_RETENTION_INTERVAL_MS: '100' });
    const first = await publish(server, token, queue, 'k', '1');
    expect(first.status).toBe(201);
    expect((await publish(server, token, queue, 'k', '1')).status).toBe(200);
    await eventually(async () => (await receipts(server)).length === 0, 15_000, 'the receipt to expire');
    const later = await publish(server, token, queue, 'k', '1');
    expect(later.status).toBe(201);
    expect(BigInt(later.json.data.event.sequence)).toBeGreaterThan(BigInt(first.json.data.event.sequence));
    expect(later.json.data.event.id).not.toBe(first.json.data.event.id);
  });
});

/** Publishes through `node` as the HTTP route does, and answers with the route's status and data. */
const render = writeKey('', '', 201, (event: Parameters<typeof eventJson>[0]) => ({ event: eventJson(event) })).render;
const publishVia = (node: Store) => (who: Principal, _queue: string, key: string, digest: string, input: ResultInput) =>
  node.publishResult(who, input, { key, digest, render }).then(writtenAnswer);

describe.each(STORES)('receipt expiry and publish receipts in the store on %s', (kind) => {
  it('MUST delete only receipts older than the cutoff, oldest first, in batches that say when more are waiting', async () => {
    const database = await freshDatabase(kind);
    const store = await Store.open(database.url);
    try {
      const boot = await store.bootstrap({ namespace: 'ns', application: 'app', queues: ['q'], permissions: ['results:publish'] });
      const principal = (await store.authenticate(boot.token))!;
      const queueId = boot.queue_ids.q!;
      for (let i = 0; i < 5; i++)
        await publishVia(store)(principal, queueId, `k${i}`, `d${i}`, { queueId, type: 'task.failed', taskId: TASK, taskRevision: '1' });
      // Receipt k<i> was created at 1000 + i.
      for (let i = 0; i < 5; i++)
        await store.db.run('UPDATE idempotency_records SET created_at = ? WHERE idem_key = ?', [1000 + i, `k${i}`]);
      const left = async () => (await store.db.all('SELECT idem_key FROM idempotency_records ORDER BY idem_key')).map((r) => r.idem_key);
      expect(await expireReceipts(store.db, 1004, 2)).toEqual({ deleted: 2, full: true });
      expect(await left()).toEqual(['k2', 'k3', 'k4']);
      expect(await expireReceipts(store.db, 1004, 2)).toEqual({ deleted: 2, full: true });
      expect(await left()).toEqual(['k4']);
      expect(await expireReceipts(store.db, 1004, 2)).toEqual({ deleted: 0, full: false });
      expect(await left()).toEqual(['k4']);
    } finally {
      await store.close();
      await database.drop();
    }
  });

  it("MUST record each publish receipt's sequence, also when two nodes race on the same keys", async () => {
    const database = await freshDatabase(kind);
    const store = await Store.open(database.url);
    // Several nodes share MySQL only; on SQLite one store commits every group.
    const other = kind === 'mysql' ? await Store.open(database.url) : store;
    try {
      const boot = await store.bootstrap({ namespace: 'ns', application: 'app', queues: ['q'], permissions: ['results:publish'] });
      const principal = (await store.authenticate(boot.token))!;
      const queueId = boot.queue_ids.q!;
      const input = (i: number) => ({
        queueId,
        type: 'task.succeeded' as const,
        taskId: TASK,
        taskRevision: '1',
        result: new RawJson(`${i}`),
      });
      const answers = await Promise.all(
        Array.from({ length: 40 }, (_, i) => [
          publishVia(store)(principal, queueId, `race-${i}`, `d${i}`, input(i)),
          publishVia(other)(principal, queueId, `race-${i}`, `d${i}`, input(i)),
        ]).flat(),
      );
      const sequenceOf = new Map(
        answers.map((a) => {
          const { event } = JSON.parse(stringify(a.data)) as { event: { sequence: string; snapshot: { result: number } } };
          return [`race-${event.snapshot.result}`, event.sequence];
        }),
      );
      const rows = await store.db.all('SELECT idem_key, sequence FROM idempotency_records');
      expect(rows).toHaveLength(40);
      for (const row of rows) expect(String(row.sequence), String(row.idem_key)).toBe(sequenceOf.get(String(row.idem_key)));
    } finally {
      if (other !== store) await other.close();
      await store.close();
      await database.drop();
    }
  });

  // Another node committing one of a group's keys first sends the group down the one-by-one path.
  // A group reads the receipts only after its one-trip attempt failed on a key that has one, so the
  // group here holds such a key (`used`), and the other node takes the head once the group reads.
  if (kind === 'mysql')
    it('MUST record the sequence when a group falls back to publishing one by one (another node took one of its keys)', async () => {
      const database = await freshDatabase(kind);
      const store = await Store.open(database.url);
      const node = await Store.open(database.url);
      try {
        const boot = await store.bootstrap({ namespace: 'ns', application: 'app', queues: ['q'], permissions: ['results:publish'] });
        const queueId = boot.queue_ids.q!;
        const request = (key: string) => ({
          scope: { credentialId: boot.credential_id, scope: `publish:${queueId}`, key, digest: `d-${key}` },
          input: { queueId, type: 'task.succeeded' as const, taskId: TASK, taskRevision: '1' },
          render,
        });
        await publishAll(store.db, [request('used')]);
        let commit!: () => void;
        const holding = new Promise<void>((resolve) => (commit = resolve));
        let held!: () => void;
        const headLocked = new Promise<void>((resolve) => (held = resolve));
        // The other node: holds the log head and writes its receipt for `taken`, as its own publish would.
        let otherNode: Promise<void> | undefined;
        const takeHead = () =>
          node.db.transaction(async (tx) => {
            await tx.all('SELECT head_sequence FROM result_head WHERE id = 1 FOR UPDATE');
            await tx.run(
              `INSERT INTO idempotency_records (credential_id, scope, idem_key, request_digest, status, response, created_at, sequence)
               VALUES (?, ?, 'taken', 'd-taken', 201, '{"event":{}}', ?, NULL)`,
              [boot.credential_id, `publish:${queueId}`, Date.now()],
            );
            held();
            await holding;
          });
        // The group's round trip that reads the receipts and asks for the head waits until the other
        // node holds the head; the other node commits its receipt for `taken` once that read has run,
        // between the group's read and its write.
        const asksForHead = (sql: string) => /FROM result_head/.test(sql) && /FOR UPDATE/.test(sql);
        const watched = (tx: Tx): Tx => ({
          dialect: tx.dialect,
          phrases: tx.phrases,
          galera: tx.galera ?? false,
          run: (sql, params) => tx.run(sql, params),
          all: (sql, params) => tx.all(sql, params),
          batch: async (statements) => {
            if (otherNode || !statements.some((statement) => asksForHead(statement.sql))) return tx.batch(statements);
            otherNode = takeHead();
            await headLocked;
            const answers = tx.batch(statements);
            setTimeout(commit, 100);
            return answers;
          },
          finish: (statements) => tx.finish(statements),
        });
        const db: Database = Object.assign(Object.create(store.db) as Database, {
          transaction: <T>(fn: (tx: Tx) => Promise<T>, options?: TransactionOptions) =>
            store.db.transaction((tx) => fn(watched(tx)), options),
        });
        const [used, taken, fresh] = await publishAll(db, [request('used'), request('taken'), request('fresh')]);
        await otherNode;
        expect(used).toMatchObject({ written: { replayed: true } });
        expect(taken).toMatchObject({ written: { replayed: true } });
        expect(fresh).toMatchObject({ written: { replayed: false, answer: { status: 201 } } });
        const { event } = JSON.parse((fresh as { written: { answer: { body: string } } }).written.answer.body) as {
          event: { sequence: string };
        };
        const [row] = await store.db.all("SELECT sequence FROM idempotency_records WHERE idem_key = 'fresh'");
        expect(String(row!.sequence)).toBe(event.sequence);
      } finally {
        await node.close();
        await store.close();
        await database.drop();
      }
    });
});

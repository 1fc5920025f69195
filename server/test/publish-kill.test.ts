/**
 * Crash safety of the HTTP seam with group commit, with real processes on both stores: 16
 * publishers send 600 results to an `orbit serve` process, each with its own Idempotency-Key and
 * retrying with that key until it gets an answer, while the server is killed with SIGKILL twice
 * and restarted. At the end every key was appended exactly once, and every answer (201 or a 200
 * replay) names the event that is in the log for that key.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Store } from '../src/store/store.ts';
import { freshDatabase, type ServerProcess, spawnServer, STORES, type TestDatabase } from '@orbit/testing';

const RESULTS = 600;
const PUBLISHERS = 16;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const between = (min: number, max: number) => min + Math.floor(Math.random() * (max - min));

describe.each(STORES)('SIGKILL of orbit serve during concurrent publishes (%s)', (kind) => {
  let database: TestDatabase;
  let store: Store;
  let server: ServerProcess | null = null;

  beforeAll(async () => {
    database = await freshDatabase(kind);
    store = await Store.open(database.url);
  });
  afterAll(async () => {
    await server?.stop('SIGKILL');
    await store?.close();
    await database?.drop();
  });

  it('appends each key once and answers every publisher with its event', async () => {
    const boot = await store.bootstrap({ namespace: 'seam', application: 'app', queues: ['q'], permissions: ['results:publish'] });
    const queueId = boot.queue_ids.q!;
    // Each restart listens on a port of its own: reusing the old one could race another test.
    server = await spawnServer(database.url);
    let base = server.url;

    const answers = new Map<string, { status: number; eventId: string; taskRevision: string }>();
    let failures = 0;
    async function publishOne(n: number): Promise<void> {
      const key = `seam-${n}`;
      const body = JSON.stringify({
        type: 'task.succeeded',
        task_id: randomBytes(16).toString('hex'),
        task_revision: String(n + 1),
        result: { n },
      });
      for (let attempt = 0; attempt < 200; attempt++) {
        try {
          const response = await fetch(`${base}/v1/queues/${queueId}/results`, {
            method: 'POST',
            headers: { authorization: `Bearer ${boot.token}`, 'idempotency-key': key, 'content-type': 'application/json' },
            body,
            signal: AbortSignal.timeout(5000),
          });
          const json = (await response.json()) as { data?: { event: { id: string; aggregate_revision: string } } };
          if (response.status === 201 || response.status === 200) {
            answers.set(key, { status: response.status, eventId: json.data!.event.id, taskRevision: json.data!.event.aggregate_revision });
            return;
          }
          failures++; // 503 while the database or the server restarts: send the same key again
        } catch {
          failures++; // the server died under the request: its fate is unknown, so resend the key
        }
        await sleep(between(20, 120));
      }
      throw new Error(`${key} got no answer in 200 attempts`);
    }
    let next = 0;
    const publishers = Array.from({ length: PUBLISHERS }, async () => {
      while (next < RESULTS) await publishOne(next++);
    });

    // Kill once a third and once two thirds of the keys are answered, so both land mid-run.
    for (const share of [1 / 3, 2 / 3]) {
      const deadline = Date.now() + 60_000;
      while (answers.size < RESULTS * share && Date.now() < deadline) await sleep(10);
      await sleep(between(0, 50));
      await server.stop('SIGKILL');
      await sleep(between(50, 300));
      server = await spawnServer(database.url);
      base = server.url;
    }
    await Promise.all(publishers);

    expect(answers.size).toBe(RESULTS);
    const rows = await store.db.all('SELECT id, task_revision FROM results WHERE queue_id = ?', [queueId]);
    // Exactly one result per key (task_revision n + 1 stands for key n), none lost, none doubled.
    expect(rows.length).toBe(RESULTS);
    const byRevision = new Map(rows.map((r) => [String(r.task_revision), String(r.id)]));
    expect(byRevision.size).toBe(RESULTS);
    for (const [key, answer] of answers) {
      expect(byRevision.get(answer.taskRevision), key).toBe(answer.eventId);
    }
    // The kills did land while publishes were in flight.
    expect(failures).toBeGreaterThan(0);
  }, 120_000);
});

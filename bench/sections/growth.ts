/**
 * @module
 * Growth: the end-to-end figure (in-process appends, 1 subscription × 4 connections × capacity 32)
 * with a large log already present, as a ratio to the same figure on an empty log measured in the
 * same section.
 *
 * The prefill writes `results` rows straight into the table with multi-row INSERTs (1000 rows per
 * statement, the same ~600-byte payload, random 128-bit ids like the engine's) and moves
 * `result_head`: half of the rows are on the
 * benchmark's own queue (so its index range is the one that grew), a quarter on another queue of
 * the same namespace, a quarter on a second namespace's queue. Then 100 subscriptions are created
 * (50 per namespace, at the head, without sessions). The measured subscription is created at the
 * head, so it consumes only new results; what is measured is whether a big log and many
 * subscriptions slow appends, scans and claims down.
 *
 * A third figure (not in the bar) runs the same case on a long-lived subscription: one
 * that already has `history` ACKED deliveries, as any subscription has after consuming for a while.
 */
import { randomBytes } from 'node:crypto';
import mysql from 'mysql2/promise';
import type { Timing } from '../lib/measure.ts';
import { bootstrap, createSubscription, type BenchDatabase } from '../lib/orbit.ts';
import { DETAILS_TEXT, RESULT_TEXT } from '../lib/payload.ts';
import { hexId, now } from '../lib/util.ts';
import type { WorkerClient } from '../lib/worker-client.ts';
import { E2eBench, type E2eCase, type E2eResult } from './e2e.ts';

const ROWS_PER_INSERT = 1000;
const RESULT_COLUMNS =
  'sequence, id, queue_id, type, task_id, task_revision, occurred_at, details, result, effect_uncertain, current_attempt_id';

export interface GrowthResult {
  readonly prefilled: number;
  readonly prefillSeconds: number;
  readonly subscriptions: number;
  readonly empty: E2eResult;
  readonly grown: E2eResult;
  readonly ratio: number;
  /** The same case on a subscription that already has `history` ACKED deliveries (0: not run). */
  readonly history: number;
  readonly withHistory?: E2eResult;
}

interface Fixture {
  readonly token: string;
  readonly queueId: string;
  readonly otherQueueId: string;
  readonly secondToken: string;
  readonly secondQueueId: string;
}

async function fixture(bench: E2eBench): Promise<Fixture> {
  const store = bench.server.orbit.store;
  const a = await bootstrap(store, 'growth-a', ['q', 'other']);
  const b = await bootstrap(store, 'growth-b', ['q2']);
  return {
    token: a.token,
    queueId: a.queue_ids.q!,
    otherQueueId: a.queue_ids.other!,
    secondToken: b.token,
    secondQueueId: b.queue_ids.q2!,
  };
}

/** Inserts `count` results after the current head and moves the head; returns seconds taken. */
async function prefill(bench: E2eBench, f: Fixture, count: number): Promise<number> {
  const db = bench.server.orbit.store.db;
  const started = now();
  const { head } = await bench.server.orbit.store.logPosition();
  const queues = [f.queueId, f.otherQueueId, f.queueId, f.secondQueueId];
  const occurredAt = Date.now();
  const placeholders = Array.from({ length: ROWS_PER_INSERT }, () => '(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)').join(', ');
  const sqliteSql = `INSERT INTO results (${RESULT_COLUMNS}) VALUES ${placeholders}`;
  // MySQL: the statement is built as text (the constant JSON escaped once); formatting 11,000
  // parameters per statement in the driver would make the prefill CPU-bound in this process.
  const details = mysql.escape(DETAILS_TEXT);
  const result = mysql.escape(RESULT_TEXT);
  // Two writers on MySQL (disjoint sequence ranges); SQLite has one writer anyway.
  const writers = db.dialect === 'mysql' ? 2 : 1;
  const batches = Math.ceil(count / ROWS_PER_INSERT);
  let nextBatch = 0;
  const writer = async () => {
    for (;;) {
      const batch = nextBatch++;
      if (batch >= batches) return;
      if (db.dialect === 'mysql') {
        const values: string[] = [];
        for (let i = 0; i < ROWS_PER_INSERT; i++) {
          const n = batch * ROWS_PER_INSERT + i;
          values.push(
            `(${head + BigInt(n + 1)},'${randomBytes(16).toString('hex')}','${queues[n % queues.length]}','task.succeeded','${hexId(0x7a5c, n)}','1',${occurredAt},${details},${result},0,NULL)`,
          );
        }
        await db.transaction((tx) => tx.run(`INSERT INTO results (${RESULT_COLUMNS}) VALUES ${values.join(',')}`));
        continue;
      }
      const params: unknown[] = [];
      for (let i = 0; i < ROWS_PER_INSERT; i++) {
        const n = batch * ROWS_PER_INSERT + i;
        params.push(
          head + BigInt(n + 1),
          randomBytes(16).toString('hex'),
          queues[n % queues.length],
          'task.succeeded',
          hexId(0x7a5c, n),
          '1',
          occurredAt,
          DETAILS_TEXT,
          RESULT_TEXT,
          0,
          null,
        );
      }
      await db.transaction((tx) => tx.run(sqliteSql, params));
    }
  };
  await Promise.all(Array.from({ length: writers }, writer));
  await db.transaction((tx) =>
    tx.run('UPDATE result_head SET head_sequence = ? WHERE id = 1', [(head + BigInt(batches * ROWS_PER_INSERT)).toString()]),
  );
  return (now() - started) / 1000;
}

const DELIVERY_COLUMNS =
  'id, subscription_id, sequence, event_id, revision, state, created_at, available_at, lease_epoch, lease_until, lease_digest, lease_session, attempts, attempt_budget, acknowledged_at';

/**
 * Gives a subscription `count` ACKED deliveries (sequences 1..count, below its cursor), as a
 * subscription that has been consuming for a while has: what a claim's scans must skip.
 */
async function prefillHistory(bench: E2eBench, subscriptionId: string, count: number): Promise<number> {
  const db = bench.server.orbit.store.db;
  const started = now();
  const at = Date.now();
  const placeholders = Array.from({ length: ROWS_PER_INSERT }, () => "(?, ?, ?, ?, 3, 'ACKED', ?, ?, 1, NULL, NULL, NULL, 1, 20, ?)").join(
    ', ',
  );
  const sql = `INSERT INTO deliveries (${DELIVERY_COLUMNS}) VALUES ${placeholders}`;
  for (let batch = 0; batch < Math.ceil(count / ROWS_PER_INSERT); batch++) {
    const params: unknown[] = [];
    for (let i = 0; i < ROWS_PER_INSERT; i++) {
      const n = batch * ROWS_PER_INSERT + i + 1;
      params.push(randomBytes(16).toString('hex'), subscriptionId, String(n), randomBytes(16).toString('hex'), at, at, at);
    }
    await db.transaction((tx) => tx.run(sql, params));
  }
  return (now() - started) / 1000;
}

export async function growthBench(args: {
  emptyDb: BenchDatabase;
  grownDb: BenchDatabase;
  consumer: WorkerClient;
  publisher: WorkerClient;
  dbPid: number | null;
  timing: Timing;
  results: number;
  /** ACKED deliveries to give a long-lived subscription (0 skips that case). */
  history?: number;
  onProgress?: (text: string) => void;
}): Promise<GrowthResult> {
  const c: E2eCase = { store: args.emptyDb.kind, mode: 'in-process', subscriptions: 1, connections: 4, capacity: 32 };
  const emptyBench = await E2eBench.start(args.emptyDb, args.consumer, args.publisher, args.dbPid);
  let empty: E2eResult;
  try {
    const f = await fixture(emptyBench);
    empty = await emptyBench.runCase(c, args.timing, { token: f.token, queueId: f.queueId });
  } finally {
    await emptyBench.close();
  }
  const grownBench = await E2eBench.start(args.grownDb, args.consumer, args.publisher, args.dbPid);
  try {
    const f = await fixture(grownBench);
    const prefillSeconds = await prefill(grownBench, f, args.results);
    args.onProgress?.(`prefilled ${args.results} results in ${prefillSeconds.toFixed(1)} s`);
    const store = grownBench.server.orbit.store;
    for (let i = 0; i < 50; i++) {
      await createSubscription(store, f.token, { name: `idle-${i}`, queue_id: i % 2 === 0 ? f.queueId : f.otherQueueId });
      await createSubscription(store, f.secondToken, { name: `idle-${i}`, queue_id: f.secondQueueId });
    }
    const grown = await grownBench.runCase(c, args.timing, { token: f.token, queueId: f.queueId });
    const history = args.history ?? 0;
    let withHistory: E2eResult | undefined;
    if (history > 0) {
      const subscriptionId = await createSubscription(store, f.token, { name: 'long-lived', queue_id: f.queueId, max_pending: 1000 });
      const seconds = await prefillHistory(grownBench, subscriptionId, history);
      args.onProgress?.(`gave one subscription ${history} ACKED deliveries in ${seconds.toFixed(1)} s`);
      withHistory = await grownBench.runCase(c, args.timing, { token: f.token, queueId: f.queueId, subscriptionIds: [subscriptionId] });
    }
    return {
      prefilled: args.results,
      prefillSeconds,
      subscriptions: 100,
      empty,
      grown,
      ratio: grown.eventsPerS / empty.eventsPerS,
      history,
      ...(withHistory ? { withHistory } : {}),
    };
  } finally {
    await grownBench.close();
  }
}

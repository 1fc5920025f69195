/**
 * @module
 * End-to-end throughput: results appended (in process with `store.appendResults` in batches, or
 * over the HTTP seam `POST /v1/queues/{id}/results`, one result per request or 100 per
 * `…/results:batch`) → `event.deliver` → ACK confirmed by the
 * server's `ack` reply. The server runs in this process (it has to, for the in-process seam); the
 * consumers are raw `ws` clients in a child process so they do not share the server's event loop;
 * the HTTP publisher is a second child process.
 *
 * Each run uses a fresh namespace, queue and subscription(s) (max_pending 1000, so a 16 × 32
 * window is never capped by the default backlog limit of 100) in one database per store.
 */
import type { ResultInput } from '@orbit/server';
import type { RunningNode } from '../../server/src/internal.ts';
import { RawJson } from '@orbit/spec/codec';
import mysql from 'mysql2/promise';
import { mysqlCounters } from '../lib/machine.ts';
import { leadLimitedProducer, measureRate, type Producer, type RateSample, type Timing } from '../lib/measure.ts';
import {
  bootstrap,
  createSubscription,
  MYSQL_ROOT,
  startInProcess,
  type BenchDatabase,
  type ServerErrors,
  type StoreKind,
} from '../lib/orbit.ts';
import { DETAILS_TEXT, RESULT_TEXT } from '../lib/payload.ts';
import { hexId, median, sleep } from '../lib/util.ts';
import type { WorkerClient } from '../lib/worker-client.ts';

export type AppendMode = 'in-process' | 'http';

export interface E2eCase {
  readonly store: StoreKind;
  readonly mode: AppendMode;
  readonly subscriptions: number;
  readonly connections: number;
  readonly capacity: number;
  /** Over HTTP: results per `POST …/results:batch` (spec/README.md, Batch publish); absent: one per request. */
  readonly batch?: number;
}

export function caseLabel(c: Omit<E2eCase, 'store' | 'mode'>): string {
  return `${c.subscriptions} sub × ${c.connections} conn × cap ${c.capacity}`;
}

/** A row's name: `mysql http 1 sub × 4 conn × cap 32`, `sqlite http batch 100 1 sub × 4 conn × cap 32`. */
export function e2eLabel(c: E2eCase): string {
  return `${c.store} ${c.mode}${c.batch ? ` batch ${c.batch}` : ''} ${caseLabel(c)}`;
}

/** Items per request of the batch rows, and the publishers sending them. */
export const BATCH_ITEMS = 100;
const BATCH_PUBLISHERS = 4;

/** The issue's matrix: 1 subscription × {1, 4, 16} connections × capacity {1, 32}, and 16 subscriptions × 1 connection (capacity 32). */
export const SHAPES: ReadonlyArray<Omit<E2eCase, 'store' | 'mode'>> = [
  { subscriptions: 1, connections: 1, capacity: 1 },
  { subscriptions: 1, connections: 4, capacity: 1 },
  { subscriptions: 1, connections: 16, capacity: 1 },
  { subscriptions: 1, connections: 1, capacity: 32 },
  { subscriptions: 1, connections: 4, capacity: 32 },
  { subscriptions: 1, connections: 16, capacity: 32 },
  { subscriptions: 16, connections: 1, capacity: 32 },
];

export interface E2eResult {
  readonly c: E2eCase;
  readonly runs: RateSample[];
  readonly eventsPerS: number;
  readonly median: RateSample;
  readonly serverErrors: string[];
}

/** How far the producer may run ahead of confirmed ACKs (in deliveries). */
export function leadFor(c: Pick<E2eCase, 'subscriptions' | 'connections' | 'capacity'>): number {
  return Math.max(64, 4 * c.subscriptions * c.connections * c.capacity);
}

const APPEND_BATCH = 64;

function inputs(queueId: string, n: number, base: number): ResultInput[] {
  const out: ResultInput[] = [];
  for (let i = 0; i < n; i++) {
    out.push({
      queueId,
      type: 'task.succeeded',
      taskId: hexId(0xbe7c, base + i),
      taskRevision: '1',
      details: new RawJson(DETAILS_TEXT),
      result: new RawJson(RESULT_TEXT),
    });
  }
  return out;
}

/** An existing credential and queue, and optionally existing subscriptions to consume from. */
export interface Fixture {
  readonly token: string;
  readonly queueId: string;
  readonly subscriptionIds?: readonly string[];
}

export class E2eBench {
  private runCounter = 0;

  private constructor(
    readonly db: BenchDatabase,
    readonly server: RunningNode,
    private readonly errors: ServerErrors,
    private readonly consumer: WorkerClient,
    private readonly publisher: WorkerClient,
    private readonly dbPid: number | null,
    /** A separate connection for reading MySQL's global counters (null on SQLite). */
    private readonly monitor: mysql.Connection | null,
  ) {}

  static async start(db: BenchDatabase, consumer: WorkerClient, publisher: WorkerClient, dbPid: number | null): Promise<E2eBench> {
    const { server, errors } = await startInProcess(db);
    const monitor = db.kind === 'mysql' ? await mysql.createConnection({ uri: MYSQL_ROOT }) : null;
    return new E2eBench(db, server, errors, consumer, publisher, dbPid, monitor);
  }

  async close(): Promise<void> {
    await this.monitor?.end();
    await this.server.close();
  }

  /** One run of a case on a fresh namespace. */
  /**
   * One run of a case: on a fresh namespace and queue, or on `fixture` (an existing credential and
   * queue, used by the growth section). Subscriptions are new (at the head) unless the fixture
   * names existing ones.
   */
  async runOnce(c: E2eCase, timing: Timing, fixture?: Fixture): Promise<RateSample> {
    const store = this.server.orbit.store;
    const run = ++this.runCounter;
    const cred = fixture
      ? { token: fixture.token, queue_ids: { q: fixture.queueId } as Record<string, string> }
      : await bootstrap(store, `e2e-${run}`, ['q']);
    const queueId = cred.queue_ids.q!;
    const subscriptionIds: string[] = [...(fixture?.subscriptionIds ?? [])];
    for (let s = subscriptionIds.length; s < c.subscriptions; s++)
      subscriptionIds.push(await createSubscription(store, cred.token, { name: `r${run}-s${s}`, queue_id: queueId, max_pending: 1000 }));
    await this.consumer.request({ op: 'reset' });
    await this.consumer.request(
      {
        op: 'orbit-consumers',
        url: this.server.url,
        token: cred.token,
        groups: subscriptionIds.map((id) => ({ subscriptionId: id, connections: c.connections, capacity: c.capacity })),
      },
      30_000,
    );
    // A batch row keeps two batches per publisher in flight.
    const lead = c.batch ? Math.max(leadFor(c), 2 * BATCH_PUBLISHERS * c.batch * c.subscriptions) : leadFor(c);
    const maxMs = timing.warmupMs + timing.measureMs + 10_000;
    let producer: Producer;
    if (c.mode === 'in-process') {
      let base = run * 1_000_000;
      producer = leadLimitedProducer({
        acked: () => this.consumer.progress,
        lead,
        fanout: c.subscriptions,
        batch: APPEND_BATCH,
        maxMs,
        append: async (n) => {
          await store.appendResults(inputs(queueId, n, base));
          base += n;
        },
        onError: (error) => {
          this.errors.count++;
          if (this.errors.samples.length < 5) this.errors.samples.push(`append: ${String(error)}`);
        },
      });
    } else {
      let relay: NodeJS.Timeout | undefined;
      producer = {
        start: async () => {
          relay = setInterval(() => this.publisher.tell({ type: 'acked', count: this.consumer.progress }), 10);
          await this.publisher.request({ op: 'reset' });
          await this.publisher.request({
            op: 'http-publish',
            url: this.server.url,
            token: cred.token,
            queueId,
            concurrency: c.batch ? BATCH_PUBLISHERS : 16,
            ...(c.batch ? { batch: c.batch } : {}),
            lead,
            fanout: c.subscriptions,
            maxMs,
          });
        },
        stop: async () => {
          await this.publisher.request({ op: 'stop-publish' }, 20_000);
          clearInterval(relay);
        },
      };
    }
    try {
      const pids: Record<string, number | null> = { db: this.dbPid, consumer: null };
      if (c.mode === 'http') pids.publisher = this.publisher.pid;
      const monitor = this.monitor;
      return await measureRate({
        consumer: this.consumer,
        producer,
        timing,
        pids,
        ...(monitor ? { counters: () => mysqlCounters(monitor) } : {}),
      });
    } finally {
      await this.consumer.request({ op: 'close-consumers' }, 20_000);
      // Let claims that were in flight for the closed sessions finish before the next run.
      await sleep(50);
    }
  }

  async runCase(c: E2eCase, timing: Timing, fixture?: Fixture): Promise<E2eResult> {
    const runs: RateSample[] = [];
    const before = this.errors.count;
    for (let r = 0; r < timing.runs; r++) runs.push(await this.runOnce(c, timing, fixture));
    const eventsPerS = median(runs.map((s) => s.eventsPerS));
    const sorted = [...runs].sort((a, b) => a.eventsPerS - b.eventsPerS);
    return {
      c,
      runs,
      eventsPerS,
      median: sorted[sorted.length >> 1]!,
      serverErrors: this.errors.count > before ? [...this.errors.samples] : [],
    };
  }
}

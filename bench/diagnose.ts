/**
 * @module diagnose
 * One end-to-end case with the engine's transactions timed from outside (the store's `claim` and
 * the database's `transaction` are wrapped in this process; no server code changes) and MySQL's
 * counters per event: how many claims, how many deliveries per claim, how long each transaction
 * takes and waits for a pooled connection. Evidence for docs/benchmarks.md.
 *
 *   npx tsx bench/diagnose.ts [mysql|sqlite] [in-process|http] SUBS CONNS CAPACITY [PROFILE.cpuprofile]
 *
 * With a profile path, this process (the server) is profiled during the measured run only, not
 * while it starts or warms up, and statements are not timed; read it with `npx tsx bench/profile-summary.ts PROFILE.cpuprofile`.
 *
 * Environment: `DIAGNOSE_MS` sets the measured window (3000 ms; longer to attach `strace -c -f -p`
 * to this process, which serves in process). `DIAGNOSE_SLOW_LOG=1` (MySQL) prints what MariaDB
 * spent on each statement in the window, from its slow log (bench/lib/slow-log.ts).
 */
import { readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mysql from 'mysql2/promise';
import { findPid } from './lib/machine.ts';
import { freshDatabase, MYSQL_ROOT, type StoreKind } from './lib/orbit.ts';
import { logEveryStatement, statementKey, summarizeSlowLog } from './lib/slow-log.ts';
import { median, percentile } from './lib/util.ts';
import { WorkerClient } from './lib/worker-client.ts';
import { E2eBench, type AppendMode } from './sections/e2e.ts';

const measureMs = Number(process.env.DIAGNOSE_MS ?? 3000);
const [kind = 'mysql', mode = 'in-process', subs = '1', conns = '4', cap = '32', profilePath] = process.argv.slice(2);
// On before the server opens its pools: a connection copies `long_query_time` when it connects.
const slowLog = process.env.DIAGNOSE_SLOW_LOG === '1' && kind === 'mysql' ? join(tmpdir(), `orbit-diagnose-${process.pid}.slow.log`) : null;
const admin = slowLog ? await mysql.createConnection({ uri: MYSQL_ROOT }) : null;
const restoreLog = admin && slowLog ? await logEveryStatement(admin, slowLog) : null;
const logSize = () => (slowLog ? (statSync(slowLog, { throwIfNoEntry: false })?.size ?? 0) : 0);
const consumer = await WorkerClient.start('consumer');
const publisher = await WorkerClient.start('publisher');
const db = await freshDatabase(kind as StoreKind);
const bench = await E2eBench.start(db, consumer, publisher, kind === 'mysql' ? findPid('mariadbd') : null);
const store = bench.server.orbit.store as any;
const engine = bench.server.orbit.engine as any;
/** Turns that leased or tried to (`items`: deliveries; -1: the subscription was not open), and their ACKs. */
const claims: { ms: number; items: number; acks: number }[] = [];
const txs: { ms: number }[] = [];
let recording = false;
const turn = engine.turn.bind(engine);
engine.turn = async (request: any) => {
  const t0 = performance.now();
  const outcome = await turn(request);
  if (recording)
    claims.push({
      ms: performance.now() - t0,
      items: request.sessions.length === 0 ? -2 : outcome.state.kind === 'open' ? outcome.leased.length : -1,
      acks: request.acks.length,
    });
  return outcome;
};
const statements = new Map<string, number[]>();
const record = (k: string, ms: number) => {
  if (recording) (statements.get(k) ?? statements.set(k, []).get(k)!).push(ms);
};
const timed = (tx: any, prefix = '') => ({
  dialect: tx.dialect,
  phrases: tx.phrases,
  async batch(statements: any[]) {
    const t0 = performance.now();
    try {
      return await tx.batch(statements);
    } finally {
      record(`${prefix}[round trip] ${statements.map((s) => statementKey(s.sql).slice(0, 28)).join(' | ')}`, performance.now() - t0);
    }
  },
  async finish(statements: any[]) {
    const t0 = performance.now();
    try {
      return await tx.finish(statements);
    } finally {
      record(
        `${prefix}[round trip + COMMIT] ${statements.map((s) => statementKey(s.sql).slice(0, 28)).join(' | ')}`,
        performance.now() - t0,
      );
    }
  },
  async all(sql: string, params?: unknown[]) {
    const t0 = performance.now();
    try {
      return await tx.all(sql, params);
    } finally {
      record(prefix + statementKey(sql), performance.now() - t0);
    }
  },
  async run(sql: string, params?: unknown[]) {
    const t0 = performance.now();
    try {
      return await tx.run(sql, params);
    } finally {
      record(prefix + statementKey(sql), performance.now() - t0);
    }
  },
});
// Statements outside transactions (reads through the pool) are counted too, marked "(direct)".
const direct = timed(
  { dialect: store.db.dialect, phrases: store.db.phrases, all: store.db.all.bind(store.db), run: store.db.run.bind(store.db) },
  '(direct) ',
);
// A profiled run times no statement: the wrappers would be a good part of what the profile shows.
if (!profilePath) {
  store.db.all = direct.all;
  store.db.run = direct.run;
}
const transaction = store.db.transaction.bind(store.db);
store.db.transaction = async (fn: any, options: any) => {
  const t0 = performance.now();
  let started = 0;
  try {
    return await transaction((tx: any) => {
      started = performance.now();
      return fn(profilePath ? tx : timed(tx));
    }, options);
  } finally {
    if (recording) txs.push({ ms: performance.now() - t0, wait: started - t0 } as any);
  }
};
try {
  const c = {
    store: kind as StoreKind,
    mode: mode as AppendMode,
    subscriptions: Number(subs),
    connections: Number(conns),
    capacity: Number(cap),
  };
  await bench.runOnce(c, { warmupMs: 500, measureMs: 1000, runs: 1 });
  const profiler = profilePath ? new Session() : null;
  profiler?.connect();
  await profiler?.post('Profiler.enable');
  await profiler?.post('Profiler.start');
  // The embedded store counts its durable commits (one per commit group).
  const commitsBefore = Number(store.db.inner?.commits ?? store.db.commits ?? Number.NaN);
  const logFrom = logSize();
  recording = true;
  const sample = await bench.runOnce(c, { warmupMs: 750, measureMs, runs: 1 });
  recording = false;
  const logTo = logSize();
  if (profiler && profilePath) {
    const { profile } = await profiler.post('Profiler.stop');
    writeFileSync(profilePath, JSON.stringify(profile));
    profiler.disconnect();
  }
  const seconds = 0.75 + measureMs / 1000; // claims/txs are recorded over warm-up + window
  const ackOnly = claims.filter((x) => x.items === -2);
  const leasing = claims.filter((x) => x.items !== -2);
  const nonEmpty = leasing.filter((x) => x.items > 0);
  console.log(JSON.stringify(c));
  console.log(
    `events/s ${sample.eventsPerS.toFixed(0)}; cpu µs/event ${JSON.stringify(Object.fromEntries(Object.entries(sample.cpuUsPerEvent).map(([k, v]) => [k, Math.round(v)])))}`,
  );
  console.log(`db counters per event ${JSON.stringify(sample.countersPerEvent ?? {})}`);
  const commitsAfter = Number(store.db.inner?.commits ?? store.db.commits ?? Number.NaN);
  if (!Number.isNaN(commitsAfter))
    console.log(
      `sqlite commits/s ${((commitsAfter - commitsBefore) / seconds).toFixed(0)} (transactions/s ${(txs.length / seconds).toFixed(0)})`,
    );
  console.log(
    `turns/s ${(claims.length / seconds).toFixed(0)}: leasing ${(leasing.length / seconds).toFixed(0)} (empty ${leasing.filter((x) => x.items === 0).length}), ACK-only ${(ackOnly.length / seconds).toFixed(0)}; deliveries per non-empty turn median ${median(nonEmpty.map((x) => x.items))} mean ${(nonEmpty.reduce((s, x) => s + x.items, 0) / Math.max(1, nonEmpty.length)).toFixed(1)}; ACKs per turn mean ${(claims.reduce((s, x) => s + x.acks, 0) / Math.max(1, claims.length)).toFixed(1)}`,
  );
  console.log(
    `transaction start wait (pool + BEGIN) ms p50 ${percentile(
      txs.map((x: any) => x.wait),
      50,
    ).toFixed(2)} p99 ${percentile(
      txs.map((x: any) => x.wait),
      99,
    ).toFixed(2)}`,
  );
  console.log('statements (count/s, p50 ms, p99 ms, total ms/s):');
  for (const [sql, times] of [...statements].sort((a, b) => b[1].reduce((x, y) => x + y, 0) - a[1].reduce((x, y) => x + y, 0))) {
    console.log(
      `  ${(times.length / seconds).toFixed(0).padStart(6)} ${percentile(times, 50).toFixed(2).padStart(7)} ${percentile(times, 99).toFixed(2).padStart(7)} ${(times.reduce((x, y) => x + y, 0) / seconds).toFixed(0).padStart(6)}  ${sql}`,
    );
  }
  console.log(
    `turn ms p50 ${percentile(
      claims.map((x) => x.ms),
      50,
    ).toFixed(2)} p99 ${percentile(
      claims.map((x) => x.ms),
      99,
    ).toFixed(2)}; all transactions/s ${(txs.length / seconds).toFixed(0)}, ms p50 ${percentile(
      txs.map((x) => x.ms),
      50,
    ).toFixed(2)} p99 ${percentile(
      txs.map((x) => x.ms),
      99,
    ).toFixed(2)}`,
  );
  if (slowLog) {
    // The log is written by mariadbd: read the window's bytes, whole statements only.
    const text = readFileSync(slowLog).subarray(logFrom, logTo).toString('utf8');
    console.log('MariaDB per statement, from its slow log (count/s, wall µs, rows examined, pages, bytes sent per execution):');
    for (const s of summarizeSlowLog(text).slice(0, 15))
      console.log(
        `  ${(s.count / seconds).toFixed(0).padStart(6)} ${s.wallUs.toFixed(0).padStart(6)} ${s.rowsExamined.toFixed(1).padStart(6)} ${s.pages.toFixed(1).padStart(6)} ${s.bytesSent.toFixed(0).padStart(6)}  ${s.statement}`,
      );
  }
} finally {
  await restoreLog?.();
  await admin?.end();
  if (slowLog) rmSync(slowLog, { force: true });
  await bench.close();
  await db.drop();
  await consumer.stop();
  await publisher.stop();
}

/**
 * @module bench
 * `npm run bench` (not part of `npm test`): Orbit's end-to-end throughput on MySQL and SQLite next
 * to NATS JetStream in the same run, publish→deliver latency on one and two nodes, management API
 * requests/s against a bare route, idle-session memory, growth with a large log, and three nodes
 * on a Galera cluster against three on one MariaDB. Prints ONE table and writes
 * `bench/results.json`. Method and limits: docs/benchmarks.md.
 *
 *   npm run bench                      # full run, 3 runs per figure (median), < 10 minutes
 *   npm run bench -- --quick           # smoke run, 1 run per figure, about 2 minutes
 *   npm run bench -- --sections e2e,jetstream --only "mysql in-process 1 sub × 4 conn"
 *
 * Profiling one case: node --cpu-prof --cpu-prof-dir=bench/profiles --import tsx scripts/bench.ts
 *   --sections e2e --only "mysql in-process 1 sub × 4 conn × cap 32"; then
 *   npx tsx bench/profile-summary.ts bench/profiles/<file>.cpuprofile
 *
 * Longer than 400 lines: `main` is the run's one sequence, section after section, turning what
 * bench/sections and bench/lib measure into the rows of the one table, in the order they print,
 * then the bars (`performanceBars` holds the throughput, CPU, latency and management targets);
 * the measuring itself lives in those folders.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { findPid, machineInfo } from '../bench/lib/machine.ts';
import type { Timing } from '../bench/lib/measure.ts';
import { freshDatabase, MYSQL_ROOT, type BenchDatabase, type StoreKind } from '../bench/lib/orbit.ts';
import { PAYLOAD_BYTES } from '../bench/lib/payload.ts';
import { renderTable, type Bar, type Row } from '../bench/lib/report.ts';
import { fmt, median, now } from '../bench/lib/util.ts';
import { WorkerClient } from '../bench/lib/worker-client.ts';
import { BATCH_ITEMS, e2eLabel, E2eBench, SHAPES, type AppendMode, type E2eCase, type E2eResult } from '../bench/sections/e2e.ts';
import { GALERA_CASE_LABEL, galeraBench } from '../bench/sections/galera.ts';
import { growthBench } from '../bench/sections/growth.ts';
import { JetStreamBench, NATS_URL, WINDOW, type JsResult } from '../bench/sections/jetstream.ts';
import { floodFairness, oneNodeLatency, twoNodeLatency, type FloodResult, type LatencyResult } from '../bench/sections/latency.ts';
import { CONCURRENCY, managementBench } from '../bench/sections/management.ts';
import { IDLE_SESSIONS, memoryBench } from '../bench/sections/memory.ts';
import { idleStatements, type IdleResult } from '../bench/sections/idle.ts';

const SECTIONS = ['jetstream', 'e2e', 'latency', 'management', 'memory', 'growth', 'galera'] as const;
type Section = (typeof SECTIONS)[number];

const { values: options } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    sections: { type: 'string' },
    only: { type: 'string' },
    stores: { type: 'string' },
    output: { type: 'string' },
    'sqlite-growth': { type: 'boolean', default: false },
    help: { type: 'boolean', default: false },
  },
  strict: true,
});

if (options.help) {
  console.log(
    `usage: npm run bench -- [--quick] [--sections ${SECTIONS.join(',')}] [--stores mysql,sqlite] [--only TEXT] [--sqlite-growth] [--output FILE]`,
  );
  process.exit(0);
}

const quick = options.quick;
const sections = new Set<Section>((options.sections?.split(',').map((s) => s.trim()) ?? [...SECTIONS]) as Section[]);
for (const s of sections) if (!SECTIONS.includes(s)) throw new Error(`unknown section ${s}; known: ${SECTIONS.join(', ')}`);
const stores = (options.stores?.split(',').map((s) => s.trim()) ?? ['mysql', 'sqlite']) as StoreKind[];
const only = options.only;
const selected = (label: string) => only === undefined || label.includes(only);
const output = options.output ?? fileURLToPath(new URL('../bench/results.json', import.meta.url));

/** Full: median of 3 runs of 0.75 s warm-up + 2 s window. Quick: one run of 0.4 s + 1 s. */
const E2E: Timing = quick ? { warmupMs: 400, measureMs: 1000, runs: 1 } : { warmupMs: 750, measureMs: 2000, runs: 3 };
const MGMT: Timing = quick ? { warmupMs: 300, measureMs: 1000, runs: 1 } : { warmupMs: 500, measureMs: 2000, runs: 3 };
const LATENCY_SAMPLES = quick ? { one: 100, two: 40 } : { one: 400, two: 150 };
/** Pings one connection writes at once in the read-queue fairness row. */
const FLOOD_PINGS = 3000;
const FLOOD_RUNS = quick ? 1 : 3;
const GROWTH_RESULTS = quick ? 100_000 : 1_000_000;
const GROWTH_HISTORY = quick ? 20_000 : 100_000;
const MEMORY_REPEATS = quick ? 1 : 3;
const MEMORY_SETTLE = { settleMs: 10_000, samples: 4 };
/** The window of the idle-node statement count: long enough for a heartbeat (every 5 s). */
const IDLE_WINDOW_MS = quick ? 5000 : 10_000;

const rows: Row[] = [];
const bars: Bar[] = [];
const problems: string[] = [];
const started = now();

function log(text: string): void {
  process.stderr.write(`[bench ${((now() - started) / 1000).toFixed(0).padStart(3)} s] ${text}\n`);
}

/** MySQL statements and commits per event (from global status), for the notes column. */
function counterNote(counters: Record<string, number> | undefined): string {
  if (!counters) return '';
  return `${counters.statements?.toFixed(1)} stmt, ${counters.commits?.toFixed(2)} commits, ${counters.fsyncs?.toFixed(2)} fsyncs /ev`;
}

function roundCpu(cpu: Record<string, number>): Record<string, number> {
  return Object.fromEntries(
    Object.entries(cpu)
      .filter(([, v]) => Number.isFinite(v))
      .map(([k, v]) => [k, Math.round(v)]),
  );
}

/** The commit measured (read-only git), with `+dirty` when server/ has uncommitted changes. */
function gitRevision(): string {
  try {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8', timeout: 5000 }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--', 'server'], { encoding: 'utf8', timeout: 5000 }).trim() !== '';
    return dirty ? `${head}+dirty` : head;
  } catch {
    return 'unknown';
  }
}

async function preflight(): Promise<void> {
  const mysql = await import('mysql2/promise');
  try {
    const conn = await mysql.default.createConnection({ uri: MYSQL_ROOT, connectTimeout: 3000 });
    await conn.end();
  } catch (error) {
    throw new Error(
      `MariaDB is not reachable at ${MYSQL_ROOT} (${String(error)}); start it: start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd -- --user=mysql`,
    );
  }
  const { connect } = await import('nats');
  try {
    const nc = await connect({ servers: NATS_URL, timeout: 3000 });
    const jsm = await nc.jetstreamManager();
    await jsm.getAccountInfo();
    await nc.close();
  } catch (error) {
    throw new Error(
      `NATS JetStream is not reachable at ${NATS_URL} (${String(error)}); start it: start-stop-daemon --start --oknodo --background --exec /usr/sbin/nats-server -- -a 127.0.0.1 -p 4222 -js -sd /var/lib/nats-server`,
    );
  }
}

const databases: BenchDatabase[] = [];
async function database(kind: StoreKind): Promise<BenchDatabase> {
  const db = await freshDatabase(kind);
  databases.push(db);
  return db;
}

async function main(): Promise<void> {
  await preflight();
  const machine = await machineInfo(MYSQL_ROOT);
  const revision = gitRevision();
  const loadBefore = os.loadavg().map((l) => Number(l.toFixed(2)));
  if (loadBefore[0]! > 0.5 * machine.cpus)
    log(`WARNING: load average ${loadBefore.join(' ')} on ${machine.cpus} CPUs: other work is running, figures will be noisy`);
  log(
    `${machine.cpus} CPUs, ${machine.memory_gib} GiB, MariaDB ${machine.mariadb}, ${machine.nats_server}, Node ${machine.node}; revision ${revision}; ${quick ? 'quick' : 'full'} run`,
  );
  const consumer = await WorkerClient.start('consumer');
  const publisher = await WorkerClient.start('publisher');
  const mariadbPid = findPid('mariadbd') ?? findPid('mysqld');
  const jetstream: Partial<Record<'window' | 'single', JsResult>> = {};
  const e2e: E2eResult[] = [];
  try {
    // --- the peer, first, so every Orbit row can show its ratio -------------------------------
    if (sections.has('jetstream')) {
      const js = await JetStreamBench.start(consumer);
      try {
        for (const mode of ['window', 'single'] as const) {
          const label = mode === 'window' ? `durable pull, ackAck, ${WINDOW} outstanding` : 'durable pull, ackAck, one at a time';
          log(`jetstream ${label}`);
          const result = await js.runMode(mode, E2E);
          jetstream[mode] = result;
          rows.push({
            section: 'jetstream',
            case: label,
            value: result.eventsPerS,
            unit: 'events/s',
            runs: result.runs.map((r) => Math.round(r.eventsPerS)),
            events_per_s: Math.round(result.eventsPerS),
            cpu_us_per_event: roundCpu(result.median.cpuUsPerEvent),
            notes: 'file store; no fsync per message (default sync every 2 min)',
            extra: { server_version: js.serverVersion, payload_bytes: PAYLOAD_BYTES },
          });
          if (result.median.consumerErrors.length) problems.push(`jetstream ${mode}: ${result.median.consumerErrors.join('; ')}`);
        }
      } finally {
        await js.close();
      }
    }

    // --- end to end ---------------------------------------------------------------------------
    if (sections.has('e2e')) {
      for (const kind of stores) {
        const cases: E2eCase[] = [];
        for (const mode of ['in-process', 'http'] as AppendMode[]) for (const shape of SHAPES) cases.push({ store: kind, mode, ...shape });
        // The batch publish over the seam, in the shape of the seam's bar.
        cases.push({ store: kind, mode: 'http', batch: BATCH_ITEMS, subscriptions: 1, connections: 4, capacity: 32 });
        const wanted = cases.filter((c) => selected(e2eLabel(c)));
        if (wanted.length === 0) continue;
        const bench = await E2eBench.start(await database(kind), consumer, publisher, kind === 'mysql' ? mariadbPid : null);
        try {
          // Warm-up run (not recorded): JIT, connection pools, statement caches.
          await bench.runOnce(
            { store: kind, mode: 'in-process', subscriptions: 1, connections: 4, capacity: 32 },
            { warmupMs: 300, measureMs: 700, runs: 1 },
          );
          for (const c of wanted) {
            const label = e2eLabel(c);
            const result = await bench.runCase(c, E2E);
            e2e.push(result);
            const reference = c.capacity === 1 ? jetstream.single : jetstream.window;
            const ratio = reference ? result.eventsPerS / reference.eventsPerS : undefined;
            log(`e2e ${label}: ${fmt(result.eventsPerS)} events/s${ratio !== undefined ? ` (${ratio.toFixed(2)}× JetStream)` : ''}`);
            rows.push({
              section: 'end-to-end',
              case: label,
              value: result.eventsPerS,
              unit: 'events/s',
              runs: result.runs.map((r) => Math.round(r.eventsPerS)),
              events_per_s: Math.round(result.eventsPerS),
              ...(ratio !== undefined
                ? { ratio_vs_jetstream: Number(ratio.toFixed(3)), jetstream_reference: c.capacity === 1 ? '1-by-1' : `win${WINDOW}` }
                : {}),
              cpu_us_per_event: roundCpu(result.median.cpuUsPerEvent),
              notes: counterNote(result.median.countersPerEvent),
              ...(result.median.countersPerEvent ? { extra: { mysql_per_event: result.median.countersPerEvent } } : {}),
            });
            for (const r of result.runs)
              if (r.consumerErrors.length) problems.push(`${label}: consumer saw ${r.consumerErrors.join('; ')}`);
            if (result.serverErrors.length) problems.push(`${label}: server logged ${result.serverErrors.join('; ')}`);
          }
        } finally {
          await bench.close();
        }
      }
    }

    // --- latency ------------------------------------------------------------------------------
    const latencies: LatencyResult[] = [];
    const floods: FloodResult[] = [];
    let idle: IdleResult | undefined;
    if (sections.has('latency')) {
      for (const kind of stores) {
        if (!selected(`${kind} one node`)) continue;
        log(`latency ${kind} one node`);
        latencies.push(await oneNodeLatency(kind, LATENCY_SAMPLES.one));
      }
      if (stores.includes('mysql') && selected('mysql two nodes')) {
        log('latency mysql two nodes');
        latencies.push(await twoNodeLatency(LATENCY_SAMPLES.two));
      }
      for (const l of latencies) {
        const two = l.label.includes('two');
        for (const [stat, value] of [
          ['p50', l.p50],
          ['p99', l.p99],
          ['max', l.max],
        ] as const) {
          rows.push({
            section: 'latency',
            case: `${l.label} commit→deliver ${stat}`,
            value,
            unit: 'ms',
            notes:
              stat === 'p50'
                ? `${l.samples} samples${l.missing ? `, ${l.missing} MISSING` : ''}${two ? '; node B polls the head every 20 ms while its consumer waits' : ''}`
                : '',
          });
        }
        if (l.missing) problems.push(`${l.label}: ${l.missing} latency samples never arrived`);
        if (l.errors.length) problems.push(`${l.label}: ${l.errors.join('; ')}`);
      }
      if (stores.includes('mysql') && selected('mysql idle node')) {
        log('latency mysql idle node statements');
        idle = await idleStatements(IDLE_WINDOW_MS);
        rows.push({
          section: 'latency',
          case: 'mysql idle node (no sessions): statements it sends',
          value: idle.statementsPerS,
          unit: 'stmt/s',
          notes: `${Object.entries(idle.byKind)
            .map(([kind, n]) => `${n} ${kind}`)
            .join(', ')} in ${IDLE_WINDOW_MS / 1000} s (counted at the wire)`,
          extra: { ...idle },
        });
      }
      for (const kind of stores) {
        if (!selected(`${kind} flood`)) continue;
        log(`latency ${kind} flood`);
        // Like every figure, the median of its runs: one run's p99 of about 50 pings is its
        // slowest ping, so one pause of the event loop decides a single run.
        const runs: FloodResult[] = [];
        for (let r = 0; r < FLOOD_RUNS; r++) runs.push(await floodFairness(kind, FLOOD_PINGS, 50));
        const ratio = (x: FloodResult) => x.floodedP99 / x.quietP99;
        const f = [...runs].sort((a, b) => ratio(a) - ratio(b))[runs.length >> 1]!;
        floods.push(f);
        rows.push({
          section: 'latency',
          case: `${f.label}: another connection's ping p99`,
          value: f.floodedP99,
          unit: 'ms',
          ratio: f.floodedP99 / f.quietP99,
          ratio_to: 'its p99 alone',
          notes: `median of ${runs.length} runs by ratio (${runs.map((x) => `${ratio(x).toFixed(1)}×`).join(', ')}); alone p99 ${f.quietP99.toFixed(1)} ms, flooded max ${f.floodedMax.toFixed(1)} ms, ${f.pings} pings during the flood`,
          runs: runs.map((x) => Number(ratio(x).toFixed(2))),
        });
      }
    }

    // --- management API ------------------------------------------------------------------------
    const management = new Map<StoreKind, { get: number; create: number }>();
    if (sections.has('management')) {
      for (const kind of stores) {
        if (!selected(`${kind} management`)) continue;
        log(`management ${kind}`);
        const results = await managementBench(await database(kind), publisher, kind === 'mysql' ? mariadbPid : null, MGMT);
        const bare = results.find((r) => r.route === 'bare')!;
        const rate = (route: string) => results.find((r) => r.route === route)!.rps;
        management.set(kind, { get: rate('get') / bare.rps, create: rate('create') / bare.rps });
        for (const r of results) {
          const label =
            r.route === 'bare'
              ? 'GET bare Hono route + bearer lookup'
              : r.route === 'get'
                ? 'GET /v1/subscriptions/{id}'
                : 'POST /v1/subscriptions';
          rows.push({
            section: 'management',
            case: `${kind} ${label} @${CONCURRENCY}`,
            value: r.rps,
            unit: 'req/s',
            runs: r.runs.map(Math.round),
            ...(r.route === 'bare' ? {} : { ratio: Number((r.rps / bare.rps).toFixed(3)), ratio_to: 'bare' }),
            cpu_us_per_event: roundCpu(r.cpuUsPerRequest),
            notes: `${r.failures ? `${r.failures} FAILED; ` : ''}${r.capped ? 'ran out of namespaces early; ' : ''}cpu per request`,
          });
          if (r.failures) problems.push(`management ${kind} ${r.route}: ${r.failures} failed requests`);
        }
      }
    }

    // --- memory -------------------------------------------------------------------------------
    let memoryMysql: number | undefined;
    if (sections.has('memory') && stores.includes('mysql') && selected('mysql memory')) {
      log(`memory mysql (orbit serve process × ${MEMORY_REPEATS})`);
      const repeats = [];
      for (let i = 0; i < MEMORY_REPEATS; i++) repeats.push(await memoryBench('mysql', IDLE_SESSIONS, MEMORY_SETTLE));
      const m = repeats[0]!;
      memoryMysql = median(repeats.map((r) => r.perSessionKiB));
      rows.push({
        section: 'memory',
        case: 'mysql orbit serve RSS, 0 sessions',
        value: median(repeats.map((r) => r.rss0KiB)) / 1024,
        unit: 'MiB',
      });
      rows.push({
        section: 'memory',
        case: `mysql orbit serve RSS, ${m.sessions} idle sessions`,
        value: median(repeats.map((r) => r.rssNKiB)) / 1024,
        unit: 'MiB',
      });
      rows.push({
        section: 'memory',
        case: 'mysql RSS per idle session',
        value: memoryMysql,
        unit: 'KiB',
        runs: repeats.map((r) => Number(r.perSessionKiB.toFixed(1))),
        notes: `V8 live heap ${median(repeats.map((r) => r.heapUsedPerSessionKiB)).toFixed(1)} KiB/session${MEMORY_REPEATS > 1 ? `; median of ${MEMORY_REPEATS} processes` : ''}`,
        extra: { repeats },
      });
    }

    // --- growth -------------------------------------------------------------------------------
    // MySQL always; SQLite only with --sqlite-growth (it fits, but would push a full run close to
    // the 10-minute budget on a 2-core machine).
    let growthRatio: number | undefined;
    const growthStores = stores.filter((k) => k === 'mysql' || options['sqlite-growth']);
    for (const kind of sections.has('growth') ? growthStores : []) {
      if (!selected(`${kind} growth`)) continue;
      log(`growth ${kind}: empty log, then ${GROWTH_RESULTS.toLocaleString('en-US')} results + 100 subscriptions`);
      const g = await growthBench({
        emptyDb: await database(kind),
        grownDb: await database(kind),
        consumer,
        publisher,
        dbPid: kind === 'mysql' ? mariadbPid : null,
        timing: E2E,
        results: GROWTH_RESULTS,
        history: GROWTH_HISTORY,
        onProgress: log,
      });
      if (kind === 'mysql') growthRatio = g.ratio;
      const label = `${kind} in-process 1 sub × 4 conn × cap 32`;
      rows.push({
        section: 'growth',
        case: `${label}, empty log`,
        value: g.empty.eventsPerS,
        unit: 'events/s',
        runs: g.empty.runs.map((r) => Math.round(r.eventsPerS)),
        events_per_s: Math.round(g.empty.eventsPerS),
        cpu_us_per_event: roundCpu(g.empty.median.cpuUsPerEvent),
        notes: counterNote(g.empty.median.countersPerEvent),
      });
      rows.push({
        section: 'growth',
        case: `${label}, ${GROWTH_RESULTS >= 1_000_000 ? `${GROWTH_RESULTS / 1_000_000}M` : `${GROWTH_RESULTS / 1000}k`} results + 100 subs`,
        value: g.grown.eventsPerS,
        unit: 'events/s',
        runs: g.grown.runs.map((r) => Math.round(r.eventsPerS)),
        events_per_s: Math.round(g.grown.eventsPerS),
        ratio: Number(g.ratio.toFixed(3)),
        ratio_to: 'empty',
        cpu_us_per_event: roundCpu(g.grown.median.cpuUsPerEvent),
        notes: `${kind === 'mysql' ? `${counterNote(g.grown.median.countersPerEvent)}; ` : ''}prefill ${g.prefillSeconds.toFixed(0)} s`,
        extra: {
          prefill_seconds: g.prefillSeconds,
          mysql_per_event: g.grown.median.countersPerEvent,
          empty_mysql_per_event: g.empty.median.countersPerEvent,
        },
      });
      if (g.withHistory) {
        const h = g.withHistory;
        rows.push({
          section: 'growth',
          case: `${label}, + subscription with ${GROWTH_HISTORY / 1000}k ACKED deliveries`,
          value: h.eventsPerS,
          unit: 'events/s',
          runs: h.runs.map((r) => Math.round(r.eventsPerS)),
          events_per_s: Math.round(h.eventsPerS),
          ratio: Number((h.eventsPerS / g.empty.eventsPerS).toFixed(3)),
          ratio_to: 'empty',
          cpu_us_per_event: roundCpu(h.median.cpuUsPerEvent),
          notes: ['not a bar: a long-lived subscription', counterNote(h.median.countersPerEvent)].filter(Boolean).join('; '),
          ...(h.median.countersPerEvent ? { extra: { mysql_per_event: h.median.countersPerEvent } } : {}),
        });
      }
      for (const r of [g.empty, g.grown, ...(g.withHistory ? [g.withHistory] : [])])
        if (r.serverErrors.length) problems.push(`growth ${kind}: server logged ${r.serverErrors.join('; ')}`);
    }

    // --- Galera against one MariaDB ---------------------------------------------------------------
    if (sections.has('galera') && stores.includes('mysql')) {
      const { results, problems: galeraProblems } = await galeraBench({
        mariadbRoot: MYSQL_ROOT,
        mariadbPid,
        consumer,
        publisher,
        timing: E2E,
        selected: (layout) => selected(`${layout} ${GALERA_CASE_LABEL}`),
        log,
      });
      problems.push(...galeraProblems);
      const single = results.find((r) => r.layout === 'one MariaDB');
      for (const r of results) {
        const counters = r.median.countersPerEvent;
        const ratio = single && r !== single ? r.eventsPerS / single.eventsPerS : undefined;
        rows.push({
          section: 'galera',
          case: `${r.layout}: ${GALERA_CASE_LABEL}`,
          value: r.eventsPerS,
          unit: 'events/s',
          runs: r.runs.map((x) => Math.round(x.eventsPerS)),
          events_per_s: Math.round(r.eventsPerS),
          ...(ratio !== undefined ? { ratio: Number(ratio.toFixed(3)), ratio_to: 'one MariaDB' } : {}),
          cpu_us_per_event: roundCpu(r.median.cpuUsPerEvent),
          notes:
            r.conflictsPerEvent === null
              ? counterNote(counters)
              : `${r.conflictsPerEvent.toFixed(3)} certification failures + BF aborts /ev (${counters?.cert_failures} + ${counters?.bf_aborts}); ${counters?.commits} commits /ev`,
          ...(counters ? { extra: { counters_per_event: counters } } : {}),
        });
        if (r.serverErrors.length) problems.push(`galera ${r.layout}: orbit serve logged ${r.serverErrors.join('; ')}`);
        for (const x of r.runs)
          if (x.consumerErrors.length) problems.push(`galera ${r.layout}: consumer saw ${x.consumerErrors.join('; ')}`);
      }
    }

    // --- bars ---------------------------------------------------------------------------------
    const find = (label: string) => e2e.find((r) => e2eLabel(r.c) === label);
    const m4 = find('mysql in-process 1 sub × 4 conn × cap 32');
    const m16 = find('mysql in-process 1 sub × 16 conn × cap 32');
    if (m4 && m16)
      bars.push({
        name: '16 competing conns on 1 sub vs 4 conns (mysql, cap 32)',
        target: '≥ 1.00×',
        actual: `${(m16.eventsPerS / m4.eventsPerS).toFixed(2)}×`,
        pass: m16.eventsPerS >= m4.eventsPerS,
      });
    for (const kind of stores) {
      const l = latencies.find((x) => x.label === `${kind} one node`);
      if (l)
        bars.push({
          name: `publish→deliver p99, one node (${kind})`,
          target: '< 25 ms',
          actual: `${l.p99.toFixed(1)} ms`,
          pass: l.p99 < 25 && l.missing === 0,
        });
    }
    for (const f of floods)
      bars.push({
        name: `read queue: a flood does not starve another connection (${f.label})`,
        target: '≤ 10× its p99 alone',
        actual: `${(f.floodedP99 / f.quietP99).toFixed(1)}×`,
        pass: f.floodedP99 <= 10 * f.quietP99,
      });
    if (growthRatio !== undefined)
      bars.push({
        name: `growth: ${GROWTH_RESULTS.toLocaleString('en-US')} results + 100 subs vs empty (mysql)`,
        target: '≥ 0.80×',
        actual: `${growthRatio.toFixed(2)}×`,
        pass: growthRatio >= 0.8,
      });
    performanceBars({ e2e: find, jetstream, latencies, idle, management });
    // A negative figure means RSS noise exceeded the sessions' memory: no verdict.
    if (memoryMysql !== undefined)
      bars.push({
        name: 'idle session RSS (mysql, orbit serve)',
        target: '≤ 32 KiB',
        actual: `${memoryMysql.toFixed(1)} KiB`,
        pass: memoryMysql < 0 ? null : memoryMysql <= 32,
      });

    // --- output -------------------------------------------------------------------------------
    const table = renderTable(rows, bars);
    console.log(table);
    console.log(
      `\ncpu µs/ev: CPU time per event (or request) by process: s = this process (server, and the in-process appender), d = mariadbd, c = consumer worker, p = publisher/load worker, n = nats-server.\n` +
        `Ratios: capacity-32 rows vs JetStream ${WINDOW} outstanding; capacity-1 rows vs JetStream one at a time. JetStream does not fsync each message by default; Orbit's commits are durable.`,
    );
    if (problems.length) console.log(`\nproblems:\n- ${problems.join('\n- ')}`);
    const duration = (now() - started) / 1000;
    console.log(
      `\n${quick ? 'quick' : 'full'} run of ${revision} in ${duration.toFixed(0)} s; load average before ${loadBefore.join(' ')}, after ${os
        .loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}; results in ${output}`,
    );
    mkdirSync(new URL('../bench/', import.meta.url), { recursive: true });
    writeFileSync(
      output,
      `${JSON.stringify(
        {
          generated_at: new Date().toISOString(),
          mode: quick ? 'quick' : 'full',
          revision,
          duration_s: Number(duration.toFixed(1)),
          machine: { ...machine, loadavg_before: loadBefore, loadavg_after: os.loadavg().map((l) => Number(l.toFixed(2))) },
          method: {
            e2e: {
              ...E2E,
              statistic: E2E.runs > 1 ? `median of ${E2E.runs} runs` : 'single run',
              payload_bytes: PAYLOAD_BYTES,
              consumers:
                'raw ws clients in a child process; server and in-process appender in the bench process; HTTP publisher in a second child process (16 in flight)',
            },
            jetstream: {
              windowed: WINDOW,
              ack: 'ackAck (AckSync)',
              storage: 'file',
              publisher: 'bench process, 32 publishes in flight',
              consumer: 'same child process as the Orbit consumers',
            },
            management: { ...MGMT, concurrency: CONCURRENCY, load: 'closed loop, keep-alive, in a child process' },
            latency: LATENCY_SAMPLES,
            growth: { results: GROWTH_RESULTS, subscriptions: 100, long_lived_subscription_acked: GROWTH_HISTORY },
            memory: { sessions: IDLE_SESSIONS, settle: MEMORY_SETTLE },
          },
          rows,
          bars,
          problems,
        },
        null,
        2,
      )}\n`,
    );
  } finally {
    await consumer.stop();
    await publisher.stop();
    for (const db of databases) await db.drop().catch((error: unknown) => log(`could not drop ${db.name}: ${String(error)}`));
  }
}

/** Sum of the named CPU figures (µs per event); undefined when one is missing. */
function cpuSum(cpu: Record<string, number> | undefined, keys: readonly string[]): number | undefined {
  if (!cpu) return undefined;
  let sum = 0;
  for (const key of keys) {
    const value = cpu[key];
    if (value === undefined || !Number.isFinite(value)) return undefined;
    sum += value;
  }
  return sum;
}

/**
 * The performance bars of the delivery engine (docs/benchmarks.md, "The bars"): throughput against JetStream in the same
 * run, CPU per event (total and mariadbd's), the seam's server CPU, cross-node latency and the
 * idle load it costs. The management rows stay measured but are not bars. A bar whose rows the run
 * did not measure is left out.
 */
function performanceBars(r: {
  e2e: (label: string) => E2eResult | undefined;
  jetstream: Partial<Record<'window' | 'single', JsResult>>;
  latencies: readonly LatencyResult[];
  idle: IdleResult | undefined;
  management: ReadonlyMap<StoreKind, { get: number; create: number }>;
}): void {
  const ratioBar = (name: string, label: string, reference: JsResult | undefined, target: number) => {
    const row = r.e2e(label);
    if (!row || !reference) return;
    const ratio = row.eventsPerS / reference.eventsPerS;
    bars.push({ name, target: `≥ ${target.toFixed(2)}×`, actual: `${ratio.toFixed(2)}×`, pass: ratio >= target });
  };
  const { window: jsw, single: js1 } = r.jetstream;
  const inProcess = 'mysql in-process 1 sub × 4 conn × cap 32';
  ratioBar('e2e mysql in-process 1 × 4 × 32 vs JetStream windowed', inProcess, jsw, 0.6);
  const orbitCpu = cpuSum(r.e2e(inProcess)?.median.cpuUsPerEvent, ['server', 'db', 'consumer']);
  const jsCpu = cpuSum(jsw?.median.cpuUsPerEvent, ['consumer', 'nats', 'publisher+bench']);
  if (orbitCpu !== undefined && jsCpu !== undefined)
    bars.push({
      name: 'total CPU per event, mysql in-process 1 × 4 × 32 (s+d+c) vs JetStream (c+n+p)',
      target: '≤ 2.00×',
      actual: `${(orbitCpu / jsCpu).toFixed(2)}× (${orbitCpu.toFixed(0)} vs ${jsCpu.toFixed(0)} µs)`,
      pass: orbitCpu / jsCpu <= 2,
    });
  const cpuBar = (name: string, value: number | undefined, limit: number) => {
    if (value !== undefined && Number.isFinite(value))
      bars.push({ name, target: `≤ ${limit} µs`, actual: `${value.toFixed(0)} µs`, pass: value <= limit });
  };
  cpuBar('mariadbd CPU per event, mysql in-process 1 × 4 × 32', r.e2e(inProcess)?.median.cpuUsPerEvent.db, 200);
  ratioBar(
    `e2e mysql HTTP seam, batch ${BATCH_ITEMS}, 1 × 4 × 32 vs JetStream windowed`,
    `mysql http batch ${BATCH_ITEMS} 1 sub × 4 conn × cap 32`,
    jsw,
    0.45,
  );
  ratioBar('e2e mysql HTTP seam 1 × 4 × 32 vs JetStream windowed', 'mysql http 1 sub × 4 conn × cap 32', jsw, 0.3);
  cpuBar(
    'server CPU per published event, mysql HTTP seam 1 × 4 × 32',
    r.e2e('mysql http 1 sub × 4 conn × cap 32')?.median.cpuUsPerEvent.server,
    250,
  );
  ratioBar('e2e sqlite in-process 1 × 4 × 32 vs JetStream windowed', 'sqlite in-process 1 sub × 4 conn × cap 32', jsw, 0.5);
  ratioBar(
    `e2e sqlite HTTP seam, batch ${BATCH_ITEMS}, 1 × 4 × 32 vs JetStream windowed`,
    `sqlite http batch ${BATCH_ITEMS} 1 sub × 4 conn × cap 32`,
    jsw,
    0.35,
  );
  ratioBar('e2e mysql in-process 1 × 1 × 1 vs JetStream one at a time', 'mysql in-process 1 sub × 1 conn × cap 1', js1, 0.3);
  const two = r.latencies.find((l) => l.label === 'mysql two nodes');
  if (two)
    bars.push({
      name: 'publish→deliver p99, two nodes (mysql)',
      target: '≤ 50 ms',
      actual: `${two.p99.toFixed(1)} ms`,
      pass: two.p99 <= 50 && two.missing === 0,
    });
  // Reported beside the two-node bar: what the faster cross-node wake-up costs a node at rest.
  if (r.idle)
    bars.push({
      name: 'idle statements/s, one mysql node with no sessions',
      target: 'measured',
      actual: `${r.idle.statementsPerS.toFixed(1)}/s`,
      pass: null,
    });
  // Management calls are rare: measured beside a bare route, no longer bars.
  for (const [kind, m] of r.management) {
    bars.push({
      name: `GET /v1/subscriptions/{id} vs bare route (${kind})`,
      target: 'measured',
      actual: `${m.get.toFixed(2)}×`,
      pass: null,
    });
    bars.push({
      name: `POST /v1/subscriptions vs bare route (${kind})`,
      target: 'measured',
      actual: `${m.create.toFixed(2)}×`,
      pass: null,
    });
  }
}

const watchdog = setTimeout(() => {
  console.error('bench: hard time limit (15 minutes) reached; exiting');
  process.exit(3);
}, 15 * 60_000);
watchdog.unref();

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(`bench failed: ${String((error as Error)?.stack ?? error)}`);
    process.exit(1);
  },
);

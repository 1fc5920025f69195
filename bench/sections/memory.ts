/**
 * @module
 * Memory: RSS of a real `orbit serve` process with 0 and with 1,024 idle sessions (connected,
 * `events.hello` answered, nothing to deliver; the node's connection limit is raised to that for
 * the process). The server is started through `bench/serve-gc.mjs` (the same CLI with
 * `--expose-gc`), and each sample is taken after a full garbage collection (SIGUSR2), so the figure
 * is live memory rather than garbage not yet collected. Each state is read after the same settling
 * time (see `settledSample`), as the median of four samples. Four sessions are opened and closed
 * first, so code loaded on first use is in the baseline rather than in the per-session figure.
 *
 * Why 1,024: RSS moves by a few megabytes between samples whatever the sessions do (V8 returning
 * pages, compiled code, allocator arenas), which over 128 sessions was ±25 to 50 KiB per session;
 * over 1,024 it is about ±2.5 KiB (docs/benchmarks.md, Memory).
 */
import { Store } from '../../server/src/internal.ts';
import { processRssKiB } from '../lib/machine.ts';
import { bootstrap, createSubscription, freshDatabase, spawnOrbit, type OrbitProcess, type StoreKind } from '../lib/orbit.ts';
import { median, sleep, waitFor } from '../lib/util.ts';
import { WsConsumer } from '../lib/ws-consumer.ts';

export const IDLE_SESSIONS = 1024;

/** Sessions opened at once, so that 1,024 take seconds, not a minute. */
const OPEN_AT_ONCE = 16;

export interface MemoryResult {
  readonly store: StoreKind;
  readonly rss0KiB: number;
  readonly rssNKiB: number;
  readonly sessions: number;
  readonly perSessionKiB: number;
  /** Per session: V8 live heap, V8 committed heap, and memory outside the V8 heap (external). */
  readonly heapUsedPerSessionKiB: number;
  readonly heapTotalPerSessionKiB: number;
  readonly externalPerSessionKiB: number;
}

interface Sample {
  readonly rssKiB: number;
  readonly heapUsedKiB: number;
  readonly heapTotalKiB: number;
  readonly externalKiB: number;
}

async function sampleAfterGc(server: OrbitProcess): Promise<Sample> {
  const seen = server.output.join('').split('bench_memory').length;
  server.child.kill('SIGUSR2');
  await waitFor(() => server.output.join('').split('bench_memory').length > seen, 5000, 'the memory report after SIGUSR2');
  const text = server.output.join('');
  const last = text.slice(text.lastIndexOf('{"bench_memory"'));
  const report = JSON.parse(last.slice(0, last.indexOf('\n'))) as { bench_memory: NodeJS.MemoryUsage };
  const m = report.bench_memory;
  return {
    rssKiB: processRssKiB(server.pid),
    heapUsedKiB: m.heapUsed / 1024,
    heapTotalKiB: m.heapTotal / 1024,
    externalKiB: m.external / 1024,
  };
}

/**
 * Samples once a second (each after a full GC) for `settleMs`, then returns the median of the next
 * `samples` samples. V8's memory reducer shrinks the heap about 8 s after a burst of allocation
 * (process start, 128 upgrades), so both states are read at the same age, after that shrink.
 */
async function settledSample(server: OrbitProcess, settleMs: number, samples: number): Promise<Sample> {
  const start = Date.now();
  while (Date.now() - start < settleMs) {
    await sleep(1000);
    await sampleAfterGc(server);
  }
  const taken: Sample[] = [];
  for (let i = 0; i < samples; i++) {
    await sleep(1000);
    taken.push(await sampleAfterGc(server));
  }
  const pick = (key: keyof Sample) => median(taken.map((s) => s[key]));
  return { rssKiB: pick('rssKiB'), heapUsedKiB: pick('heapUsedKiB'), heapTotalKiB: pick('heapTotalKiB'), externalKiB: pick('externalKiB') };
}

export async function memoryBench(
  kind: StoreKind,
  sessions = IDLE_SESSIONS,
  settle = { settleMs: 10_000, samples: 4 },
): Promise<MemoryResult> {
  const db = await freshDatabase(kind);
  const setup = await Store.open(db.url);
  const cred = await bootstrap(setup, 'memory', ['q']);
  const sub = await createSubscription(setup, cred.token, { name: 'idle', queue_id: cred.queue_ids.q! });
  await setup.close();
  const env: Record<string, string> = sessions > 128 ? { ORBIT_MAX_CONNECTIONS: String(sessions) } : {};
  const server = await spawnOrbit(db.url, env, { gcLauncher: true });
  const sockets: WsConsumer[] = [];
  try {
    // Warm-up: load the code paths of a session and of HTTP before the baseline.
    for (let i = 0; i < 4; i++) sockets.push(await WsConsumer.open(server.url, cred.token, sub, 1));
    await fetch(`${server.url}/healthz`).then((r) => r.text());
    await Promise.all(sockets.splice(0).map((s) => s.close()));
    const before = await settledSample(server, settle.settleMs, settle.samples);
    while (sockets.length < sessions) {
      const batch = Math.min(OPEN_AT_ONCE, sessions - sockets.length);
      sockets.push(...(await Promise.all(Array.from({ length: batch }, () => WsConsumer.open(server.url, cred.token, sub, 1)))));
    }
    const after = await settledSample(server, settle.settleMs, settle.samples);
    return {
      store: kind,
      rss0KiB: before.rssKiB,
      rssNKiB: after.rssKiB,
      sessions,
      perSessionKiB: (after.rssKiB - before.rssKiB) / sessions,
      heapUsedPerSessionKiB: (after.heapUsedKiB - before.heapUsedKiB) / sessions,
      heapTotalPerSessionKiB: (after.heapTotalKiB - before.heapTotalKiB) / sessions,
      externalPerSessionKiB: (after.externalKiB - before.externalKiB) / sessions,
    };
  } finally {
    await Promise.all(sockets.map((s) => s.close()));
    await server.stop();
    await db.drop();
  }
}

/**
 * @module
 * One throughput measurement: a producer keeps results flowing (never more than `lead` units
 * ahead of the confirmed ACKs), the consumer worker counts confirmed ACKs, and the rate is the
 * count inside a fixed window after a warm-up. CPU time of every process involved is read at the
 * window's edges, so a row can say where its time went (µs of CPU per event).
 */
import { processCpuMs, selfCpuMs } from './machine.ts';
import { sleep } from './util.ts';
import type { WorkerClient } from './worker-client.ts';

export interface Producer {
  start(): void | Promise<void>;
  /** Stops producing; resolves when the producer's loop has ended. */
  stop(): Promise<void>;
}

export interface Timing {
  readonly warmupMs: number;
  readonly measureMs: number;
  readonly runs: number;
}

export interface RateSample {
  readonly eventsPerS: number;
  readonly events: number;
  readonly windowMs: number;
  /** CPU µs per event in the window, by process. */
  readonly cpuUsPerEvent: Record<string, number>;
  readonly consumerErrors: string[];
  /** Database counters per event in the window (MySQL: statements, commits, fsyncs). */
  readonly countersPerEvent?: Record<string, number>;
}

export async function measureRate(args: {
  consumer: WorkerClient;
  producer: Producer;
  timing: Timing;
  /** Other processes whose CPU to attribute (name → pid); this process is `bench+server`. */
  pids: Record<string, number | null>;
  selfName?: string;
  /** Cumulative counters read at the window's edges (e.g. MySQL global status). */
  counters?: () => Promise<Record<string, number>>;
}): Promise<RateSample> {
  const { consumer, producer, timing } = args;
  const cpu = () => {
    const out: Record<string, number> = { [args.selfName ?? 'server']: selfCpuMs() };
    for (const [name, pid] of Object.entries(args.pids)) if (pid !== null) out[name] = processCpuMs(pid);
    return out;
  };
  await producer.start();
  try {
    await sleep(timing.warmupMs);
    const k0 = await args.counters?.();
    const cpu0 = cpu();
    const s0 = await consumer.request({ op: 'snapshot' });
    await sleep(timing.measureMs);
    const s1 = await consumer.request({ op: 'snapshot' });
    const cpu1 = cpu();
    const k1 = await args.counters?.();
    const events = Number(s1.count) - Number(s0.count);
    const windowMs = Number(s1.t) - Number(s0.t);
    const cpuUsPerEvent: Record<string, number> = { consumer: ((Number(s1.cpuMs) - Number(s0.cpuMs)) * 1000) / Math.max(events, 1) };
    for (const name of Object.keys(cpu1)) cpuUsPerEvent[name] = ((cpu1[name]! - cpu0[name]!) * 1000) / Math.max(events, 1);
    const countersPerEvent =
      k0 && k1
        ? Object.fromEntries(Object.keys(k1).map((k) => [k, Number(((k1[k]! - (k0[k] ?? 0)) / Math.max(events, 1)).toFixed(2))]))
        : undefined;
    return {
      eventsPerS: (events * 1000) / windowMs,
      events,
      windowMs,
      cpuUsPerEvent,
      consumerErrors: (s1.errorSamples as string[]) ?? [],
      ...(countersPerEvent ? { countersPerEvent } : {}),
    };
  } finally {
    await producer.stop();
  }
}

/** A producer loop that appends `batch` units at a time while fewer than `lead` are unconfirmed. */
export function leadLimitedProducer(args: {
  acked: () => number;
  lead: number;
  fanout: number;
  batch: number;
  maxMs: number;
  append: (n: number) => Promise<void>;
  onError: (error: unknown) => void;
}): Producer & { produced: () => number } {
  let running = false;
  let produced = 0;
  let loop: Promise<void> = Promise.resolve();
  return {
    produced: () => produced,
    start() {
      running = true;
      const deadline = performance.now() + args.maxMs;
      loop = (async () => {
        while (running && performance.now() < deadline) {
          const room = Math.floor((args.lead - (produced * args.fanout - args.acked())) / args.fanout);
          if (room < 1) {
            await sleep(1);
            continue;
          }
          const n = Math.min(args.batch, room);
          try {
            await args.append(n);
            produced += n;
          } catch (error) {
            args.onError(error);
            await sleep(50);
          }
        }
      })();
    },
    async stop() {
      running = false;
      await Promise.race([loop, sleep(15_000)]);
    },
  };
}

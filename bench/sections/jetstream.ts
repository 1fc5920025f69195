/**
 * @module
 * The peer: NATS JetStream on 127.0.0.1:4222 in the same run. A file-backed stream, a durable
 * pull consumer with explicit ACK, and `ackAck` (AckSync: the ACK counts only when the server
 * confirms it, like Orbit's `ack` reply). Two modes:
 * - `window`: `consume()` with 256 messages outstanding (`max_ack_pending` 256);
 * - `single`: one at a time (`next()`, then `ackAck`, `max_ack_pending` 1).
 * The publisher is this process (`js.publish`, awaiting each PubAck, 32 in flight, never more
 * than `lead` ahead of the confirmed ACKs); the consumer is the same child worker that runs
 * Orbit's consumers. Payload: the same ~600 application bytes as an Orbit result.
 *
 * Note: by default JetStream does not fsync each message (it syncs every 2 minutes); Orbit's
 * commits (MySQL with innodb_flush_log_at_trx_commit=1, SQLite synchronous=FULL) are durable.
 */
import { AckPolicy, connect, DeliverPolicy, StorageType, type NatsConnection } from 'nats';
import { measureRate, type RateSample, type Timing } from '../lib/measure.ts';
import { findPid } from '../lib/machine.ts';
import { JETSTREAM_BODY } from '../lib/payload.ts';
import { median, randomHex, sleep } from '../lib/util.ts';
import type { WorkerClient } from '../lib/worker-client.ts';

export const NATS_URL = process.env.ORBIT_BENCH_NATS_URL ?? '127.0.0.1:4222';
export const WINDOW = 256;

export type JsMode = 'window' | 'single';

export interface JsResult {
  readonly mode: JsMode;
  readonly runs: RateSample[];
  readonly eventsPerS: number;
  readonly median: RateSample;
}

export class JetStreamBench {
  private constructor(
    private readonly nc: NatsConnection,
    private readonly consumer: WorkerClient,
  ) {}

  static async start(consumer: WorkerClient): Promise<JetStreamBench> {
    const nc = await connect({ servers: NATS_URL, noEcho: true, timeout: 5000 });
    return new JetStreamBench(nc, consumer);
  }

  get serverVersion(): string {
    return this.nc.info?.version ?? 'unknown';
  }

  async close(): Promise<void> {
    await this.nc.close();
  }

  async runOnce(mode: JsMode, timing: Timing): Promise<RateSample> {
    const jsm = await this.nc.jetstreamManager();
    const js = this.nc.jetstream();
    const name = `ORBIT_BENCH_${randomHex(5).toUpperCase()}`;
    const subject = `orbit.bench.${name.toLowerCase()}`;
    await jsm.streams.add({ name, subjects: [subject], storage: StorageType.File });
    const durable = 'bench';
    await jsm.consumers.add(name, {
      durable_name: durable,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      max_ack_pending: mode === 'window' ? WINDOW : 1,
    });
    await this.consumer.request({ op: 'reset' });
    await this.consumer.request({ op: 'js-consumer', servers: NATS_URL, stream: name, durable, mode, window: WINDOW });
    const lead = Math.max(64, 4 * (mode === 'window' ? WINDOW : 1));
    let running = false;
    let published = 0;
    let loops: Promise<void>[] = [];
    const maxMs = timing.warmupMs + timing.measureMs + 10_000;
    try {
      return await measureRate({
        consumer: this.consumer,
        timing,
        pids: { nats: findPid('nats-server') },
        selfName: 'publisher+bench',
        producer: {
          start: () => {
            running = true;
            const deadline = performance.now() + maxMs;
            const loop = async () => {
              while (running && performance.now() < deadline) {
                if (published + 1 - this.consumer.progress > lead) {
                  await sleep(1);
                  continue;
                }
                published++;
                await js.publish(subject, JETSTREAM_BODY);
              }
            };
            loops = Array.from({ length: 32 }, loop);
          },
          stop: async () => {
            running = false;
            await Promise.race([Promise.all(loops), sleep(10_000)]);
          },
        },
      });
    } finally {
      await this.consumer.request({ op: 'close-js' }, 20_000);
      await jsm.streams.delete(name).catch(() => undefined);
    }
  }

  async runMode(mode: JsMode, timing: Timing): Promise<JsResult> {
    const runs: RateSample[] = [];
    for (let r = 0; r < timing.runs; r++) runs.push(await this.runOnce(mode, timing));
    const sorted = [...runs].sort((a, b) => a.eventsPerS - b.eventsPerS);
    return { mode, runs, eventsPerS: median(runs.map((s) => s.eventsPerS)), median: sorted[sorted.length >> 1]! };
  }
}

/**
 * @module
 * Latency from append commit to `event.deliver` received, under a light open-loop load (results
 * published at random intervals; the consumer holds capacity 32 and ACKs each delivery at once):
 *
 * - one node: the server in this process, appends through `store.appendResults` (the clock starts
 *   when the commit has returned), the consumer a raw `ws` client in this process (one clock);
 * - two nodes: two `orbit serve` processes on one MySQL database; results are published over HTTP
 *   to node A (the clock starts when A's 201 arrives: the commit happened before A answered) and
 *   consumed from node B, which learns of them by polling the committed head
 *   (`ORBIT_POLL_INTERVAL_MS`, default 20 ms, while one of its sessions could take a delivery).
 */
import http from 'node:http';
import { RawJson } from '@orbit/spec/codec';
import { Store } from '../../server/src/internal.ts';
import { bootstrap, createSubscription, freshDatabase, spawnOrbit, startInProcess, type StoreKind } from '../lib/orbit.ts';
import { DETAILS_TEXT, publishBody, RESULT_TEXT } from '../lib/payload.ts';
import { hexId, now, percentile, sleep, waitFor, withTimeout } from '../lib/util.ts';
import { WsConsumer } from '../lib/ws-consumer.ts';

export interface LatencyResult {
  readonly label: string;
  readonly samples: number;
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
  readonly missing: number;
  readonly errors: string[];
}

async function paced(args: {
  label: string;
  samples: number;
  gapMs: () => number;
  publish: (i: number) => Promise<string>;
  deliveredTimeoutMs: number;
  arrivals: Map<string, number>;
  errors: () => string[];
}): Promise<LatencyResult> {
  const started = new Map<string, number>();
  for (let i = 0; i < args.samples; i++) {
    const id = await args.publish(i);
    started.set(id, now());
    await sleep(args.gapMs());
  }
  try {
    await waitFor(
      () => [...started.keys()].every((id) => args.arrivals.has(id)),
      args.deliveredTimeoutMs,
      'every latency sample to be delivered',
    );
  } catch {
    // reported as missing
  }
  const latencies: number[] = [];
  for (const [id, t0] of started) {
    const t1 = args.arrivals.get(id);
    if (t1 !== undefined) latencies.push(t1 - t0);
  }
  return {
    label: args.label,
    samples: latencies.length,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    max: Math.max(...latencies),
    missing: started.size - latencies.length,
    errors: args.errors(),
  };
}

export async function oneNodeLatency(kind: StoreKind, samples: number): Promise<LatencyResult> {
  const db = await freshDatabase(kind);
  const { server } = await startInProcess(db);
  const store = server.orbit.store;
  let consumer: WsConsumer | null = null;
  try {
    const cred = await bootstrap(store, 'latency', ['q']);
    const queueId = cred.queue_ids.q!;
    const sub = await createSubscription(store, cred.token, { name: 'lat', queue_id: queueId, max_pending: 1000 });
    const arrivals = new Map<string, number>();
    consumer = await WsConsumer.open(server.url, cred.token, sub, 32, { onDeliver: (frame, t) => arrivals.set(frame.body.event.id, t) });
    const c = consumer;
    // Warm-up: a few results through the whole path first.
    for (let i = 0; i < 20; i++) {
      await store.appendResults([
        {
          queueId,
          type: 'task.succeeded',
          taskId: hexId(1, i),
          taskRevision: '1',
          details: new RawJson(DETAILS_TEXT),
          result: new RawJson(RESULT_TEXT),
        },
      ]);
      await sleep(5);
    }
    await waitFor(() => arrivals.size >= 20, 10_000, 'latency warm-up');
    arrivals.clear();
    return await paced({
      label: `${kind} one node`,
      samples,
      gapMs: () => 5 + Math.random() * 10,
      arrivals,
      deliveredTimeoutMs: 10_000,
      errors: () => c.errors,
      publish: async (i) => {
        const [row] = await store.appendResults([
          {
            queueId,
            type: 'task.succeeded',
            taskId: hexId(2, i),
            taskRevision: '1',
            details: new RawJson(DETAILS_TEXT),
            result: new RawJson(RESULT_TEXT),
          },
        ]);
        return String(row!.id);
      },
    });
  } finally {
    await consumer?.close();
    await server.close();
    await db.drop();
  }
}

function post(url: string, agent: http.Agent, token: string, key: string, body: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      {
        method: 'POST',
        agent,
        headers: {
          authorization: `Bearer ${token}`,
          'idempotency-key': key,
          'content-type': 'application/json',
          'content-length': String(Buffer.byteLength(body)),
        },
      },
      (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.setTimeout(10_000, () => req.destroy(new Error('publish timed out')));
    req.on('error', reject);
    req.end(body);
  });
}

export async function twoNodeLatency(samples: number): Promise<LatencyResult & { pollIntervalMs: number }> {
  const db = await freshDatabase('mysql');
  const setup = await Store.open(db.url);
  const cred = await bootstrap(setup, 'latency2', ['q']);
  const queueId = cred.queue_ids.q!;
  const sub = await createSubscription(setup, cred.token, { name: 'lat', queue_id: queueId, max_pending: 1000 });
  await setup.close();
  const a = await spawnOrbit(db.url);
  const b = await spawnOrbit(db.url);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
  let consumer: WsConsumer | null = null;
  try {
    const arrivals = new Map<string, number>();
    consumer = await WsConsumer.open(b.url, cred.token, sub, 32, { onDeliver: (frame, t) => arrivals.set(frame.body.event.id, t) });
    const c = consumer;
    const publish = async (i: number) => {
      const res = await post(`${a.url}/v1/queues/${queueId}/results`, agent, cred.token, `lat2-${i}`, publishBody(hexId(3, i)));
      if (res.status !== 201) throw new Error(`publish to node A: HTTP ${res.status} ${res.text}`);
      return String(JSON.parse(res.text).data.event.id);
    };
    for (let i = 0; i < 10; i++) await publish(1_000_000 + i);
    await waitFor(() => arrivals.size >= 10, 10_000, 'two-node warm-up');
    arrivals.clear();
    const result = await paced({
      label: 'mysql two nodes',
      samples,
      gapMs: () => 10 + Math.random() * 20,
      arrivals,
      deliveredTimeoutMs: 10_000,
      errors: () => c.errors,
      publish,
    });
    return { ...result, pollIntervalMs: 20 };
  } finally {
    await consumer?.close();
    agent.destroy();
    await a.stop();
    await b.stop();
    await db.drop();
  }
}

export interface FloodResult {
  readonly label: string;
  /** The quiet connection's ping round trip, alone and while another connection floods. */
  readonly quietP99: number;
  readonly floodedP99: number;
  readonly floodedMax: number;
  readonly pings: number;
}

/** A masked client text frame (RFC 6455 §5.2), so that thousands go out in one TCP write. */
function maskedFrame(text: string): Buffer {
  const payload = Buffer.from(text, 'utf8');
  const mask = Buffer.from([1, 2, 3, 4]);
  const header =
    payload.length < 126
      ? Buffer.from([0x81, 0x80 | payload.length])
      : Buffer.from([0x81, 0xfe, payload.length >> 8, payload.length & 0xff]);
  const masked = Buffer.alloc(payload.length);
  for (let i = 0; i < payload.length; i++) masked[i] = payload[i]! ^ mask[i % 4]!;
  return Buffer.concat([header, mask, masked]);
}

/**
 * Read-queue fairness (spec/README.md "Read queue 4, write queue 8"): one connection writes
 * `floodPings` pings in one TCP write while another pings one at a time; the quiet connection's
 * round trips during the flood, against its round trips alone.
 */
export async function floodFairness(kind: StoreKind, floodPings: number, quietPings: number): Promise<FloodResult> {
  const db = await freshDatabase(kind);
  const { server } = await startInProcess(db);
  const store = server.orbit.store;
  const consumers: WsConsumer[] = [];
  try {
    const cred = await bootstrap(store, 'flood', ['q']);
    const sub = await createSubscription(store, cred.token, { name: 'flood', queue_id: cred.queue_ids.q! });
    const quiet = await WsConsumer.open(server.url, cred.token, sub, 1);
    const flooder = await WsConsumer.open(server.url, cred.token, sub, 1);
    consumers.push(quiet, flooder);
    const alone: number[] = [];
    for (let i = 0; i < quietPings; i++) alone.push(await quiet.ping());
    const burst = Buffer.concat(
      Array.from({ length: floodPings }, (_, i) =>
        maskedFrame(
          JSON.stringify({
            protocol_version: '1',
            type: 'events.ping',
            message_id: hexId(0xf1, i),
            session_id: flooder.sessionId,
            body: {},
          }),
        ),
      ),
    );
    const answered = flooder.repliesTo(Array.from({ length: floodPings }, (_, i) => hexId(0xf1, i)));
    flooder.writeRaw(burst);
    const flooded: number[] = [];
    let done = false;
    void answered.then(() => (done = true));
    while (!done && flooded.length < quietPings) flooded.push(await quiet.ping());
    await withTimeout(answered, 60_000, 'the flood to be answered');
    return {
      label: `${kind} ${floodPings.toLocaleString('en-US')} pings in one write`,
      quietP99: percentile(alone, 99),
      floodedP99: percentile(flooded, 99),
      floodedMax: Math.max(...flooded),
      pings: flooded.length,
    };
  } finally {
    for (const c of consumers) await c.close();
    await server.close();
    await db.drop();
  }
}

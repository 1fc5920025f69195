/**
 * @module
 * A benchmark worker: a child process (started by `bench/lib/worker-client.ts`) that runs, on its
 * own core, what must not share the server's event loop:
 *
 * - `orbit-consumers`: raw `ws` clients of `orbit.events.v1`; each ACKs every `event.deliver` at
 *   once and counts the ACK replies (an ACK is counted when the server confirms it);
 * - `js-consumer`: a NATS JetStream durable pull consumer with explicit ACK and `ackAck`
 *   (AckSync), windowed or one at a time;
 * - `http-publish`: `POST /v1/queues/{id}/results` at a fixed concurrency, to one node or to
 *   several in turn, held back while too many published results are not yet acknowledged (the
 *   parent relays the ACK count); with `batch: N`, `POST …/results:batch` of N results each;
 * - `http-load`: a closed-loop load generator for the management API.
 *
 * Messages: `{id, op, ...}` in, `{id, ...}` or `{id, error}` out; `{type: 'progress', count}` is
 * pushed every 25 ms. Every loop stops on `stop`/`exit` or its own deadline.
 */
import http from 'node:http';
import WebSocket from 'ws';
import { connect, type ConsumerMessages, type NatsConnection } from 'nats';
import { batchBody, publishBody } from './lib/payload.ts';
import { hexId, now, sleep } from './lib/util.ts';
import { CONNECT_PATH, SUBPROTOCOL } from '@orbit/spec/protocol';

type Message = Record<string, any>;

const role = process.argv[2] ?? 'worker';
const prefix = (process.pid * 7919) >>> 0;
let counter = 0;
const nextMessageId = () => hexId(prefix, ++counter);

/** What `snapshot` reports: confirmed units of work (ACKs, publishes, requests). */
let count = 0;
let errors = 0;
const errorSamples: string[] = [];
function recordError(text: string): void {
  errors++;
  if (errorSamples.length < 5) errorSamples.push(text.slice(0, 300));
}

const progress = setInterval(() => process.send?.({ type: 'progress', count }), 25);
progress.unref();

// --- orbit.events.v1 consumers --------------------------------------------------------------------

const sockets: WebSocket[] = [];

interface ConsumerGroup {
  readonly subscriptionId: string;
  readonly connections: number;
  readonly capacity: number;
}

function openConsumer(url: string, token: string, group: ConsumerGroup): Promise<void> {
  const ws = new WebSocket(`${url.replace(/^http/, 'ws')}${CONNECT_PATH}`, SUBPROTOCOL, {
    headers: { authorization: `Bearer ${token}` },
    perMessageDeflate: false,
  });
  sockets.push(ws);
  let sessionId = '';
  return new Promise((resolve, reject) => {
    const helloId = nextMessageId();
    const timer = setTimeout(() => reject(new Error('no events.welcome within 10 s')), 10_000);
    ws.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    ws.on('open', () => {
      ws.send(
        JSON.stringify({
          protocol_version: '1',
          type: 'events.hello',
          message_id: helloId,
          body: { subscription_id: group.subscriptionId, capacity: group.capacity },
        }),
      );
    });
    ws.on('message', (data) => {
      const frame = JSON.parse(data.toString());
      switch (frame.type) {
        case 'event.deliver': {
          const delivery = frame.body.delivery;
          ws.send(
            `{"protocol_version":"1","type":"event.ack","message_id":"${nextMessageId()}","session_id":"${sessionId}","body":{"delivery_id":"${delivery.id}","epoch":"${delivery.lease_epoch}","lease_secret":"${frame.body.lease_secret}"}}`,
          );
          return;
        }
        case 'ack':
          if (frame.body.deduplicated === false) count++;
          return;
        case 'events.welcome':
          sessionId = frame.session_id;
          clearTimeout(timer);
          resolve();
          return;
        case 'error':
          recordError(`${frame.error.code}: ${frame.error.message}`);
          return;
      }
    });
    ws.on('close', (code, reason) => {
      if (code !== 1000 && code !== 1005) recordError(`closed ${code} ${reason.toString()}`);
    });
  });
}

async function closeConsumers(): Promise<void> {
  const closing = sockets.splice(0).map(
    (ws) =>
      new Promise<void>((resolve) => {
        if (ws.readyState === WebSocket.CLOSED) return resolve();
        const timer = setTimeout(() => {
          ws.terminate();
          resolve();
        }, 3000);
        ws.once('close', () => {
          clearTimeout(timer);
          resolve();
        });
        ws.close(1000);
      }),
  );
  await Promise.all(closing);
}

// --- NATS JetStream consumer ----------------------------------------------------------------------

let nats: NatsConnection | null = null;
let jsMessages: ConsumerMessages | null = null;
let jsRunning = false;
let jsLoop: Promise<void> = Promise.resolve();

async function startJetStream(m: Message): Promise<void> {
  nats = await connect({ servers: m.servers, noEcho: true });
  const consumer = await nats.jetstream().consumers.get(m.stream, m.durable);
  jsRunning = true;
  if (m.mode === 'window') {
    const messages = await consumer.consume({ max_messages: m.window });
    jsMessages = messages;
    jsLoop = (async () => {
      for await (const msg of messages) {
        msg.ackAck({ timeout: 5000 }).then(
          (ok) => (ok ? count++ : recordError('ackAck returned false')),
          (error: unknown) => jsRunning && recordError(`ackAck failed: ${String(error)}`),
        );
      }
    })();
  } else {
    jsLoop = (async () => {
      while (jsRunning) {
        const msg = await consumer.next({ expires: 1000 });
        if (!msg) continue;
        if (await msg.ackAck({ timeout: 5000 })) count++;
        else recordError('ackAck returned false');
      }
    })();
  }
}

async function stopJetStream(): Promise<void> {
  jsRunning = false;
  jsMessages?.stop();
  jsMessages = null;
  await Promise.race([jsLoop.catch(() => undefined), sleep(3000)]);
  if (nats) await nats.close();
  nats = null;
}

// --- HTTP --------------------------------------------------------------------------------------

let agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

function request(url: string, method: string, headers: Record<string, string>, body?: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      {
        method,
        agent,
        headers:
          body === undefined
            ? headers
            : { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) },
      },
      (res) => {
        res.on('data', () => {});
        res.on('end', () => resolve(res.statusCode ?? 0));
        res.on('error', reject);
      },
    );
    req.setTimeout(10_000, () => req.destroy(new Error('request timed out')));
    req.on('error', reject);
    req.end(body);
  });
}

let publishing = false;
let published = 0;
let acked = 0;
let publishLoops: Promise<void>[] = [];

/** Publishes while `published * fanout - acked < lead`; `acked` is relayed by the parent. */
function startPublishing(m: Message): void {
  publishing = true;
  published = 0;
  acked = 0;
  agent = new http.Agent({ keepAlive: true, maxSockets: m.concurrency });
  // One node, or several taken in turn (the Galera section publishes through every node).
  // A batch publishes `batch` results per request (its keys per item, no Idempotency-Key header).
  const batch = (m.batch as number | undefined) ?? 0;
  const path = batch > 0 ? 'results:batch' : 'results';
  const urls = ((m.urls as string[] | undefined) ?? [m.url as string]).map((base) => `${base}/v1/queues/${m.queueId}/${path}`);
  const headers = { authorization: `Bearer ${m.token}` };
  const deadline = now() + m.maxMs;
  const size = Math.max(1, batch);
  let started = 0;
  const loop = async () => {
    while (publishing && now() < deadline) {
      if ((started + size) * m.fanout - acked > m.lead) {
        await sleep(1);
        continue;
      }
      started += size;
      const n = started;
      try {
        const url = urls[(n / size) % urls.length]!;
        if (batch > 0) {
          const items = Array.from({ length: batch }, (_, i) => [`bench-${prefix}-${n - i}`, hexId(prefix, n - i)] as const);
          const status = await request(url, 'POST', headers, batchBody(items));
          if (status === 200) published += batch;
          else recordError(`batch publish: HTTP ${status}`);
          continue;
        }
        const status = await request(url, 'POST', { ...headers, 'idempotency-key': `bench-${prefix}-${n}` }, publishBody(hexId(prefix, n)));
        if (status === 201) published++;
        else recordError(`publish: HTTP ${status}`);
      } catch (error) {
        recordError(`publish: ${String(error)}`);
      }
    }
  };
  publishLoops = Array.from({ length: m.concurrency }, loop);
}

async function stopPublishing(): Promise<{ published: number }> {
  publishing = false;
  await Promise.race([Promise.all(publishLoops), sleep(10_000)]);
  agent.destroy();
  return { published };
}

/**
 * Closed-loop load: `concurrency` clients each send the next request as soon as the previous one
 * answered. Counts 2xx answers inside the measurement window (after the warm-up).
 */
async function httpLoad(m: Message): Promise<Message> {
  agent.destroy();
  agent = new http.Agent({ keepAlive: true, maxSockets: m.concurrency });
  const start = now();
  const windowStart = start + m.warmupMs;
  const windowEnd = windowStart + m.measureMs;
  let inWindow = 0;
  let ok = 0;
  let failures = 0;
  let issued = 0;
  let lastWindowDone = windowStart;
  const statuses: Record<string, number> = {};
  const tokens: string[] = m.tokens;
  const perToken: number = m.perToken ?? Infinity;
  const cap = m.kind === 'create' ? tokens.length * perToken : Infinity;
  const cpu0 = process.cpuUsage();
  const client = async () => {
    while (now() < windowEnd && issued < cap) {
      const n = issued++;
      let status: number;
      try {
        if (m.kind === 'create') {
          const token = tokens[n % tokens.length]!;
          const body = JSON.stringify({ name: `s-${prefix}-${n}`, queue_id: m.queueIds[n % tokens.length], max_pending: 100 });
          status = await request(
            `${m.url}/v1/subscriptions`,
            'POST',
            { authorization: `Bearer ${token}`, 'idempotency-key': `create-${prefix}-${n}` },
            body,
          );
        } else {
          status = await request(`${m.url}${m.path}`, 'GET', { authorization: `Bearer ${tokens[n % tokens.length]}` });
        }
      } catch (error) {
        status = 0;
        recordError(String(error));
      }
      statuses[status] = (statuses[status] ?? 0) + 1;
      const t = now();
      if (status < 200 || status >= 300) failures++;
      else ok++;
      if (status >= 200 && status < 300 && t >= windowStart && t < windowEnd) {
        inWindow++;
        lastWindowDone = t;
      }
    }
  };
  await Promise.all(Array.from({ length: m.concurrency }, client));
  const cpu = process.cpuUsage(cpu0);
  // A capped run (creates ran out of namespaces) ends early: measure up to its last answer.
  const windowMs = issued >= cap ? Math.max(1, lastWindowDone - windowStart) : m.measureMs;
  return { inWindow, ok, windowMs, failures, statuses, capped: issued >= cap, cpuMs: (cpu.user + cpu.system) / 1000 };
}

// --- dispatch -------------------------------------------------------------------------------------

async function handle(m: Message): Promise<Message> {
  switch (m.op) {
    case 'ping':
      return { role };
    case 'reset':
      count = 0;
      errors = 0;
      errorSamples.length = 0;
      return {};
    case 'orbit-consumers': {
      const opens: Promise<void>[] = [];
      for (const group of m.groups as ConsumerGroup[])
        for (let i = 0; i < group.connections; i++) opens.push(openConsumer(m.url, m.token, group));
      await Promise.all(opens);
      return { sockets: sockets.length };
    }
    case 'close-consumers':
      await closeConsumers();
      return {};
    case 'js-consumer':
      await startJetStream(m);
      return {};
    case 'close-js':
      await stopJetStream();
      return {};
    case 'snapshot': {
      const cpu = process.cpuUsage();
      return { count, errors, errorSamples, t: now(), cpuMs: (cpu.user + cpu.system) / 1000 };
    }
    case 'http-publish':
      startPublishing(m);
      return {};
    case 'stop-publish':
      return stopPublishing();
    case 'http-load':
      return httpLoad(m);
    case 'exit':
      setTimeout(() => process.exit(0), 10);
      return {};
    default:
      throw new Error(`unknown op ${String(m.op)}`);
  }
}

process.on('message', (m: Message) => {
  if (m.type === 'acked') {
    acked = Number(m.count);
    return;
  }
  handle(m).then(
    (reply) => process.send?.({ ...reply, id: m.id }),
    (error: unknown) => process.send?.({ id: m.id, error: String((error as Error)?.stack ?? error) }),
  );
});
process.on('disconnect', () => process.exit(0));

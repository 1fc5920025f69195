/**
 * The raw HTTP client against servers that answer before they have read the body. A server may
 * refuse a request from its head alone (a Content-Length over the limit) and close the connection;
 * the client must still read and judge that answer.
 */
import { createServer, type Server } from 'node:http';
import { connect, type Socket } from 'node:net';
import { Worker } from 'node:worker_threads';
import { afterEach, describe, expect, it } from 'vitest';
import { ALL_CASES } from '../src/cases/index.ts';
import { parseConfig } from '../src/config.ts';
import { EvidenceLog } from '../src/evidence.ts';
import { sendHttp } from '../src/http.ts';
import { runSuite } from '../src/runner.ts';

const ANSWER = '{"request_id":"0123456789abcdef0123456789abcdef","error":{"code":"INVALID_ARGUMENT","message":"the body is too large"}}';

/** Steps of the choreography, as indexes of the shared flags (0: not yet, 1: done). */
const STEP = { held: 0, prepared: 1, answerNow: 2, answered: 3 } as const;

/**
 * A server in a worker thread (its own event loop, so that it acts while this thread is held) that
 * answers 400 once it has the head, never reads the body, and resets the connection. It steps in
 * with the test's thread: while that thread is held, the server drains what the client's kernel
 * has queued (the client's socket becomes writable) and writes a byte to a helper connection; the
 * test's thread then wakes with both events in one batch, helper first, and holds again in the
 * helper's handler while the server answers and resets. Node then handles the client's socket with
 * only "writable" in hand: it writes the rest of the body into a reset connection before it reads
 * the answer that is already there, gets EPIPE or ECONNRESET, and destroys the socket unread. That
 * is the intermittent `write EPIPE` of `json.body-over-limit-rejected` against Orbit, made certain.
 */
const SERVER = `
const { workerData, parentPort } = require('node:worker_threads');
const net = require('node:net');
const flags = workerData.flags;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const done = (i) => { Atomics.store(flags, i, 1); Atomics.notify(flags, i); };
async function reached(i) {
  const deadline = Date.now() + 10000;
  while (Atomics.load(flags, i) === 0 && Date.now() < deadline) await Atomics.waitAsync(flags, i, 0, 100).value;
}
let helper;
const server = net.createServer((socket) => {
  socket.on('error', () => {});
  let head = '';
  const onHead = async (chunk) => {
    head += chunk.toString('latin1');
    if (!head.includes('\\r\\n\\r\\n')) return;
    socket.off('data', onHead);
    socket.pause();
    parentPort.postMessage('head');
    await reached(${STEP.held});
    helper.write('x');
    socket.on('data', () => {});
    socket.resume();
    await sleep(60);
    socket.pause();
    done(${STEP.prepared});
    await reached(${STEP.answerNow});
    const answer = workerData.answer;
    socket.write('HTTP/1.1 400 Bad Request\\r\\ncontent-type: application/json\\r\\ncontent-length: ' + answer.length + '\\r\\nconnection: close\\r\\n\\r\\n' + answer, () => {
      socket.resetAndDestroy();
      setTimeout(() => done(${STEP.answered}), 30);
    });
  };
  socket.on('data', onHead);
});
const helperServer = net.createServer((h) => { helper = h; });
server.listen(0, '127.0.0.1', () => helperServer.listen(0, '127.0.0.1', () =>
  parentPort.postMessage({ port: server.address().port, helperPort: helperServer.address().port })));
`;

let cleanup: Array<() => Promise<unknown> | unknown> = [];

afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

async function answerFirstServer(): Promise<{ url: string }> {
  const flags = new Int32Array(new SharedArrayBuffer(4 * Object.keys(STEP).length));
  const worker = new Worker(SERVER, { eval: true, workerData: { flags, answer: ANSWER } });
  cleanup.push(() => worker.terminate());
  const { port, helperPort } = await new Promise<{ port: number; helperPort: number }>((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  const helper: Socket = connect(helperPort, '127.0.0.1');
  cleanup.push(() => helper.destroy());
  const hold = (step: number) => {
    if (Atomics.wait(flags, step, 0, 5_000) === 'timed-out') throw new Error(`the server did not reach step ${step}`);
  };
  worker.on('message', (message) => {
    if (message !== 'head') return;
    // By now the client's kernel holds what it could take; the rest of a body waits in Node.
    setTimeout(() => {
      Atomics.store(flags, STEP.held, 1);
      Atomics.notify(flags, STEP.held);
      hold(STEP.prepared);
    }, 200);
  });
  helper.on('data', () => {
    Atomics.store(flags, STEP.answerNow, 1);
    Atomics.notify(flags, STEP.answerNow);
    hold(STEP.answered);
  });
  await new Promise<void>((resolve) => helper.once('connect', resolve));
  return { url: `http://127.0.0.1:${port}` };
}

/** More than the kernel's socket buffers take at once, so that some of it is still Node's to write. */
const LARGE = Buffer.alloc(16 * 1024 * 1024, 0x20);

describe('sendHttp', () => {
  it('reads and judges an answer sent before the body was read, however the rest of the body fails', async () => {
    const { url } = await answerFirstServer();
    const log = new EvidenceLog();
    const res = await sendHttp(url, { method: 'POST', target: '/v1/subscriptions', body: LARGE, answerBeforeBodyMs: 10_000 }, log);
    expect(res.status).toBe(400);
    expect(res.errorCode).toBe('INVALID_ARGUMENT');
    expect(log.items.map((e) => (e.kind === 'note' ? e.text : e.kind))).toEqual([
      `the server answered the head; the ${LARGE.byteLength}-byte body was not sent`,
      'http',
    ]);
  }, 20_000);

  it('sends the body after the wait to a server that reads it before it answers', async () => {
    const server: Server = createServer((req, res) => {
      let length = 0;
      req.on('data', (c: Buffer) => (length += c.byteLength));
      req.on('end', () => res.end(JSON.stringify({ length })));
    });
    cleanup.push(() => new Promise((resolve) => server.close(resolve)));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    const started = Date.now();
    const res = await sendHttp(url, { method: 'POST', target: '/', body: LARGE, answerBeforeBodyMs: 200 });
    expect(res.json).toEqual({ length: LARGE.byteLength });
    expect(Date.now() - started).toBeGreaterThanOrEqual(200);
  });

  it('json.body-over-limit-rejected judges the answer to its head', async () => {
    const { url } = await answerFirstServer();
    const config = parseConfig({ baseUrl: url, credentials: { full: 'f', publisher: 'p' }, queues: { primary: 'a'.repeat(32) } });
    const report = await runSuite({
      cases: ALL_CASES,
      env: { config, vars: {}, seed: 1, numRuns: 1, runTag: 'abc' },
      profile: 'seed',
      only: ['json.body-over-limit-rejected'],
      preflight: false,
    });
    const [result] = report.results;
    expect([result?.id, result?.outcome, result?.message ?? '']).toEqual(['json.body-over-limit-rejected', 'passed', '']);
    expect(result?.evidence).toContainEqual(expect.objectContaining({ kind: 'note', text: expect.stringMatching(/body was not sent$/) }));
  }, 20_000);
});

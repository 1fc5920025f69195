/**
 * Graceful shutdown (docs/operations.md, Shutdown) with real `orbit serve` processes: SIGTERM stops
 * accepting, lets in-flight requests finish (no request is committed without its answer), closes
 * event connections with 1001 and exits 0 within `ORBIT_SHUTDOWN_TIMEOUT_MS`; past that bound it
 * exits 1; a second signal exits at once. Either way no lease is lost: a delivery leased before the
 * signal is still LEASED after a restart, or recovered and delivered again. Both stores.
 */
import { connect, type Socket } from 'node:net';
import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { Store } from '../src/store/store.ts';
import {
  ALL_PERMISSIONS,
  api,
  deliveries,
  eventually,
  freshDatabase,
  publish,
  type ServerProcess,
  spawnServer,
  STORES,
  subscribe,
  TASK,
  type TestDatabase,
  TestSocket,
} from '@orbit/testing';

/** A WebSocket client that completes the upgrade and then never answers the close handshake. */
async function stuckClient(url: string, token: string): Promise<Socket> {
  const { hostname, port } = new URL(url);
  const socket = connect(Number(port), hostname);
  socket.on('error', () => {});
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  socket.write(
    [
      'GET /v1/events/connect HTTP/1.1',
      `Host: ${hostname}:${port}`,
      'Upgrade: websocket',
      'Connection: Upgrade',
      `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}`,
      'Sec-WebSocket-Version: 13',
      'Sec-WebSocket-Protocol: orbit.events.v1',
      `Authorization: Bearer ${token}`,
      '',
      '',
    ].join('\r\n'),
  );
  await new Promise<void>((resolve, reject) => {
    socket.once('data', (chunk: Buffer) => (chunk.toString().startsWith('HTTP/1.1 101') ? resolve() : reject(new Error(chunk.toString()))));
  });
  return socket;
}

describe.each(STORES)('graceful shutdown on %s', (kind) => {
  let database: TestDatabase | undefined;
  const processes: ServerProcess[] = [];
  const cleanup: Array<() => void> = [];

  afterEach(async () => {
    for (const c of cleanup.splice(0)) c();
    for (const p of processes.splice(0)) await p.stop('SIGKILL');
    await database?.drop();
    database = undefined;
  });

  async function setup(env: Record<string, string>) {
    database = await freshDatabase(kind);
    const store = await Store.open(database.url);
    const boot = await store.bootstrap({ namespace: 'ns', application: 'app', queues: ['q'], permissions: ALL_PERMISSIONS });
    await store.close();
    const node = await spawnServer(database.url, env);
    processes.push(node);
    return { node, token: boot.token, queue: boot.queue_ids.q! };
  }

  async function restart(env: Record<string, string> = {}): Promise<ServerProcess> {
    const node = await spawnServer(database!.url, env);
    processes.push(node);
    return node;
  }

  /** A consumer that holds one leased delivery. */
  async function holdOne(url: string, token: string, subscriptionId: string) {
    const socket = await TestSocket.open(url, token);
    cleanup.push(() => socket.close());
    await socket.hello(subscriptionId, 1);
    return { socket, delivery: (await socket.deliver()).body.delivery };
  }

  it('MUST close sessions with 1001, answer every in-flight request it committed, exit 0, and keep the lease', async () => {
    const { node, token, queue } = await setup({ ORBIT_LEASE_DURATION_MS: '1500', ORBIT_SWEEP_INTERVAL_MS: '100' });
    // The racing results below are task.failed: this subscription does not see them.
    const subscription = await subscribe(node.url, token, queue, { types: ['task.succeeded'] });
    await publish(node.url, token, queue, 1);
    const { socket, delivery } = await holdOne(node.url, token, subscription.id);

    // Publishers racing the signal, back to back until the server stops answering: every publish
    // is either answered 201 or never committed (in-flight requests finish before the exit).
    let answered = 0;
    const statuses: Array<number | 'refused'> = [];
    const publisher = async (lane: number) => {
      for (let i = 0; ; i++) {
        const status = await api(node.url, 'POST', `/v1/queues/${queue}/results`, {
          token,
          key: `race-${lane}-${i}`,
          body: { type: 'task.failed', task_id: TASK, task_revision: '1' },
        }).then(
          (r) => r.status,
          () => 'refused' as const,
        );
        statuses.push(status);
        if (status !== 201) return;
        answered++;
      }
    };
    const racing = Promise.all([0, 1, 2, 3].map(publisher));
    await eventually(async () => answered >= 8, 10_000, 'publishers running');
    const started = Date.now();
    const [code, closed] = await Promise.all([node.stop('SIGTERM'), socket.waitClosed(), racing]);
    expect(code, node.output.join('')).toBe(0);
    expect(closed.code).toBe(1001);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(node.output.join('')).toContain('"msg":"shutdown complete"');

    const again = await restart({ ORBIT_LEASE_DURATION_MS: '1500', ORBIT_SWEEP_INTERVAL_MS: '100' });
    const [row] = await (async () => {
      const store = await Store.open(database!.url);
      try {
        return await store.db.all("SELECT COUNT(*) AS n FROM results WHERE type = 'task.failed'");
      } finally {
        await store.close();
      }
    })();
    expect(Number(row!.n)).toBe(statuses.filter((s) => s === 201).length);
    expect(statuses.every((s) => s === 201 || s === 'refused' || s === 503)).toBe(true);

    // The lease survived the shutdown: still LEASED (epoch 1) or already recovered, never gone.
    const [kept] = (await deliveries(again.url, token, subscription.id)).filter((d) => d.id === delivery.id);
    expect(['LEASED', 'PENDING']).toContain(kept.state);
    expect(kept.lease_epoch).toBe('1');
    const consumer = await TestSocket.open(again.url, token);
    cleanup.push(() => consumer.close());
    await consumer.hello(subscription.id, 1);
    const redelivered = await consumer.deliver(10_000);
    expect(redelivered.body.delivery).toMatchObject({ id: delivery.id, lease_epoch: '2' });
    expect((await consumer.ack(redelivered)).type).toBe('ack');
  });

  it('MUST exit 1 once ORBIT_SHUTDOWN_TIMEOUT_MS has passed, and at once on a second signal; the lease is kept either way', async () => {
    const env = {
      ORBIT_SHUTDOWN_TIMEOUT_MS: '800',
      ORBIT_WRITE_TIMEOUT_MS: '60000',
      ORBIT_HELLO_TIMEOUT_MS: '60000',
      ORBIT_LEASE_DURATION_MS: '1500',
    };
    const { node, token, queue } = await setup(env);
    const subscription = await subscribe(node.url, token, queue);
    await publish(node.url, token, queue, 1);
    const { delivery } = await holdOne(node.url, token, subscription.id);
    const stuck = await stuckClient(node.url, token);
    cleanup.push(() => stuck.destroy());

    // The bound: a peer that never completes the close handshake cannot hold the process.
    let started = Date.now();
    expect(await node.stop('SIGTERM')).toBe(1);
    expect(Date.now() - started).toBeGreaterThanOrEqual(700);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(node.output.join('')).toContain('shutdown did not finish in time');

    // A second signal while the graceful close waits: out at once.
    const second = await restart({ ...env, ORBIT_SHUTDOWN_TIMEOUT_MS: '30000' });
    const stuckAgain = await stuckClient(second.url, token);
    cleanup.push(() => stuckAgain.destroy());
    second.child.kill('SIGTERM');
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(second.child.exitCode).toBeNull();
    started = Date.now();
    expect(await second.stop('SIGTERM')).toBe(1);
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(second.output.join('')).toContain('second signal: exiting at once');

    // Nothing was lost: the delivery leased before the first signal is delivered again.
    const third = await restart({ ORBIT_LEASE_DURATION_MS: '1500', ORBIT_SWEEP_INTERVAL_MS: '100' });
    const [kept] = (await deliveries(third.url, token, subscription.id)).filter((d) => d.id === delivery.id);
    expect(['LEASED', 'PENDING']).toContain(kept.state);
    const consumer = await TestSocket.open(third.url, token);
    cleanup.push(() => consumer.close());
    await consumer.hello(subscription.id, 1);
    const redelivered = await eventually(async () => consumer.deliver(10_000), 10_000, 'redelivery');
    expect(redelivered.body.delivery).toMatchObject({ id: delivery.id, lease_epoch: '2' });
  });
});

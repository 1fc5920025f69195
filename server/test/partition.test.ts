/**
 * A network partition with real network stacks (spec/README.md, "Sessions and nodes"): an `orbit
 * serve` node runs in a network namespace of its own, reaching MariaDB over one veth link (through
 * a TCP forwarder on the host side) and its clients over another. Cutting the database link (the
 * link goes down, so packets vanish and nothing answers or resets) leaves the node alive and its
 * WebSocket clients connected. While cut it must send no `event.deliver` (a lease is committed
 * before its frame, and nothing commits), and within `node_ttl_ms` it closes its event connections
 * with UNAVAILABLE (1013). A node on the host takes over: the leases the cut node's session held run
 * out and are offered again there. When the link returns, every delivery ends ACKED once. A client
 * link cut the same way (no FIN) ends the session at the idle timeout, and its lease is offered
 * again on the other node. After each case the history check (testing/src/history.ts) passes.
 *
 * Needs root, iproute2 (`ip netns`) and socat (`npm run test:cluster` installs socat); it creates
 * the namespace and links itself (testing/src/netns.ts) and removes them afterwards.
 */
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Store } from '../src/store/store.ts';
import {
  checkHistory,
  eventually,
  type Forwarder,
  forwardTcp,
  type Frame,
  freePort,
  freshDatabase,
  HistoryLog,
  type Link,
  NetworkLab,
  netnsMissing,
  publishUntilAnswered,
  type ServerProcess,
  spawnServer,
  subscribe,
  TASK,
  type TestDatabase,
  TestSocket,
} from '@orbit/testing';

const SETTINGS = {
  ORBIT_LEASE_DURATION_MS: '2000',
  ORBIT_IDLE_TIMEOUT_MS: '2000',
  ORBIT_WRITE_TIMEOUT_MS: '1000',
  ORBIT_NODE_TTL_MS: '1000',
  ORBIT_POLL_INTERVAL_MS: '50',
  ORBIT_SWEEP_INTERVAL_MS: '200',
};
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Publishes `n` results on `url` under keys `PREFIX-i`, recorded in `history`. */
async function publishKeyed(url: string, args: { token: string; queueId: string; prefix: string; n: number; history: HistoryLog }) {
  for (let i = 0; i < args.n; i++) {
    const body = { type: 'task.succeeded', task_id: TASK, task_revision: String(i + 1) };
    await publishUntilAnswered([url], { ...args, key: `${args.prefix}-${i}`, body });
  }
}

describe('an Orbit node cut from its database while its clients stay connected (network namespaces)', () => {
  const lab = new NetworkLab();
  let ns = '';
  /** The database link and the client link, host side and namespace side. */
  let link: { db: Link; clients: Link };
  let database: TestDatabase;
  let store: Store;
  let forwarder: Forwarder | null = null;
  let cut: ServerProcess | null = null;
  let cutUrl = '';
  let host: ServerProcess | null = null;
  const cutLog = () => cut?.text() ?? '';
  const sockets: TestSocket[] = [];

  beforeAll(async () => {
    const missing = netnsMissing() ?? (existsSync('/usr/bin/socat') ? null : 'socat is missing; install it with: apt-get install -y socat');
    if (missing) throw new Error(missing);
    database = await freshDatabase('mysql');
    const name = database.url.slice(database.url.lastIndexOf('/') + 1);
    store = await Store.open(database.url);

    ns = lab.namespace('orbitp');
    link = { db: lab.link(ns, 231, 0), clients: lab.link(ns, 232, 0) };
    // MariaDB listens on the host's loopback only: a forwarder on the database link reaches it.
    const dbPort = await freePort();
    forwarder = await forwardTcp(link.db.host, dbPort, '127.0.0.1:3306');
    const port = await freePort();
    cut = await spawnServer(`mysql://root@${link.db.host}:${dbPort}/${name}`, SETTINGS, 20_000, `${link.clients.node}:${port}`, ns);
    cutUrl = cut.url;
    host = await spawnServer(database.url, SETTINGS);
  });

  afterAll(async () => {
    for (const s of sockets) s.close();
    await cut?.stop('SIGKILL');
    forwarder?.stop();
    await host?.stop('SIGKILL');
    lab.remove();
    await store?.close();
    await database?.drop();
  });

  // First: the database cut below leaves the node's pooled connections to recover only as TCP
  // retransmits, seconds later.
  it('ends the session of a consumer cut off without a FIN at the idle timeout, and offers its lease again', async () => {
    const boot = await store.bootstrap({
      namespace: 'silent',
      application: 'app',
      queues: ['q'],
      permissions: ['events:manage', 'events:read', 'events:consume', 'results:publish'],
    });
    const queueId = boot.queue_ids.q!;
    const history = new HistoryLog();
    const sub = await subscribe(host!.url, boot.token, queueId);
    const silent = await TestSocket.open(cutUrl, boot.token);
    sockets.push(silent);
    expect((await silent.hello(sub.id, 1)).type).toBe('events.welcome');
    await publishKeyed(host!.url, { token: boot.token, queueId, prefix: 'silent', n: 1, history });
    const leased = await silent.deliver(10_000);
    // Cut the client link: no FIN and no reset reach either side; the node hears nothing more.
    lab.cut(link.clients.outer);
    history.mark('the client link cut');
    try {
      // The idle timeout (2 s) ends the session and removes its row.
      const cutAt = Date.now();
      while ((await store.db.all('SELECT id FROM sessions WHERE id = ?', [silent.sessionId])).length > 0) {
        if (Date.now() - cutAt > 2000 + 3000) throw new Error(`the silent session outlived the idle timeout: ${cutLog().slice(-1000)}`);
        await sleep(100);
      }
      // Its lease runs out and the delivery goes to a consumer on the other node.
      const taker = await TestSocket.open(host!.url, boot.token);
      sockets.push(taker);
      expect((await taker.hello(sub.id, 1)).type).toBe('events.welcome');
      const again = await taker.deliver(15_000);
      expect(again.body.delivery.id).toBe(leased.body.delivery.id);
      expect(BigInt(again.body.delivery.lease_epoch)).toBeGreaterThan(1n);
      expect((await taker.ack(again)).type).toBe('ack');
    } finally {
      lab.heal(link.clients.outer);
    }
    for (const socket of sockets) history.socket(socket);
    expect((await checkHistory('a consumer cut from its node without a FIN', history, store.db, sub.id)).failures).toEqual([]);
  });

  it('sends no event.deliver while cut, closes its sessions with 1013 within node_ttl_ms, and loses nothing', async () => {
    const boot = await store.bootstrap({
      namespace: 'cut',
      application: 'app',
      queues: ['q'],
      permissions: ['events:manage', 'events:read', 'events:consume', 'results:publish'],
    });
    const queueId = boot.queue_ids.q!;
    const history = new HistoryLog();
    const sub = await subscribe(host!.url, boot.token, queueId);
    const onCut = await TestSocket.open(cutUrl, boot.token);
    const first = sockets.length;
    sockets.push(onCut);
    expect((await onCut.hello(sub.id, 4)).type).toBe('events.welcome');
    await publishKeyed(host!.url, { token: boot.token, queueId, prefix: 'before', n: 4, history });
    const held: Frame[] = [];
    for (let i = 0; i < 4; i++) held.push(await onCut.deliver(10_000));
    expect((await onCut.ack(held[0]!)).type).toBe('ack');

    // Cut the database link: the node, its process and its client link stay up.
    lab.cut(link.db.outer);
    history.mark('the database link cut');
    const cutAt = Date.now();
    onCut.send('event.ack', {
      delivery_id: held[1]!.body.delivery.id,
      epoch: held[1]!.body.delivery.lease_epoch,
      lease_secret: held[1]!.body.lease_secret,
    });
    await publishKeyed(host!.url, { token: boot.token, queueId, prefix: 'during', n: 4, history });
    const closed = await onCut.waitClosed(15_000);
    expect(closed.code).toBe(1013);
    expect(Date.now() - cutAt).toBeLessThan(1000 + 2000);
    expect(onCut.frames.filter((f) => f.type === 'event.deliver')).toEqual([]);

    // The node on the host delivers the new results, and the cut session's leases once they run out.
    const taker = await TestSocket.open(host!.url, boot.token);
    sockets.push(taker);
    expect((await taker.hello(sub.id, 8)).type).toBe('events.welcome');
    const taken = new Map<string, Frame>();
    while (taken.size < 7) {
      const frame = await taker.deliver(15_000);
      taken.set(frame.body.delivery.id, frame);
      await taker.ack(frame);
    }
    // The three leases the cut session held came back with the next epoch; the first ACK stands.
    for (const frame of held.slice(1)) expect(taken.get(frame.body.delivery.id)?.body.delivery.lease_epoch).toBe('2');
    expect(taken.has(held[0]!.body.delivery.id)).toBe(false);

    // The link returns: whatever the cut node held back resolves without a second ACK or a lost one.
    lab.heal(link.db.outer);
    // How long the healed node's pooled connections take to serve again (docs/scaling.md).
    const healedAt = Date.now();
    await eventually(
      async () => (await fetch(`${cutUrl}/readyz`, { signal: AbortSignal.timeout(2000) }).catch(() => null))?.status === 200,
      30_000,
      'the healed node ready again',
    );
    console.log(`the database link back: the node ready again in ${Date.now() - healedAt} ms`);
    await sleep(1000);
    const rows = await store.db.all('SELECT state, COUNT(*) AS n FROM deliveries WHERE subscription_id = ? GROUP BY state', [sub.id]);
    expect(rows.map((r) => [String(r.state), Number(r.n)])).toEqual([['ACKED', 8]]);
    expect(cutLog()).toContain('no heartbeat within node_ttl_ms');
    for (const socket of sockets.slice(first)) history.socket(socket);
    expect((await checkHistory('an Orbit node cut from its database', history, store.db, sub.id)).failures).toEqual([]);
  });
});

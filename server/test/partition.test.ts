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
 * Needs root and iproute2 (`ip netns`) and socat, as this machine has; it creates the namespace and
 * links itself and removes them afterwards.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Store } from '../src/store/store.ts';
import {
  checkHistory,
  cleanEnv,
  type Frame,
  freePort,
  freshDatabase,
  History,
  ORBIT_BIN,
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
async function publishKeyed(url: string, args: { token: string; queueId: string; prefix: string; n: number; history: History }) {
  for (let i = 0; i < args.n; i++) {
    const body = { type: 'task.succeeded', task_id: TASK, task_revision: String(i + 1) };
    await publishUntilAnswered([url], { ...args, key: `${args.prefix}-${i}`, body });
  }
}

function ip(...args: string[]): void {
  const run = spawnSync('ip', args, { encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`ip ${args.join(' ')}: ${run.stderr}`);
}

describe('an Orbit node cut from its database while its clients stay connected (network namespaces)', () => {
  const tag = randomBytes(2).toString('hex');
  const octet = 16 + (Number.parseInt(tag, 16) % 200);
  const ns = `orbitp${tag}`;
  /** Host side and namespace side of the database link and of the client link. */
  const link = { db: [`opd0${tag}`, `opd1${tag}`], clients: [`opc0${tag}`, `opc1${tag}`] } as const;
  const dbNet = { host: `10.231.${octet}.1`, node: `10.231.${octet}.2` };
  const clientNet = { host: `10.232.${octet}.1`, node: `10.232.${octet}.2` };
  let database: TestDatabase;
  let store: Store;
  let forwarder: ChildProcess | null = null;
  let cut: ChildProcess | null = null;
  let cutUrl = '';
  let host: ServerProcess | null = null;
  const cutLog: string[] = [];
  const sockets: TestSocket[] = [];

  beforeAll(async () => {
    if (process.getuid?.() !== 0 || !existsSync('/usr/bin/socat'))
      throw new Error('this test needs root, iproute2 and socat (apt-get install -y socat)');
    database = await freshDatabase('mysql');
    const name = database.url.slice(database.url.lastIndexOf('/') + 1);
    store = await Store.open(database.url);

    ip('netns', 'add', ns);
    ip('netns', 'exec', ns, 'ip', 'link', 'set', 'lo', 'up');
    for (const [[outer, inner], net] of [
      [link.db, dbNet],
      [link.clients, clientNet],
    ] as const) {
      ip('link', 'add', outer, 'type', 'veth', 'peer', 'name', inner);
      ip('link', 'set', inner, 'netns', ns);
      ip('addr', 'add', `${net.host}/30`, 'dev', outer);
      ip('link', 'set', outer, 'up');
      ip('netns', 'exec', ns, 'ip', 'addr', 'add', `${net.node}/30`, 'dev', inner);
      ip('netns', 'exec', ns, 'ip', 'link', 'set', inner, 'up');
    }
    // MariaDB listens on the host's loopback only: a forwarder on the database link reaches it.
    const dbPort = await freePort();
    // In a process group of its own: it forks a child per connection, and they all go with it.
    forwarder = spawn('socat', [`TCP-LISTEN:${dbPort},bind=${dbNet.host},fork,reuseaddr`, 'TCP:127.0.0.1:3306'], {
      stdio: 'ignore',
      detached: true,
    });
    await sleep(300);
    const port = await freePort();
    cut = spawn(
      'ip',
      [
        'netns',
        'exec',
        ns,
        process.execPath,
        ORBIT_BIN,
        'serve',
        '--listen',
        `${clientNet.node}:${port}`,
        '--database',
        `mysql://root@${dbNet.host}:${dbPort}/${name}`,
      ],
      {
        env: { ...cleanEnv(), ...SETTINGS },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    cut.stdout!.on('data', (chunk: Buffer) => cutLog.push(chunk.toString()));
    cut.stderr!.on('data', (chunk: Buffer) => cutLog.push(chunk.toString()));
    for (let i = 0; i < 200 && !cutLog.join('').includes('orbit is serving'); i++) await sleep(100);
    if (!cutLog.join('').includes('orbit is serving')) throw new Error(`the node in ${ns} did not start: ${cutLog.join('')}`);
    cutUrl = `http://${clientNet.node}:${port}`;
    host = await spawnServer(database.url, SETTINGS);
  });

  afterAll(async () => {
    for (const s of sockets) s.close();
    cut?.kill('SIGKILL');
    if (forwarder?.pid !== undefined) process.kill(-forwarder.pid, 'SIGKILL');
    await host?.stop('SIGKILL');
    spawnSync('ip', ['netns', 'del', ns]);
    for (const outer of [link.db[0], link.clients[0]]) spawnSync('ip', ['link', 'del', outer]);
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
    const history = new History();
    const sub = await subscribe(host!.url, boot.token, queueId);
    const silent = await TestSocket.open(cutUrl, boot.token);
    sockets.push(silent);
    expect((await silent.hello(sub.id, 1)).type).toBe('events.welcome');
    await publishKeyed(host!.url, { token: boot.token, queueId, prefix: 'silent', n: 1, history });
    const leased = await silent.deliver(10_000);
    // Cut the client link: no FIN and no reset reach either side; the node hears nothing more.
    ip('link', 'set', link.clients[0], 'down');
    history.mark('the client link cut');
    try {
      // The idle timeout (2 s) ends the session and removes its row.
      const cutAt = Date.now();
      while ((await store.db.all('SELECT id FROM sessions WHERE id = ?', [silent.sessionId])).length > 0) {
        if (Date.now() - cutAt > 2000 + 3000)
          throw new Error(`the silent session outlived the idle timeout: ${cutLog.join('').slice(-1000)}`);
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
      ip('link', 'set', link.clients[0], 'up');
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
    const history = new History();
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
    ip('link', 'set', link.db[0], 'down');
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
    ip('link', 'set', link.db[0], 'up');
    await sleep(1000);
    const rows = await store.db.all('SELECT state, COUNT(*) AS n FROM deliveries WHERE subscription_id = ? GROUP BY state', [sub.id]);
    expect(rows.map((r) => [String(r.state), Number(r.n)])).toEqual([['ACKED', 8]]);
    expect(cutLog.join('')).toContain('no heartbeat within node_ttl_ms');
    for (const socket of sockets.slice(first)) history.socket(socket);
    expect((await checkHistory('an Orbit node cut from its database', history, store.db, sub.id)).failures).toEqual([]);
  });
});

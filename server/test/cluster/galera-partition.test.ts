/**
 * Galera partitions with real network stacks (docs/operations.md, "Tested topology"): three Galera
 * nodes, each in a network namespace of its own with the `orbit serve` node that runs beside it.
 * The namespaces reach each other through one switch (a bridge, one port each) and the host through
 * a link each (the balancer, the publishers, the consumer and the test's own checks come that way).
 * A partition sets a node's switch port down: packets vanish, nobody is told, no process dies.
 *
 * - A Galera node cut from the other two: the minority goes non-Primary, the Orbit node beside it
 *   answers /readyz with 503, sends no `event.deliver` and closes its event connections with 1013;
 *   HAProxy (`deploy/haproxy/orbit.cfg`) takes it out, and the majority carries on. When the link
 *   returns the node rejoins and is ready again.
 * - The writer's node cut from the others while every Orbit node writes through HAProxy
 *   (`deploy/haproxy/galera-writer.cfg`): the proxy moves every connection to the next node, and
 *   back when the link returns.
 *
 * After each case the history check (testing/src/history.ts) runs over what the publishers and the
 * example consumer saw and the final database.
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import mysql from 'mysql2/promise';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Store } from '../../src/store/store.ts';
import {
  ackedCount,
  checkHistory,
  eventually,
  freePort,
  freshDatabase,
  handledByExample,
  HistoryLog,
  haproxyMissing,
  type Link,
  NetworkLab,
  netnsMissing,
  type HaproxyProcess,
  publishUntilAnswered,
  type ServerProcess,
  spawnExampleConsumer,
  spawnServer,
  startOrbitBalancer,
  startWriterProxy,
  subscribeThroughBalancer,
  TASK,
  type TestDatabase,
  TestSocket,
} from '@orbit/testing';
import { galeraWith } from '../galera/cluster.ts';
import { freePorts } from '../galera/setup.ts';

const RESULTS = 300;
const ENV = {
  ORBIT_LEASE_DURATION_MS: '3000',
  ORBIT_POLL_INTERVAL_MS: '50',
  ORBIT_NODE_TTL_MS: '3000',
  ORBIT_SWEEP_INTERVAL_MS: '200',
};
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('Galera partitions: each node and its Orbit node in a network namespace of their own', () => {
  const lab = new NetworkLab();
  let env: Record<string, string> = {};
  let namespaces: string[] = [];
  /** Each namespace's switch port (host side): cutting one cuts that node from the other two. */
  let switchPorts: string[] = [];
  let hostLinks: Link[] = [];
  let sqlPorts: number[] = [];
  let started = false;
  const cleanups: (() => Promise<unknown> | unknown)[] = [];

  /** Node `i`'s (0-based) SQL server as this host reaches it. */
  const nodeUri = (i: number, database = '') => `mysql://root@${hostLinks[i]!.node}:${sqlPorts[i]}/${database}`;

  async function status(i: number): Promise<{ cluster: string; state: string; size: number }> {
    const conn = await mysql.createConnection({ uri: nodeUri(i), connectTimeout: 2000 });
    try {
      const [rows] = await conn.query<mysql.RowDataPacket[]>(
        "SHOW GLOBAL STATUS WHERE Variable_name IN ('wsrep_cluster_status', 'wsrep_local_state_comment', 'wsrep_cluster_size')",
      );
      const get = (name: string) => String(rows.find((r) => r.Variable_name === name)?.Value ?? '');
      return { cluster: get('wsrep_cluster_status'), state: get('wsrep_local_state_comment'), size: Number(get('wsrep_cluster_size')) };
    } finally {
      await conn.end();
    }
  }

  async function readyz(url: string): Promise<number> {
    return (await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(3000) }).catch(() => null))?.status ?? 0;
  }

  /** A database on the cluster (through node 3, which no case cuts), and a store on it. */
  async function clusterDatabase(): Promise<{ name: string; store: Store }> {
    const name = `orbit_p_${randomBytes(6).toString('hex')}`;
    const conn = await mysql.createConnection({ uri: nodeUri(2) });
    await conn.query(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin`);
    await conn.end();
    const store = await Store.open(nodeUri(2, name));
    cleanups.push(() => store.close());
    return { name, store };
  }

  /** The three Orbit nodes, node `i` in namespace `i` on `databaseUrl(i)`, and the balancer in front of them. */
  async function orbitNodes(databaseUrl: (i: number) => string): Promise<{ nodes: ServerProcess[]; balancer: HaproxyProcess }> {
    const nodes: ServerProcess[] = [];
    for (let i = 0; i < 3; i++) {
      const node = await spawnServer(databaseUrl(i), ENV, 60_000, `${hostLinks[i]!.node}:${await freePort()}`, namespaces[i]);
      cleanups.push(() => node.stop('SIGKILL'));
      nodes.push(node);
    }
    const balancer = await startOrbitBalancer(nodes.map((n) => new URL(n.url).host));
    cleanups.push(() => balancer.stop());
    return { nodes, balancer };
  }

  /** Publishes RESULTS results through `url` in the background, recorded in `history`. */
  function publishAll(url: string, token: string, queueId: string, prefix: string, history: HistoryLog): Promise<void> {
    return (async () => {
      for (let n = 0; n < RESULTS; n++) {
        const body = { type: 'task.succeeded', task_id: TASK, task_revision: String(n + 1) };
        await publishUntilAnswered([url], { token, queueId, key: `${prefix}-${n}`, body, history, pauseMs: 100 });
        if (n % 10 === 0) await sleep(20);
      }
    })();
  }

  /** A subscription with the example consumer on it through the balancer (its Inbox on the host's MariaDB). */
  async function consume(store: Store, balancer: HaproxyProcess, name: string) {
    const { boot, queueId, subscriptionId } = await subscribeThroughBalancer(store, balancer, name);
    const inbox: TestDatabase = await freshDatabase('mysql');
    cleanups.push(() => inbox.drop());
    const log: string[] = [];
    const consumer: ChildProcess = spawnExampleConsumer({ url: balancer.url, token: boot.token, subscriptionId, inbox: inbox.url }, log);
    cleanups.push(() => consumer.kill('SIGKILL'));
    const acked = () => ackedCount(store.db, subscriptionId);
    /** What to show when a wait fails: the consumer's last lines. */
    const tail = () => log.join('').slice(-1500);
    return { boot, queueId, subscriptionId, inbox, log, acked, tail };
  }

  /** Waits until `floor` deliveries are ACKED; a failure shows how many are and the consumer's last lines. */
  async function ackedAtLeast(c: { acked(): Promise<number>; tail(): string }, floor: number, what: string): Promise<void> {
    try {
      await eventually(async () => (await c.acked()) >= floor, 90_000, what);
    } catch (error) {
      throw new Error(`${(error as Error).message}: ${await c.acked().catch(() => '?')} ACKED; consumer: ${c.tail()}`);
    }
  }

  beforeAll(async () => {
    const missing = netnsMissing() ?? haproxyMissing();
    if (missing) throw new Error(missing);
    namespaces = [1, 2, 3].map((n) => lab.namespace(`og${n}`));
    const fabric = lab.bridge(namespaces, 235);
    switchPorts = fabric.ports;
    hostLinks = namespaces.map((ns, i) => lab.link(ns, 236, i));
    const ports = await freePorts();
    sqlPorts = [0, 1, 2].map((i) => Number(ports.GALERA_PORT) + i);
    env = {
      ...ports,
      GALERA_NETNS: namespaces.join(' '),
      GALERA_ADDRESSES: fabric.addresses.join(' '),
      GALERA_HOSTS: hostLinks.map((l) => l.node).join(' '),
    };
    started = true;
    await galeraWith(env, 'start');
  }, 300_000);

  // Each case's Orbit nodes, proxies and consumer go with it: two cores carry one case at a time.
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await Promise.resolve(cleanup()).catch(() => {});
  });

  afterAll(async () => {
    if (started) await galeraWith(env, 'stop').catch((error: Error) => console.error(error.message));
    lab.remove();
  }, 120_000);

  it('a node cut from the other two goes non-Primary, its Orbit node unready and silent; the majority carries on; it rejoins', async () => {
    const { name, store } = await clusterDatabase();
    // Each Orbit node on the Galera node beside it, over its namespace's loopback.
    const { nodes, balancer } = await orbitNodes((i) => `mysql://root@127.0.0.1:${sqlPorts[i]}/${name}`);
    const c = await consume(store, balancer, 'minority');
    const history = new HistoryLog();
    // A consumer of its own on node 1, bypassing the balancer: what the cut node sends, it sees.
    const direct = await TestSocket.open(nodes[0]!.url, c.boot.token);
    expect((await direct.hello(c.subscriptionId, 2)).type).toBe('events.welcome');

    const publishing = publishAll(balancer.url, c.boot.token, c.queueId, 'minority', history);
    await ackedAtLeast(c, RESULTS / 5, 'a fifth of the results ACKED');

    history.mark('node 1 cut from the other two');
    lab.cut(switchPorts[0]!);
    const cutAt = Date.now();
    await eventually(async () => (await status(0).catch(() => null))?.cluster === 'non-Primary', 30_000, 'node 1 non-Primary');
    await eventually(async () => (await readyz(nodes[0]!.url)) === 503, 20_000, 'Orbit node 1 unready');
    const closed = await direct.waitClosed(30_000);
    expect(closed.code).toBe(1013);
    const silentFrom = Date.now();
    // The majority carries on: more results ACKED through nodes 2 and 3.
    const ackedAtCut = await c.acked();
    await ackedAtLeast(c, ackedAtCut + RESULTS / 10, 'results ACKED by the majority');
    expect((await status(1)).cluster).toBe('Primary');
    console.log(`node 1 cut: non-Primary, unready and its sessions closed within ${silentFrom - cutAt} ms`);

    history.mark('node 1 link back');
    lab.heal(switchPorts[0]!);
    const healedAt = Date.now();
    await eventually(
      async () => {
        const s = await status(0).catch(() => null);
        return s?.cluster === 'Primary' && s.state === 'Synced' && s.size === 3;
      },
      90_000,
      'node 1 rejoined and Synced',
    );
    const syncedAt = Date.now();
    await eventually(async () => (await readyz(nodes[0]!.url)) === 200, 30_000, 'Orbit node 1 ready again');
    console.log(`node 1 healed: Synced in ${syncedAt - healedAt} ms, Orbit node 1 ready in ${Date.now() - healedAt} ms`);
    await publishing;
    await eventually(
      async () => (await c.acked()) === RESULTS,
      90_000,
      `all ${RESULTS} ACKED (consumer: ${c.log.join('').slice(-1500)}; haproxy: ${balancer.log.join('').slice(-1000)})`,
    );
    await sleep(500); // the consumer's last `acked` lines: it prints them after the database committed
    history.exampleConsumer(c.log);
    history.socket(direct);
    // While cut, the node sent nothing: every frame the direct consumer got came before the cut.
    expect(direct.received.filter((r) => r.frame.type === 'event.deliver' && r.at > cutAt)).toEqual([]);
    expect((await checkHistory('a Galera node cut from the other two', history, store.db, c.subscriptionId)).failures).toEqual([]);
    expect(await handledByExample(c.inbox.url)).toEqual({ rows: RESULTS, events: RESULTS });
  }, 400_000);

  it('the writer cut from the others: HAProxy moves every Orbit connection to the next node, and back', async () => {
    const { name, store } = await clusterDatabase();
    const writer = await startWriterProxy(
      [0, 1, 2].map((i) => `${hostLinks[i]!.node}:${sqlPorts[i]}`),
      '0.0.0.0',
    );
    cleanups.push(() => writer.stop());
    const writerName = async () => {
      const conn = await mysql.createConnection({ uri: writer.url, connectTimeout: 2000 });
      try {
        const [rows] = await conn.query<mysql.RowDataPacket[]>('SELECT @@wsrep_node_name AS name');
        return String(rows[0]!.name);
      } finally {
        await conn.end();
      }
    };
    await eventually(async () => (await writerName().catch(() => '')) === 'node1', 20_000, 'node 1 the writer');
    // Every Orbit node reaches the proxy on the host over its own link.
    const port = new URL(writer.url).port;
    const { balancer } = await orbitNodes((i) => `mysql://root@${hostLinks[i]!.host}:${port}/${name}`);
    const c = await consume(store, balancer, 'writer');
    const history = new HistoryLog();
    const publishing = publishAll(balancer.url, c.boot.token, c.queueId, 'writer', history);
    await ackedAtLeast(c, RESULTS / 5, 'a fifth of the results ACKED');

    history.mark('the writer cut from the others');
    lab.cut(switchPorts[0]!);
    const cutAt = Date.now();
    await eventually(async () => (await writerName().catch(() => '')) === 'node2', 30_000, 'the proxy moving to node 2');
    const movedAt = Date.now();
    const ackedAtMove = await c.acked();
    await ackedAtLeast(c, ackedAtMove + RESULTS / 10, 'results ACKED through node 2');

    history.mark('the writer link back');
    lab.heal(switchPorts[0]!);
    const healedAt = Date.now();
    await eventually(async () => (await writerName().catch(() => '')) === 'node1', 90_000, 'node 1 the writer again');
    console.log(`writer cut: the proxy on node 2 in ${movedAt - cutAt} ms; healed: node 1 the writer again in ${Date.now() - healedAt} ms`);
    await publishing;
    await eventually(
      async () => (await c.acked()) === RESULTS,
      90_000,
      `all ${RESULTS} ACKED (consumer: ${c.log.join('').slice(-1500)}; proxy: ${writer.log.join('').slice(-1000)})`,
    );
    await sleep(500);
    history.exampleConsumer(c.log);
    expect((await checkHistory("the writer's node cut, HAProxy failing over", history, store.db, c.subscriptionId)).failures).toEqual([]);
    expect(await handledByExample(c.inbox.url)).toEqual({ rows: RESULTS, events: RESULTS });
  }, 400_000);
});

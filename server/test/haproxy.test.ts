/**
 * Orbit behind HAProxy, as deployed (docs/operations.md, "HAProxy"), running the repository's
 * `deploy/haproxy/orbit.cfg`. The example consumer (a MySQL Inbox) and the publisher talk only to
 * the balancer.
 *
 * - A rolling restart: three `orbit serve` nodes on one MariaDB database; while results flow, each
 *   node in turn is drained by SIGTERM and started again. The consumer's connections end with 1001
 *   and it reconnects through the balancer to a node that is up, re-sending the proofs it holds.
 * - A node drained by a failing /readyz: each node in a network namespace of its own, reaching
 *   MariaDB over one link and its clients over another. The consumer's node has its database link
 *   cut: /readyz fails, HAProxy marks the node down, its event connection closes with a code the SDK
 *   reconnects on, and the consumer continues on another node, where the proofs it re-sends are
 *   answered. The link returns and the node rejoins the pool. The same case runs once more on a copy
 *   of the file without `on-marked-down shutdown-sessions`, to measure what that line buys: the
 *   file keeps it because of this measurement (docs/operations.md, "Tested topology").
 *
 * At the end of each case every result was handled once and the history check
 * (testing/src/history.ts) passes.
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  ackedCount,
  checkHistory,
  eventually,
  type Forwarder,
  forwardTcp,
  freePort,
  freshDatabase,
  handledByExample,
  HistoryLog,
  haproxyMissing,
  type Link,
  NetworkLab,
  netnsMissing,
  openStore,
  type HaproxyProcess,
  publishUntilAnswered,
  type ServerProcess,
  spawnExampleConsumer,
  type Store,
  spawnServer,
  startOrbitBalancer,
  subscribeThroughBalancer,
  TASK,
  type TestDatabase,
} from '@orbit/testing';

const RESULTS = 600;
const SERVER_ENV = { ORBIT_LEASE_DURATION_MS: '3000', ORBIT_POLL_INTERVAL_MS: '50' };

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('three nodes behind HAProxy, restarted one by one while results flow (MySQL)', () => {
  let orbitDb: TestDatabase;
  let inboxDb: TestDatabase;
  let store: Store;
  const ports: number[] = [];
  const nodes: (ServerProcess | null)[] = [null, null, null];
  let balancer: HaproxyProcess | null = null;
  let consumer: ChildProcess | null = null;
  const consumerLog: string[] = [];

  beforeAll(async () => {
    // npm run test:cluster installs it (server/test/cluster/setup.ts).
    const missing = haproxyMissing();
    if (missing) throw new Error(missing);
    orbitDb = await freshDatabase('mysql');
    inboxDb = await freshDatabase('mysql');
    store = await openStore(orbitDb.url);
    for (let i = 0; i < 3; i++) ports.push(await freePort());
    await Promise.all(ports.map(async (port, i) => (nodes[i] = await spawnServer(orbitDb.url, SERVER_ENV, 20_000, `127.0.0.1:${port}`))));
  });

  afterAll(async () => {
    consumer?.kill('SIGKILL');
    balancer?.stop();
    await Promise.all(nodes.map((n) => n?.stop('SIGKILL')));
    await store.close();
    await orbitDb.drop();
    await inboxDb.drop();
  });

  it('delivers and ACKs every result once through the balancer while every node is drained in turn', async () => {
    balancer = await startOrbitBalancer(ports.map((port) => `127.0.0.1:${port}`));
    const lb = balancer.url;
    const history = new HistoryLog();

    const { boot, queueId, subscriptionId } = await subscribeThroughBalancer(store, balancer, 'lb');

    consumer = spawnExampleConsumer({ url: lb, token: boot.token, subscriptionId, inbox: inboxDb.url }, consumerLog);

    // Publish through the balancer, each key until it is answered: a request a draining node
    // refused or cut goes again (its key makes the repeat safe).
    const publishing = (async () => {
      for (let n = 0; n < RESULTS; n++) {
        const body = { type: 'task.succeeded', task_id: TASK, task_revision: String(n + 1) };
        await publishUntilAnswered([lb], { token: boot.token, queueId, key: `lb-${n}`, body, history });
        if (n % 10 === 0) await sleep(20);
      }
    })();

    // A rolling restart: each node drained by SIGTERM (it exits 0), then started on its port again.
    const acked = () => ackedCount(store.db, subscriptionId);
    const ackedBefore: number[] = [];
    for (let i = 0; i < 3; i++) {
      // Each drain lands mid-stream: the consumer has ACKed more since the last one.
      const floor = (ackedBefore.at(-1) ?? 0) + 30;
      await eventually(async () => (await acked()) >= floor, 30_000, `${floor} deliveries ACKED before draining node ${i + 1}`);
      ackedBefore.push(await acked());
      history.mark(`draining node ${i + 1}`);
      expect(await nodes[i]!.stop('SIGTERM')).toBe(0);
      nodes[i] = await spawnServer(orbitDb.url, SERVER_ENV, 20_000, `127.0.0.1:${ports[i]}`);
    }
    await publishing;
    // Results were flowing and being consumed across the restarts.
    expect(ackedBefore[0]).toBeGreaterThan(0);
    expect(ackedBefore[2]).toBeLessThan(RESULTS);

    await eventually(
      async () => (await acked()) === RESULTS,
      60_000,
      `all ${RESULTS} deliveries ACKED (consumer: ${consumerLog.join('').slice(-1500)}; haproxy: ${balancer.log.join('').slice(-1500)})`,
    );
    await sleep(500); // the consumer's last `acked` lines: it prints them after the database committed
    history.exampleConsumer(consumerLog);
    expect((await checkHistory('three nodes behind HAProxy, rolling restart', history, store.db, subscriptionId)).failures).toEqual([]);
    expect(await handledByExample(inboxDb.url)).toEqual({ rows: RESULTS, events: RESULTS });
    // The consumer was moved: its connections ended with the drains and it connected again. The
    // node closes them with 1001 once its running claims commit; `on-marked-down shutdown-sessions`
    // cuts them (1006) only if that took longer than two failed checks of /readyz.
    const reconnects = consumerLines(consumerLog).filter((line) => line.type === 'reconnecting');
    expect(reconnects.length).toBeGreaterThan(0);
    // (A failed attempt to connect again has no close code.)
    const codes = reconnects.map((line) => line.close_code).filter((code) => code !== null);
    expect(codes.length).toBeGreaterThan(0);
    for (const code of codes) expect([1001, 1006]).toContain(code);
    console.log(`rolling restart: the consumer's connections closed with ${codes.join(', ')}`);
  }, 180_000);
});

/** Leases longer than the move takes, so that the proofs the consumer re-sends land within them. */
const DRAIN_ENV = {
  ORBIT_LEASE_DURATION_MS: '10000',
  ORBIT_NODE_TTL_MS: '3000',
  ORBIT_POLL_INTERVAL_MS: '50',
  ORBIT_SWEEP_INTERVAL_MS: '200',
};
const DRAIN_RESULTS = 300;
const SHUTDOWN_SESSIONS = /^\s*default-server .*\bon-marked-down shutdown-sessions\b/m;

/** orbit.cfg without `on-marked-down shutdown-sessions`: the comparison case's copy. */
function withoutShutdownSessions(text: string): string {
  return text.replace(/^(\s*default-server .*) on-marked-down shutdown-sessions\b/m, '$1');
}

/** The example consumer's JSON lines so far. */
function consumerLines(log: readonly string[]): Record<string, any>[] {
  return log
    .join('')
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .flatMap((line) => {
      try {
        return [JSON.parse(line)];
      } catch {
        return [];
      }
    });
}

describe('a node drained by a failing /readyz behind HAProxy: its database link cut (network namespaces)', () => {
  const lab = new NetworkLab();
  let orbitDb: TestDatabase;
  let store: Store;
  /** Node `i`'s links: to MariaDB (through a forwarder on the host) and to its clients. */
  const links: { db: Link; clients: Link }[] = [];
  const forwarders: Forwarder[] = [];
  const nodes: ServerProcess[] = [];
  const cleanups: (() => unknown)[] = [];

  async function readyz(url: string): Promise<number> {
    return (await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(3000) }).catch(() => null))?.status ?? 0;
  }

  /** Which of `nodes` holds session `sessionId`: the node row's description ends with its process id. */
  async function nodeOfSession(sessionId: string): Promise<number> {
    const [row] = await store.db.all('SELECT n.description FROM sessions s JOIN nodes n ON n.id = s.node_id WHERE s.id = ?', [sessionId]);
    const pid = Number(/pid (\d+)/.exec(String(row?.description ?? ''))?.[1]);
    const index = nodes.findIndex((n) => n.child.pid === pid);
    if (index < 0) throw new Error(`session ${sessionId} is on no node of this test (${String(row?.description)})`);
    return index;
  }

  beforeAll(async () => {
    const missing =
      netnsMissing() ??
      haproxyMissing() ??
      (existsSync('/usr/bin/socat') ? null : 'socat is missing; install it with: apt-get install -y socat');
    if (missing) throw new Error(missing);
    orbitDb = await freshDatabase('mysql');
    store = await openStore(orbitDb.url);
    // MariaDB listens on the host's loopback only: each node reaches it through a forwarder on its
    // database link, with the test database's own URL otherwise (its user and password).
    const mariadb = new URL(orbitDb.url).host;
    for (let i = 0; i < 3; i++) {
      const ns = lab.namespace(`obl${i + 1}`);
      const link = { db: lab.link(ns, 237, i), clients: lab.link(ns, 238, i) };
      links.push(link);
      const dbPort = await freePort();
      forwarders.push(await forwardTcp(link.db.host, dbPort, mariadb));
      const databaseUrl = new URL(orbitDb.url);
      databaseUrl.hostname = link.db.host;
      databaseUrl.port = String(dbPort);
      nodes.push(await spawnServer(databaseUrl.href, DRAIN_ENV, 30_000, `${link.clients.node}:${await freePort()}`, ns));
    }
  });

  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await Promise.resolve(cleanup()).catch(() => {});
    for (const link of links) lab.heal(link.db.outer);
  });

  afterAll(async () => {
    await Promise.all(nodes.map((n) => n.stop('SIGKILL')));
    for (const forwarder of forwarders) forwarder.stop();
    lab.remove();
    await store?.close();
    await orbitDb?.drop();
  });

  /**
   * The case, on the repository's orbit.cfg (`edit` absent) or on a copy changed by `edit`: returns
   * what it measured, in ms from the cut.
   */
  async function drainByReadyz(name: string, edit?: (text: string) => string) {
    const balancer = await startOrbitBalancer(
      nodes.map((n) => new URL(n.url).host),
      edit,
    );
    cleanups.push(() => balancer.stop());
    const config = readFileSync(new URL('../../deploy/haproxy/orbit.cfg', import.meta.url), 'utf8');
    const cutsSessions = SHUTDOWN_SESSIONS.test(edit ? edit(config) : config);
    const history = new HistoryLog();

    const { boot, queueId, subscriptionId } = await subscribeThroughBalancer(store, balancer, name);
    const inbox = await freshDatabase('mysql');
    cleanups.push(() => inbox.drop());
    const log: string[] = [];
    // Each handler takes 100 ms, so that the consumer holds deliveries (and then unanswered proofs)
    // when the link is cut.
    const consumer: ChildProcess = spawnExampleConsumer(
      { url: balancer.url, token: boot.token, subscriptionId, inbox: inbox.url, env: { ORBIT_HANDLER_DELAY_MS: '100' } },
      log,
    );
    cleanups.push(() => consumer.kill('SIGKILL'));
    const acked = () => ackedCount(store.db, subscriptionId);
    const tail = () => `consumer: ${log.join('').slice(-1500)}; haproxy: ${balancer.log.join('').slice(-1500)}`;

    const publishing = (async () => {
      for (let n = 0; n < DRAIN_RESULTS; n++) {
        const body = { type: 'task.succeeded', task_id: TASK, task_revision: String(n + 1) };
        await publishUntilAnswered([balancer.url], { token: boot.token, queueId, key: `${name}-${n}`, body, history, pauseMs: 100 });
        if (n % 10 === 0) await sleep(20);
      }
    })();

    await eventually(async () => (await acked()) >= DRAIN_RESULTS / 5, 60_000, `a fifth of the results ACKED (${tail()})`);
    const session = consumerLines(log).findLast((l) => l.type === 'connected')!.session_id as string;
    const victim = await nodeOfSession(session);
    const server = `orbit_nodes/node${victim + 1}`;
    // Cut while a delivery is in the consumer's hands (received, not yet handled): its proof is
    // sent to the cut node and never answered there.
    await eventually(
      () => {
        const lines = consumerLines(log);
        const handled = new Set(lines.filter((l) => l.type === 'handled' || l.type === 'duplicate').map((l) => l.delivery_id));
        return lines.some((l) => l.type === 'delivered' && !handled.has(l.delivery_id));
      },
      30_000,
      'a delivery in the consumer’s hands',
    );
    history.mark(`node ${victim + 1}'s database link cut`);
    lab.cut(links[victim]!.db.outer);
    const cutAt = Date.now();
    const ackedAtCut = await acked();

    // HAProxy's checks of /readyz fail (no answer within the check's time): the node is marked down.
    const downAt = await eventually(() => balancer.log.join('').includes(`${server} is DOWN`) && Date.now(), 20_000, `${server} DOWN`);
    // The consumer's connection ends, and it connects again, through the balancer, on another node.
    const closed = await eventually(
      () => consumerLines(log).find((l) => l.type === 'reconnecting' && Date.parse(l.at) >= cutAt),
      30_000,
      `the consumer's connection on node ${victim + 1} closed (${tail()})`,
    );
    const connected = await eventually(
      () => consumerLines(log).find((l) => l.type === 'connected' && Date.parse(l.at) >= Date.parse(closed.at)),
      30_000,
      `the consumer connected again (${tail()})`,
    );
    expect(await nodeOfSession(connected.session_id)).not.toBe(victim);
    // The node is unready while cut; Orbit closes with 1013 (UNAVAILABLE) after node_ttl_ms, HAProxy
    // with shutdown-sessions cuts the tunnel without a close frame (1006). The SDK reconnects on both.
    expect(await readyz(nodes[victim]!.url)).toBe(503);
    expect(closed.close_code).toBe(cutsSessions ? 1006 : 1013);
    await eventually(
      async () => (await acked()) >= ackedAtCut + DRAIN_RESULTS / 10,
      60_000,
      `results ACKED on the other nodes (${tail()})`,
    );

    history.mark(`node ${victim + 1}'s database link back`);
    lab.heal(links[victim]!.db.outer);
    const healedAt = Date.now();
    await eventually(async () => (await readyz(nodes[victim]!.url)) === 200, 30_000, `node ${victim + 1} ready again`);
    const readyAt = Date.now();
    await eventually(() => balancer.log.join('').includes(`${server} is UP`), 20_000, `${server} UP again (${tail()})`);
    const upAt = Date.now();

    await publishing;
    await eventually(async () => (await acked()) === DRAIN_RESULTS, 60_000, `all ${DRAIN_RESULTS} ACKED (${tail()})`);
    await sleep(500); // the consumer's last `acked` lines: it prints them after the database committed
    const lines = consumerLines(log);
    // No ACK is lost: proofs that the cut node never answered were re-sent on the new node and answered there.
    const replayed = lines.filter((l) => l.type === 'acked' && l.replayed === true && Date.parse(l.at) >= Date.parse(connected.at));
    expect(replayed.length).toBeGreaterThan(0);
    history.exampleConsumer(log);
    const check = await checkHistory(`a node drained by a failing /readyz behind HAProxy (${name})`, history, store.db, subscriptionId);
    expect(check.failures).toEqual([]);
    expect(await handledByExample(inbox.url)).toEqual({ rows: DRAIN_RESULTS, events: DRAIN_RESULTS });
    const measured = {
      downMs: downAt - cutAt,
      closedMs: Date.parse(closed.at) - cutAt,
      reconnectedMs: Date.parse(connected.at) - cutAt,
      stallMs: check.recovery[0]?.stallMs ?? null,
      replayed: replayed.length,
      redeliveries: check.redeliveries,
      readyMs: readyAt - healedAt,
      upMs: upAt - healedAt,
    };
    console.log(
      `${name}: cut at 0; HAProxy marked node ${victim + 1} down at ${measured.downMs} ms; the consumer's connection closed (${closed.close_code}) at ${measured.closedMs} ms and reconnected on another node at ${measured.reconnectedMs} ms; longest time without an ACK ${measured.stallMs} ms; ${measured.replayed} re-sent proofs answered there; link back: ready in ${measured.readyMs} ms, marked up in ${measured.upMs} ms`,
    );
    return measured;
  }

  it('the repository’s orbit.cfg: the consumer moves to another node, every proof answered there; the node returns to the pool', async () => {
    await drainByReadyz('orbit-cfg');
  }, 180_000);

  // What the line buys: without it the consumer stays on the cut node until Orbit itself closes
  // its connections after node_ttl_ms.
  it('a copy of orbit.cfg without on-marked-down shutdown-sessions, for comparison: the node closes with 1013 after node_ttl_ms', async () => {
    await drainByReadyz('no-shutdown-sessions', withoutShutdownSessions);
  }, 180_000);
});

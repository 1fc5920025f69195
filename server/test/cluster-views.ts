/**
 * Cross-node views with real processes, on any database layout: three `orbit serve` nodes (one per
 * URL: the same database, or each Galera node), sessions of one subscription on all three, some
 * holding leases. Every node lists the same sessions (node, capacity, leases held) and reports the
 * same cluster-wide counts in `/metrics`. Then one node is SIGKILLed and its consumer reconnects to
 * another: the dead node's session leaves the list and the counts within the node timeout, and its
 * row is deleted within about one more heartbeat; the moved consumer is counted once.
 */
import { expect } from 'vitest';
import type { Store } from '../src/store/store.ts';
import { api, eventually, type ServerProcess, spawnServer, subscribe, TestSocket } from '@orbit/testing';
import { sample, scrape } from './metrics-scrape.ts';

export const NODE_TTL_MS = 1500;
const ENV = {
  ORBIT_NODE_TTL_MS: String(NODE_TTL_MS),
  ORBIT_METRICS: 'open',
  ORBIT_POLL_INTERVAL_MS: '50',
  // Leases outlive the test: what a session holds stays held.
  ORBIT_LEASE_DURATION_MS: '120000',
};
const TASK = '88888888888888888888888888888888';

interface Listed {
  readonly session_id: string;
  readonly node_id: string;
  readonly capacity: number;
  readonly leases_held: number;
  readonly connected_at: string;
  readonly last_seen_at: string;
}

async function listed(url: string, token: string, subscriptionId: string): Promise<Listed[]> {
  const res = await api(url, 'GET', `/v1/subscriptions/${subscriptionId}/sessions?limit=100`, {
    token,
    expect: 'validateSubscriptionSessionList',
  });
  expect(res.status, res.text).toBe(200);
  return res.json.data.items as Listed[];
}

/** Runs the scenario against `databaseUrls` (one per node); `store` is open on the first. */
export async function crossNodeViews(databaseUrls: readonly string[], store: Store): Promise<void> {
  const nodes: ServerProcess[] = [];
  const sockets: TestSocket[] = [];
  try {
    for (const url of databaseUrls) nodes.push(await spawnServer(url, ENV));
    const boot = await store.bootstrap({
      namespace: 'views',
      application: 'app',
      queues: ['q'],
      permissions: ['events:manage', 'events:read', 'events:consume'],
    });
    const queueId = boot.queue_ids.q!;
    const subscription = await subscribe(nodes[0]!.url, boot.token, queueId, { max_pending: 1000 });

    // Two sessions on node 0, one on each of the others; every one ends up holding leases.
    const plan = [
      { node: 0, capacity: 4 },
      { node: 0, capacity: 8 },
      { node: 1, capacity: 2 },
      { node: 2, capacity: 3 },
    ];
    const nodeOf = new Map<string, number>();
    for (const { node, capacity } of plan) {
      const socket = await TestSocket.open(nodes[node]!.url, boot.token);
      sockets.push(socket);
      expect((await socket.hello(subscription.id, capacity)).type).toBe('events.welcome');
      nodeOf.set(socket.sessionId!, node);
    }
    const RESULTS = plan.reduce((n, p) => n + p.capacity, 0);
    await store.appendResults(
      Array.from({ length: RESULTS }, (_, i) => ({ queueId, type: 'task.succeeded' as const, taskId: TASK, taskRevision: `${i + 1}` })),
    );
    const held = new Map<string, number>();
    await eventually(
      () => {
        for (const socket of sockets) held.set(socket.sessionId!, socket.frames.filter((f) => f.type === 'event.deliver').length);
        return [...held.values()].reduce((a, b) => a + b, 0) >= RESULTS;
      },
      30_000,
      'every session full',
    );

    // Every node lists the same four sessions: each with its node, capacity and the leases it holds.
    for (const node of nodes) {
      const items = await listed(node.url, boot.token, subscription.id);
      expect(new Set(items.map((s) => s.session_id))).toEqual(new Set(nodeOf.keys()));
      for (const item of items) {
        const at = plan.find((_, i) => sockets[i]!.sessionId === item.session_id)!;
        expect(item.capacity).toBe(at.capacity);
        expect(item.leases_held).toBe(held.get(item.session_id));
        expect(Date.parse(item.last_seen_at)).toBeGreaterThanOrEqual(Date.parse(item.connected_at));
      }
      // One node id per process, the same for the sessions of one process.
      const nodeIds = new Map(items.map((s) => [nodeOf.get(s.session_id), s.node_id]));
      expect(new Set(nodeIds.values()).size).toBe(3);
      for (const item of items) expect(item.node_id).toBe(nodeIds.get(nodeOf.get(item.session_id)));
    }

    // Every node reports the cluster-wide counts, each session and delivery once.
    const counts = async (url: string) => {
      const { text } = await scrape(url);
      return {
        nodes: sample(text, 'orbit_cluster_nodes'),
        sessions: sample(text, 'orbit_cluster_sessions'),
        backlog: sample(text, 'orbit_cluster_backlog'),
        subscription: sample(text, 'orbit_subscription_sessions', { subscription_id: subscription.id }),
        local: sample(text, 'orbit_event_sessions'),
      };
    };
    const before = await Promise.all(nodes.map((n) => counts(n.url)));
    for (const c of before) expect([c.nodes, c.sessions, c.backlog, c.subscription]).toEqual([3, 4, RESULTS, 4]);
    expect(before.map((c) => c.local)).toEqual([2, 1, 1]);

    // Node 2 dies; its consumer reconnects to node 1.
    const dead = (await listed(nodes[0]!.url, boot.token, subscription.id)).find((s) => nodeOf.get(s.session_id) === 2)!;
    await nodes[2]!.stop('SIGKILL');
    const moved = await TestSocket.open(nodes[1]!.url, boot.token);
    sockets.push(moved);
    expect((await moved.hello(subscription.id, 3)).type).toBe('events.welcome');
    const live = new Set([...nodeOf.keys()].filter((id) => id !== dead.session_id).concat(moved.sessionId!));
    // Within the node timeout (plus a heartbeat) both survivors list exactly the live sessions...
    const bound = NODE_TTL_MS * 2 + 2000;
    for (const node of nodes.slice(0, 2)) {
      await eventually(
        async () => {
          const ids = new Set((await listed(node.url, boot.token, subscription.id)).map((s) => s.session_id));
          return ids.size === live.size && [...live].every((id) => ids.has(id));
        },
        bound,
        'the dead node’s session to leave the list',
      );
      await eventually(
        async () => {
          const c = await counts(node.url);
          return c.nodes === 2 && c.sessions === 4 && c.subscription === 4;
        },
        bound,
        'the cluster counts without the dead node',
      );
    }
    // ...and the dead node's row and its session's row are deleted by a survivor's heartbeat.
    await eventually(
      async () => (await store.db.all('SELECT id FROM sessions WHERE node_id = ?', [dead.node_id])).length === 0,
      bound,
      'the dead node’s rows deleted',
    );
    expect(await store.db.all('SELECT id FROM nodes WHERE id = ?', [dead.node_id])).toEqual([]);
    for (const socket of sockets) expect(socket.invalid).toEqual([]);
  } finally {
    for (const socket of sockets) socket.close();
    await Promise.all(nodes.map((n) => n.stop('SIGKILL')));
  }
}

/**
 * Orbit on a three-node Galera cluster under faults, with real processes: three `orbit serve`, each
 * on its own Galera node; publishers on all three at once, each key retried on the next node until
 * it is answered; six reconnecting consumers spread over the three. Mid-stream one Galera node is
 * SIGKILLed and restarted (it rejoins by IST, or SST), then one Orbit node is SIGKILLed and
 * restarted; a consumer that took the first deliveries vanished without an ACK. Afterwards:
 * - every key was appended exactly once and every answer names that key's event;
 * - the log has no gap and every result was delivered and ACKED (no sequence skipped);
 * - seen from the consumers, no delivery was held by two sessions with valid leases at once;
 * - every `event.deliver` names a lease that the cluster had committed before the frame arrived
 *   (checked by a causal read on another node: epoch and lease digest match);
 * - the three nodes hold the same rows, and the restarted node is Synced again.
 */
import { createHash, randomBytes } from 'node:crypto';
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Store } from '../../src/store/store.ts';
import { type Frame, type ServerProcess, spawnServer, subscribe, TestSocket } from '@orbit/testing';
import { clusterDatabase, conflictCounters, galera, NODE_URLS, onNode, type ClusterDatabase } from './cluster.ts';

const RESULTS = 1000;
const PUBLISHERS = 9;
const CONSUMERS = 6;
const CAPACITY = 8;
const LEASE_MS = 3000;
const ENV = { ORBIT_POLL_INTERVAL_MS: '50', ORBIT_LEASE_DURATION_MS: String(LEASE_MS), ORBIT_SWEEP_INTERVAL_MS: '250' };
/** The Galera node that is killed (1-based, as scripts/galera.sh names them); its Orbit node is index 1. */
const KILLED_GALERA = 2;
/** The Orbit node that is killed (0-based); it runs on Galera node 3. */
const KILLED_ORBIT = 2;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

async function until(what: string, check: () => boolean, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

/** A lease as one consumer saw it. */
interface Lease {
  readonly deliveryId: string;
  readonly eventId: string;
  readonly session: string;
  readonly epoch: bigint;
  readonly from: number;
  readonly until: number;
}

/** What all consumers saw, and the causal check of every frame against the cluster. */
class Observations {
  readonly leases: Lease[] = [];
  readonly acked = new Set<string>();
  /** Frames whose lease is still to be looked up on the cluster. */
  readonly unchecked: { deliveryId: string; epoch: bigint; digest: string }[] = [];
  readonly uncommitted: string[] = [];
  checked = 0;

  /** Records the lease of an `event.deliver` frame and queues it for the causal check. */
  record(session: string, frame: Frame): void {
    const delivery = frame.body.delivery;
    const until = Date.parse(delivery.lease_until);
    const epoch = BigInt(delivery.lease_epoch);
    this.leases.push({ deliveryId: delivery.id, eventId: frame.body.event.id, session, epoch, from: until - LEASE_MS, until });
    this.unchecked.push({ deliveryId: delivery.id, epoch, digest: sha256(frame.body.lease_secret) });
  }

  /** Looks up waiting frames' leases on Galera node 1 (never killed) with a causal read. */
  async check(conn: mysql.Connection): Promise<void> {
    const batch = this.unchecked.splice(0, 500);
    if (batch.length === 0) return;
    const [rows] = await conn.query(
      `SELECT id, lease_epoch, lease_digest FROM deliveries WHERE id IN (${batch.map(() => '?').join(', ')})`,
      batch.map((b) => b.deliveryId),
    );
    const byId = new Map((rows as { id: string; lease_epoch: string; lease_digest: string }[]).map((r) => [r.id, r]));
    for (const frame of batch) {
      const row = byId.get(frame.deliveryId);
      const epoch = row ? BigInt(row.lease_epoch) : -1n;
      // A later lease may have replaced it meanwhile; an earlier one (or none) means it was never committed.
      if (!row || epoch < frame.epoch || (epoch === frame.epoch && row.lease_digest !== frame.digest))
        this.uncommitted.push(`${frame.deliveryId} epoch ${frame.epoch}: cluster has ${row ? `epoch ${epoch}` : 'no row'}`);
      this.checked++;
    }
  }
}

/** A consumer that reconnects to the next node whenever its connection ends, and re-sends unanswered proofs. */
class Consumer {
  private readonly unanswered = new Map<string, { delivery_id: string; epoch: string; lease_secret: string }>();
  sessions = 0;

  constructor(
    private readonly index: number,
    private readonly urls: string[],
    private readonly token: string,
    private readonly subscriptionId: string,
    private readonly seen: Observations,
  ) {}

  async run(done: () => boolean): Promise<void> {
    for (let attempt = this.index; !done(); attempt++) {
      const socket = await TestSocket.open(this.urls[attempt % this.urls.length]!, this.token).catch(() => null);
      if (!socket) {
        await sleep(100);
        continue;
      }
      try {
        await this.serve(socket, done);
      } catch {
        // the connection failed while binding; try the next node
      } finally {
        socket.close();
      }
      await sleep(50);
    }
  }

  private async serve(socket: TestSocket, done: () => boolean): Promise<void> {
    const welcome = await socket.hello(this.subscriptionId, CAPACITY);
    if (welcome.type !== 'events.welcome') return;
    this.sessions++;
    const inFlight = new Map<string, string>(); // ack message id → proof key
    const ack = (key: string, proof: { delivery_id: string; epoch: string; lease_secret: string }) =>
      inFlight.set(socket.send('event.ack', proof), key);
    for (const [key, proof] of this.unanswered) ack(key, proof);
    while (!done() && !socket.closed) {
      const frame: Frame | null = await socket.next(() => true, 250).catch(() => null);
      if (!frame) continue;
      if (frame.type === 'event.deliver') {
        const delivery = frame.body.delivery;
        this.seen.record(socket.sessionId!, frame);
        const key = `${delivery.id}/${delivery.lease_epoch}`;
        const proof = { delivery_id: delivery.id, epoch: delivery.lease_epoch, lease_secret: frame.body.lease_secret };
        this.unanswered.set(key, proof);
        ack(key, proof);
      } else if (frame.reply_to && inFlight.has(frame.reply_to)) {
        const key = inFlight.get(frame.reply_to)!;
        inFlight.delete(frame.reply_to);
        if (frame.type === 'ack') {
          this.unanswered.delete(key);
          this.seen.acked.add(frame.body.delivery_id);
        } else if (frame.error?.code === 'DELIVERY_LEASE_LOST') {
          this.unanswered.delete(key); // a newer lease replaced this one; its holder ACKs it
        }
      }
    }
  }
}

describe('Orbit on a three-node Galera cluster with a database node and an Orbit node killed mid-stream', () => {
  let database: ClusterDatabase;
  let store: Store;
  const nodes: ServerProcess[] = [];
  let verifier: mysql.Connection;

  beforeAll(async () => {
    database = await clusterDatabase();
    store = await Store.open(database.urls[0]!);
    for (const url of database.urls) nodes.push(await spawnServer(url, ENV));
    verifier = await mysql.createConnection({ uri: `${NODE_URLS[0]}/${database.name}`, supportBigNumbers: true, bigNumberStrings: true });
    await verifier.query('SET SESSION wsrep_sync_wait = 1');
  });
  afterAll(async () => {
    await verifier?.end();
    await Promise.all(nodes.map((n) => n.stop('SIGKILL')));
    await store?.close();
    await database?.drop();
  });

  it('delivers and ACKs every result once, appends every key once, never skips a sequence or doubles a lease', async () => {
    const boot = await store.bootstrap({
      namespace: 'galera',
      application: 'app',
      queues: ['q'],
      permissions: ['events:manage', 'events:read', 'events:consume', 'results:publish'],
    });
    const queueId = boot.queue_ids.q!;
    const subscription = await subscribe(nodes[0]!.url, boot.token, queueId, { max_pending: 1000 });
    const urls = nodes.map((n) => n.url);
    const conflictsBefore = await conflictCounters();

    // --- consumers and the causal check of their frames ----------------------------------------
    const seen = new Observations();
    let finished = false;
    const consumers = Array.from({ length: CONSUMERS }, (_, i) => new Consumer(i, urls, boot.token, subscription.id, seen));
    let consuming: Promise<void>[] = [];
    const checking = (async () => {
      while (!finished) {
        await seen.check(verifier);
        await sleep(200);
      }
      while (seen.unchecked.length > 0) await seen.check(verifier);
    })();

    // --- publishers: every key until answered, on the next node after a failure -----------------
    /** Each key's answer, and the node and attempt that gave it (for the diagnosis of a lost publish). */
    const answers = new Map<number, { eventId: string; sequence: string; status: number; node: number; attempt: number }>();
    let publishFailures = 0;
    let gate: Promise<void> = Promise.resolve();
    async function publishOne(n: number): Promise<void> {
      const body = JSON.stringify({ type: 'task.succeeded', task_id: randomBytes(16).toString('hex'), task_revision: String(n + 1) });
      for (let attempt = 0; attempt < 400; attempt++) {
        try {
          const response = await fetch(`${urls[(n + attempt) % urls.length]}/v1/queues/${queueId}/results`, {
            method: 'POST',
            headers: { authorization: `Bearer ${boot.token}`, 'idempotency-key': `key-${n}`, 'content-type': 'application/json' },
            body,
            signal: AbortSignal.timeout(5000),
          });
          const json = (await response.json()) as { data?: { event: { id: string; sequence: string } } };
          if (response.status === 201 || response.status === 200) {
            const { id, sequence } = json.data!.event;
            answers.set(n, { eventId: id, sequence, status: response.status, node: (n + attempt) % urls.length, attempt });
            return;
          }
        } catch {
          // the node or its database died under the request: the key's fate is unknown, send it again
        }
        publishFailures++;
        await sleep(20 + Math.random() * 80);
      }
      throw new Error(`key-${n} got no answer in 400 attempts`);
    }
    let next = 0;
    const publishing = Array.from({ length: PUBLISHERS }, async () => {
      while (next < RESULTS) {
        await gate;
        await publishOne(next++);
      }
    });

    // A consumer that takes the first deliveries and vanishes without an ACK: its leases must run
    // out before anyone else gets those deliveries (the overlap check below). It is alone at first:
    // a second session of a subscription on a node can wait long for its first delivery.
    const vanishing = await TestSocket.open(urls[0]!, boot.token);
    expect((await vanishing.hello(subscription.id, CAPACITY)).type).toBe('events.welcome');
    const taken = await vanishing.deliver(30_000);
    await sleep(200);
    for (const frame of [taken, ...vanishing.frames.filter((f) => f.type === 'event.deliver')]) seen.record(vanishing.sessionId!, frame);
    vanishing.close();
    consuming = consumers.map((c) => c.run(() => finished));

    // --- faults: a Galera node, then an Orbit node, each while results flow ----------------------
    const fault = async () => {
      await until('a fifth of the keys', () => answers.size >= RESULTS / 5);
      const galeraKill = { answered: answers.size, acked: seen.acked.size };
      await galera('kill', String(KILLED_GALERA));
      // Publishing goes on through the two nodes left, up to half of the keys; then it waits for the rejoin.
      let reopen!: () => void;
      const half = until('half of the keys', () => answers.size >= RESULTS / 2).then(() => {
        gate = new Promise((resolve) => (reopen = resolve));
      });
      await sleep(2000);
      await galera('restart', String(KILLED_GALERA));
      await half.catch(() => undefined);
      reopen?.();
      await until('three quarters of the keys', () => answers.size >= (RESULTS * 3) / 4);
      const orbitKill = { answered: answers.size, acked: seen.acked.size };
      await nodes[KILLED_ORBIT]!.stop('SIGKILL');
      await sleep(500);
      nodes[KILLED_ORBIT] = await spawnServer(database.urls[KILLED_ORBIT]!, ENV);
      urls[KILLED_ORBIT] = nodes[KILLED_ORBIT]!.url;
      return { galeraKill, orbitKill };
    };
    const faults = await fault();
    await Promise.all(publishing);
    // Every key appended once, and every answer (201, or a replay on another node) names its key's
    // event. Checked before waiting for the ACKs: a publish answered but not appended leaves
    // nothing to ACK, and its receipt and the row at its sequence say what happened.
    const results = await store.db.all('SELECT sequence, id, task_revision FROM results WHERE queue_id = ? ORDER BY sequence', [queueId]);
    const byKey = new Map(results.map((r) => [Number(r.task_revision) - 1, r]));
    const unlogged = [...answers].filter(
      ([n, a]) => String(byKey.get(n)?.id) !== a.eventId || String(byKey.get(n)?.sequence) !== a.sequence,
    );
    if (unlogged.length > 0) {
      const shown = unlogged.slice(0, 5);
      const receipts = await store.db.all(
        `SELECT idem_key, status, sequence, created_at, SUBSTR(response, 1, 120) AS response FROM idempotency_records WHERE idem_key IN (${shown.map(() => '?').join(', ')})`,
        shown.map(([n]) => `key-${n}`),
      );
      const rows = await store.db.all(
        `SELECT sequence, id, task_revision FROM results WHERE sequence IN (${shown.map(() => '?').join(', ')})`,
        shown.map(([, a]) => a.sequence),
      );
      throw new Error(
        `${unlogged.length} answered publishes are not in the log as answered: ${JSON.stringify({ answers: shown, receipts, rows, logged: results.length })}`,
      );
    }
    expect(results).toHaveLength(RESULTS);
    expect(byKey.size).toBe(RESULTS);

    await until('every delivery ACKED', () => seen.acked.size >= RESULTS, 120_000).catch(async (error: Error) => {
      // Say where the stream stopped: the deliveries by state, the subscription's counters, the sessions.
      const states = await store.db.all('SELECT state, COUNT(*) AS n FROM deliveries WHERE subscription_id = ? GROUP BY state', [
        subscription.id,
      ]);
      const counters = await store.db.all('SELECT * FROM subscriptions WHERE id = ?', [subscription.id]);
      const sessions = await store.db.all('SELECT * FROM sessions');
      const logs = nodes.map((n, i) => `node ${i}: ${n.text().slice(-2000)}`).join('\n');
      throw new Error(`${error.message} (${seen.acked.size} of ${RESULTS}): ${JSON.stringify({ states, counters, sessions })}\n${logs}`);
    });
    finished = true;
    await Promise.all([...consuming, checking]);
    const conflictsAfter = await conflictCounters();

    // The faults landed mid-stream: results were flowing and being consumed before and after each.
    expect(faults.galeraKill.acked).toBeGreaterThan(0);
    expect(faults.orbitKill.answered).toBeLessThan(RESULTS);
    expect(faults.orbitKill.acked).toBeLessThan(RESULTS);
    expect(publishFailures).toBeGreaterThan(0);
    expect(consumers.reduce((n, c) => n + c.sessions, 0)).toBeGreaterThan(CONSUMERS);

    // The log has no gap, and the scanner skipped no sequence: one ACKED delivery per result.
    const sequences = results.map((r) => Number(r.sequence));
    expect(sequences.at(-1)! - sequences[0]! + 1).toBe(RESULTS);
    const deliveries = await store.db.all(
      'SELECT sequence, event_id, state, lease_epoch FROM deliveries WHERE subscription_id = ? ORDER BY sequence',
      [subscription.id],
    );
    expect(deliveries.map((d) => Number(d.sequence))).toEqual(sequences);
    expect(deliveries.map((d) => String(d.event_id))).toEqual(results.map((r) => String(r.id)));
    expect(deliveries.filter((d) => d.state !== 'ACKED')).toEqual([]);
    // The vanished consumer's leases ran out and were offered again: the overlap check below met redeliveries.
    expect(deliveries.some((d) => Number(d.lease_epoch) > 1)).toBe(true);

    // Seen from the consumers: all events, and never two sessions holding one delivery's valid lease.
    expect(new Set(seen.leases.map((l) => l.eventId))).toEqual(new Set(results.map((r) => String(r.id))));
    const byDelivery = new Map<string, Lease[]>();
    for (const lease of seen.leases) byDelivery.set(lease.deliveryId, [...(byDelivery.get(lease.deliveryId) ?? []), lease]);
    const overlaps: string[] = [];
    for (const [id, leases] of byDelivery) {
      leases.sort((a, b) => a.from - b.from);
      for (let i = 1; i < leases.length; i++) {
        const [before, after] = [leases[i - 1]!, leases[i]!];
        if (after.session !== before.session && after.from < before.until) overlaps.push(`${id}: epoch ${before.epoch} and ${after.epoch}`);
        if (after.epoch <= before.epoch) overlaps.push(`${id}: epoch ${after.epoch} after ${before.epoch}`);
      }
    }
    expect(overlaps).toEqual([]);
    // No frame before its commit: every lease a consumer received was in the cluster when it arrived.
    expect(seen.uncommitted).toEqual([]);
    expect(seen.checked).toBe(seen.leases.length);

    // The cluster is whole again and its three nodes hold the same rows.
    await galera('status');
    const digests = await Promise.all(
      [0, 1, 2].map((i) =>
        onNode(
          i,
          async (conn) => {
            const [rows] = await conn.query(
              `SELECT (SELECT CONCAT(COUNT(*), '/', BIT_XOR(CRC32(CONCAT_WS(',', sequence, id, task_revision)))) FROM results) AS results,
                      (SELECT CONCAT(COUNT(*), '/', BIT_XOR(CRC32(CONCAT_WS(',', id, state, lease_epoch, revision)))) FROM deliveries) AS deliveries,
                      (SELECT CONCAT(COUNT(*), '/', BIT_XOR(CRC32(CONCAT_WS(',', credential_id, scope, idem_key, status)))) FROM idempotency_records) AS receipts`,
            );
            return (rows as unknown[])[0];
          },
          database.name,
        ),
      ),
    );
    expect(digests[1]).toEqual(digests[0]);
    expect(digests[2]).toEqual(digests[0]);

    const conflicts = conflictsAfter.certFailures - conflictsBefore.certFailures + (conflictsAfter.bfAborts - conflictsBefore.bfAborts);
    console.log(
      `galera faults: ${RESULTS} results, ${seen.leases.length} deliver frames, ${publishFailures} failed publish attempts, ` +
        `${conflicts} certification failures and brute-force aborts (${(conflicts / RESULTS).toFixed(3)} per result)`,
    );
  });
});

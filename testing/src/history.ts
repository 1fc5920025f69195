/**
 * @module
 * A history checker in the spirit of Jepsen, for the topology and partition tests: what the
 * publishers were told, what the consumers received and what ACK replies they saw are recorded as
 * they happen (`HistoryLog`); after the case the final database is read (`readFinal`) and the pure
 * `judge` says whether the history is one that the delivery rules allow (spec/README.md, "A
 * delivery's life" and "Sessions and nodes"):
 *
 * - every acknowledged publish key has exactly one event, and every event of the queue has a key;
 * - the result log has no sequence gap (sequences are taken from one head, so they are dense);
 * - every event has one delivery, received by a consumer and ACKED;
 * - no delivery was leased to two sessions at once: an epoch reaches one session only, and a newer
 *   epoch arrives only after the older lease's `lease_until` (a lease ends by ACK or by running out;
 *   a closed session's leases stay until they run out);
 * - no `event.deliver` carried a lease the database does not hold (an epoch above the delivery's
 *   final one) or arrived after its lease had ended (beyond `toleranceMs` of scheduling slack);
 * - every ACK reply a client saw survives: the delivery is ACKED at that epoch.
 *
 * It also reports the redeliveries (receipts beyond the first per delivery) and the time to
 * recover: after each marked fault, the first ACK reply and the longest time without one.
 */
import type { Frame, TestSocket } from './ws-client.ts';

export interface Publish {
  readonly key: string;
  readonly eventId: string;
  readonly sequence: bigint;
}

/** One `event.deliver` as a consumer received it. */
export interface Receipt {
  readonly session: string;
  readonly deliveryId: string;
  readonly eventId: string;
  readonly epoch: bigint;
  /** The lease's end as the frame states it, ms since the epoch. */
  readonly leaseUntil: number;
  /** When it arrived, ms since the epoch (same machine, same clock as the server's). */
  readonly at: number;
}

/** An ACK reply (`ack`, first or deduplicated) a client saw. */
export interface AckReply {
  readonly deliveryId: string;
  readonly epoch: bigint;
  readonly at: number;
}

/** The database after the case: the queue's results, the log's extent, the subscription's deliveries. */
export interface FinalState {
  readonly results: readonly { readonly sequence: bigint; readonly id: string }[];
  readonly log: { readonly min: bigint; readonly max: bigint; readonly count: number };
  readonly deliveries: readonly { readonly id: string; readonly eventId: string; readonly state: string; readonly epoch: bigint }[];
}

export interface HistoryCheck {
  readonly failures: readonly string[];
  /** One line per check, then the figures: what the test prints. */
  readonly lines: readonly string[];
  readonly redeliveries: number;
  /**
   * For each mark, until the next: ms to the first ACK reply after it, and the longest time without
   * one (null: none came).
   */
  readonly recovery: readonly { readonly name: string; readonly ms: number | null; readonly stallMs: number | null }[];
}

/** What a case's clients saw, recorded as it happens. */
export class HistoryLog {
  readonly publishes: Publish[] = [];
  readonly receipts: Receipt[] = [];
  readonly acks: AckReply[] = [];
  readonly marks: { name: string; at: number }[] = [];

  /** A publish answered 201 or 200 (`json`: the response body, `{data: {event}}`). */
  published(key: string, json: any): void {
    const event = json.data.event;
    this.publishes.push({ key, eventId: event.id, sequence: BigInt(event.sequence) });
  }

  /** A fault (or its healing) happens now: the recovery time is measured from here. */
  mark(name: string): void {
    this.marks.push({ name, at: Date.now() });
  }

  /** What a raw test socket received: its `event.deliver` frames and `ack` replies, with arrival times. */
  socket(socket: TestSocket): void {
    for (const { frame, at } of socket.received) this.#frame(socket.sessionId ?? '?', frame, at);
  }

  #frame(session: string, frame: Frame, at: number): void {
    if (frame.type === 'event.deliver') {
      const d = frame.body.delivery;
      this.receipts.push({
        session: frame.session_id ?? session,
        deliveryId: d.id,
        eventId: frame.body.event.id,
        epoch: BigInt(d.lease_epoch),
        leaseUntil: Date.parse(d.lease_until),
        at,
      });
    } else if (frame.type === 'ack') {
      this.acks.push({ deliveryId: frame.body.delivery_id, epoch: BigInt(frame.body.epoch), at });
    }
  }

  /**
   * What the example consumer printed with `ORBIT_OUTPUT=json` (client/examples/consume-results.ts):
   * its `connected`, `delivered` and `acked` lines.
   */
  exampleConsumer(log: readonly string[]): void {
    let session = '?';
    for (const line of log.join('').split('\n')) {
      if (!line.startsWith('{')) continue;
      let entry: any;
      try {
        entry = JSON.parse(line);
      } catch {
        continue;
      }
      const at = Date.parse(entry.at);
      if (entry.type === 'connected') session = entry.session_id;
      else if (entry.type === 'delivered')
        this.receipts.push({
          session,
          deliveryId: entry.delivery_id,
          eventId: entry.event_id,
          epoch: BigInt(entry.epoch),
          leaseUntil: Date.parse(entry.lease_until),
          at,
        });
      else if (entry.type === 'acked') this.acks.push({ deliveryId: entry.delivery_id, epoch: BigInt(entry.epoch), at });
    }
  }
}

interface Rows {
  all(sql: string, params?: unknown[]): Promise<Record<string, unknown>[]>;
}

/** Reads the final state of `subscriptionId` (and its queue's results) through any node's store. */
export async function readFinal(db: Rows, subscriptionId: string): Promise<FinalState> {
  const [sub] = await db.all('SELECT queue_id FROM subscriptions WHERE id = ?', [subscriptionId]);
  const results = await db.all('SELECT sequence, id FROM results WHERE queue_id = ? ORDER BY sequence', [sub!.queue_id]);
  const [log] = await db.all('SELECT MIN(sequence) AS lo, MAX(sequence) AS hi, COUNT(*) AS n FROM results');
  const deliveries = await db.all('SELECT id, event_id, state, lease_epoch FROM deliveries WHERE subscription_id = ?', [subscriptionId]);
  return {
    results: results.map((r) => ({ sequence: BigInt(String(r.sequence)), id: String(r.id) })),
    log: { min: BigInt(String(log!.lo ?? 0)), max: BigInt(String(log!.hi ?? 0)), count: Number(log!.n) },
    deliveries: deliveries.map((d) => ({
      id: String(d.id),
      eventId: String(d.event_id),
      state: String(d.state),
      epoch: BigInt(String(d.lease_epoch)),
    })),
  };
}

/** How many of the subscription's deliveries are ACKED now: the topology tests' progress gauge. */
export async function ackedCount(db: Rows, subscriptionId: string): Promise<number> {
  const [row] = await db.all("SELECT COUNT(*) AS n FROM deliveries WHERE subscription_id = ? AND state = 'ACKED'", [subscriptionId]);
  return Number(row!.n);
}

const few = (items: readonly string[]) => `${items.slice(0, 5).join('; ')}${items.length > 5 ? ` (and ${items.length - 5} more)` : ''}`;

/**
 * Judges a history against the final state. `toleranceMs` is the slack allowed between a frame's
 * sending and its arrival being noted (the consumer's event loop on a busy machine).
 */
export function judge(history: HistoryLog, final: FinalState, options: { toleranceMs?: number } = {}): HistoryCheck {
  const tolerance = options.toleranceMs ?? 250;
  const failures: string[] = [];
  const lines: string[] = [];
  const check = (name: string, problems: string[]) => {
    lines.push(`${problems.length === 0 ? 'ok  ' : 'FAIL'} ${name}${problems.length ? `: ${few(problems)}` : ''}`);
    if (problems.length) failures.push(`${name}: ${few(problems)}`);
  };

  // Publish keys → events.
  const byKey = new Map<string, Set<string>>();
  for (const p of history.publishes) byKey.set(p.key, (byKey.get(p.key) ?? new Set()).add(p.eventId));
  const keyed = new Map<string, string>();
  const keyProblems: string[] = [];
  for (const [key, ids] of byKey) {
    if (ids.size !== 1) keyProblems.push(`key ${key} answered with ${ids.size} events`);
    for (const id of ids) {
      if (keyed.has(id)) keyProblems.push(`event ${id} answers keys ${keyed.get(id)} and ${key}`);
      keyed.set(id, key);
    }
  }
  const logged = new Set(final.results.map((r) => r.id));
  for (const id of keyed.keys()) if (!logged.has(id)) keyProblems.push(`event ${id} (key ${keyed.get(id)}) is not in the log`);
  const first = history.publishes.reduce<bigint | null>((lo, p) => (lo === null || p.sequence < lo ? p.sequence : lo), null);
  const expected = final.results.filter((r) => first !== null && r.sequence >= first);
  for (const r of expected) if (!keyed.has(r.id)) keyProblems.push(`event ${r.id} (sequence ${r.sequence}) has no acknowledged key`);
  check(`every acknowledged publish key has exactly one event (${byKey.size} keys, ${expected.length} events)`, keyProblems);

  // The log is dense.
  const span = final.log.count === 0 ? 0n : final.log.max - final.log.min + 1n;
  check(
    `no sequence gap (sequences ${final.log.min}..${final.log.max}, ${final.log.count} results)`,
    span === BigInt(final.log.count) ? [] : [`${span - BigInt(final.log.count)} sequences missing`],
  );

  // Every event delivered once, received and ACKED.
  const deliveryOf = new Map<string, FinalState['deliveries'][number][]>();
  for (const d of final.deliveries) deliveryOf.set(d.eventId, [...(deliveryOf.get(d.eventId) ?? []), d]);
  const received = new Set(history.receipts.map((r) => r.deliveryId));
  const deliveredProblems: string[] = [];
  for (const r of expected) {
    const ds = deliveryOf.get(r.id) ?? [];
    if (ds.length !== 1) deliveredProblems.push(`event ${r.id} has ${ds.length} deliveries`);
    else if (ds[0]!.state !== 'ACKED') deliveredProblems.push(`delivery ${ds[0]!.id} is ${ds[0]!.state}`);
    else if (!received.has(ds[0]!.id)) deliveredProblems.push(`delivery ${ds[0]!.id} is ACKED but no consumer received it`);
  }
  check(`every event delivered and ACKED (${expected.length} events)`, deliveredProblems);

  // One lease at a time per delivery.
  const byDelivery = new Map<string, Receipt[]>();
  for (const r of history.receipts) byDelivery.set(r.deliveryId, [...(byDelivery.get(r.deliveryId) ?? []), r]);
  const overlapProblems: string[] = [];
  for (const [id, receipts] of byDelivery) {
    const sorted = [...receipts].sort((a, b) => (a.epoch < b.epoch ? -1 : a.epoch > b.epoch ? 1 : a.at - b.at));
    for (let i = 1; i < sorted.length; i++) {
      const [older, newer] = [sorted[i - 1]!, sorted[i]!];
      if (older.epoch === newer.epoch && older.session !== newer.session)
        overlapProblems.push(`delivery ${id} epoch ${newer.epoch} reached sessions ${older.session} and ${newer.session}`);
      else if (older.epoch < newer.epoch && newer.at < older.leaseUntil)
        overlapProblems.push(
          `delivery ${id} epoch ${newer.epoch} arrived ${older.leaseUntil - newer.at} ms before epoch ${older.epoch}'s lease ended`,
        );
    }
  }
  check('no delivery leased to two sessions with overlapping leases', overlapProblems);

  // Every lease sent was committed and still running.
  const finalById = new Map(final.deliveries.map((d) => [d.id, d]));
  const leaseProblems: string[] = [];
  for (const r of history.receipts) {
    const d = finalById.get(r.deliveryId);
    if (!d) leaseProblems.push(`delivery ${r.deliveryId} is not in the database`);
    else if (r.epoch > d.epoch) leaseProblems.push(`delivery ${r.deliveryId} epoch ${r.epoch} sent, the database holds ${d.epoch}`);
    if (r.at > r.leaseUntil + tolerance)
      leaseProblems.push(`delivery ${r.deliveryId} epoch ${r.epoch} arrived ${r.at - r.leaseUntil} ms after its lease ended`);
  }
  check(`no event.deliver for an uncommitted or ended lease (${history.receipts.length} received, slack ${tolerance} ms)`, leaseProblems);

  // ACK replies survive.
  const ackProblems: string[] = [];
  for (const a of history.acks) {
    const d = finalById.get(a.deliveryId);
    if (d?.state !== 'ACKED' || d.epoch !== a.epoch)
      ackProblems.push(`ACK of delivery ${a.deliveryId} epoch ${a.epoch} answered, now ${d ? `${d.state} epoch ${d.epoch}` : 'missing'}`);
  }
  check(`every ACK reply the client saw survives (${history.acks.length} replies)`, ackProblems);

  const redeliveries = history.receipts.length - byDelivery.size;
  // Recovery: from each mark to the next (or the end), the first ACK reply and the longest time
  // without one (a fault often lets in-flight work finish before everything stalls).
  const ackTimes = history.acks.map((a) => a.at).sort((a, b) => a - b);
  const marks = [...history.marks].sort((a, b) => a.at - b.at);
  const recovery = marks.map((m, i) => {
    const until = marks[i + 1]?.at ?? Number.POSITIVE_INFINITY;
    const inWindow = ackTimes.filter((t) => t >= m.at && t < until);
    let stall = 0;
    for (let k = 0; k < inWindow.length; k++) stall = Math.max(stall, inWindow[k]! - (k === 0 ? m.at : inWindow[k - 1]!));
    return { name: m.name, ms: inWindow.length === 0 ? null : inWindow[0]! - m.at, stallMs: inWindow.length === 0 ? null : stall };
  });
  lines.push(`redeliveries: ${redeliveries} (${history.receipts.length} receipts of ${byDelivery.size} deliveries)`);
  for (const r of recovery)
    lines.push(
      `after ${r.name}: ${r.ms === null ? 'no ACK until the next mark' : `first ACK in ${r.ms} ms, longest time without an ACK ${r.stallMs} ms`}`,
    );
  return { failures, lines, redeliveries, recovery };
}

/** Reads the final state, judges the history and prints the check under `name`. */
export async function checkHistory(
  name: string,
  history: HistoryLog,
  db: Rows,
  subscriptionId: string,
  options: { toleranceMs?: number } = {},
): Promise<HistoryCheck> {
  const result = judge(history, await readFinal(db, subscriptionId), options);
  console.log(`history check: ${name}\n  ${result.lines.join('\n  ')}`);
  return result;
}

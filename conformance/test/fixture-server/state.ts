/**
 * @module
 * The fixture's whole state, in memory, and the rules of the seed that act on it: credentials,
 * the result log, subscriptions with their idempotent writes, deliveries and their leases. The
 * HTTP and WebSocket modules only parse, authorize and answer. This is a test fixture, written
 * from spec/rules.md and the contract in spec/ alone: nothing here comes from server/.
 *
 * Longer than 400 lines: one class, `State`, holds every rule that changes the fixture's state, so
 * that the transports stay thin; split, the rules on one delivery's life would live apart from the
 * records they change.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { EventDelivery, ResultEvent, Subscription } from '@orbit/generated';
import { encodeBase64url, type RawJson } from '@orbit/spec/codec';
import type { ErrorCode } from '@orbit/spec/errors';
import type { Faults } from './faults.ts';

export const MAX_BUDGET = 1_000_000;
export const TYPE_ORDER = ['task.cancelled', 'task.failed', 'task.needs_review', 'task.succeeded'];
const SNAPSHOT_STATE: Record<string, string> = {
  'task.succeeded': 'SUCCEEDED',
  'task.failed': 'FAILED',
  'task.cancelled': 'CANCELLED',
  'task.needs_review': 'NEEDS_REVIEW',
  'task.requeued': 'QUEUED',
};

/** An error of the contract's table; the transports turn it into a status or a frame. */
export class FixtureError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
  ) {
    super(message);
  }
}

export const id = (): string => randomBytes(16).toString('hex');
export const iso = (ms: number): string => new Date(ms).toISOString();

export interface Credential {
  readonly id: string;
  readonly token: string;
  readonly namespace: string;
  readonly permissions: ReadonlySet<string>;
  readonly queues: ReadonlySet<string>;
}

export interface StoredResult {
  readonly sequence: bigint;
  readonly queueId: string;
  /** The event as delivered; `snapshot.result` is kept as raw JSON text. */
  readonly event: ResultEvent;
}

export interface Sub {
  readonly id: string;
  readonly queueId: string;
  readonly credentialId: string;
  readonly namespace: string;
  readonly name: string;
  revision: bigint;
  enabled: boolean;
  readonly types: readonly string[];
  cursor: bigint;
  readonly maxPending: number;
  readonly maxAttempts: number;
  readonly createdAt: number;
  updatedAt: number;
  retiredAt?: number;
  retiredSequence?: bigint;
}

export interface Delivery {
  readonly id: string;
  readonly subscriptionId: string;
  readonly eventId: string;
  readonly sequence: bigint;
  revision: bigint;
  state: EventDelivery['state'];
  readonly createdAt: number;
  availableAt: number;
  epoch: bigint;
  leaseUntil?: number;
  digest?: Buffer;
  session?: string;
  attempts: number;
  budget: number;
  acknowledgedAt?: number;
}

interface Receipt {
  readonly digest: string;
  readonly status: number;
  readonly data: unknown;
}

function digestOf(secret: string): Buffer {
  return createHash('sha256').update(secret).digest();
}

export class State {
  readonly credentials = new Map<string, Credential>();
  readonly results: StoredResult[] = [];
  readonly subs = new Map<string, Sub>();
  readonly deliveries = new Map<string, Delivery>();
  /** Results below this sequence were pruned. */
  boundary = 0n;
  head = 0n;
  private readonly receipts = new Map<string, Receipt>();
  private readonly cursorKey = randomBytes(32);

  constructor(
    readonly faults: Faults,
    readonly leaseMs: number,
  ) {}

  // --- credentials ----------------------------------------------------------------------------

  addCredential(
    namespace: string,
    permissions: readonly string[],
    queueNames: readonly string[],
  ): { credential: Credential; queueIds: Record<string, string> } {
    const queueIds: Record<string, string> = {};
    // A queue id is derived from its namespace and name, so credentials of one namespace share queues.
    for (const name of queueNames) queueIds[name] = createHash('sha256').update(`${namespace}/${name}`).digest('hex').slice(0, 32);
    const credential: Credential = {
      id: id(),
      token: `fx_${randomBytes(24).toString('base64url')}`,
      namespace,
      permissions: new Set(permissions),
      queues: new Set(Object.values(queueIds)),
    };
    this.credentials.set(credential.token, credential);
    return { credential, queueIds };
  }

  credentialById(credentialId: string): Credential | undefined {
    for (const c of this.credentials.values()) if (c.id === credentialId) return c;
    return undefined;
  }

  // --- idempotency ----------------------------------------------------------------------------

  /** Runs `effect` once per (credential, operation, key); a replay answers the stored receipt. */
  idempotent(
    credential: Credential,
    scope: string,
    key: string,
    content: string,
    effect: () => { status: number; data: unknown },
  ): { status: number; data: unknown; replay: boolean } {
    const slot = `${credential.id} ${scope} ${key}`;
    const digest = createHash('sha256').update(content).digest('hex');
    const stored = this.receipts.get(slot);
    if (stored) {
      if (stored.digest !== digest) throw new FixtureError('IDEMPOTENCY_CONFLICT', 'this Idempotency-Key was used with other content');
      return { status: stored.status, data: stored.data, replay: true };
    }
    const done = effect();
    this.receipts.set(slot, { digest, ...done });
    return { ...done, replay: false };
  }

  // --- the result log -------------------------------------------------------------------------

  append(
    queueId: string,
    input: {
      type: string;
      task_id: string;
      task_revision: string;
      details?: unknown;
      result?: RawJson;
      effect_uncertain?: boolean;
      current_attempt_id?: string;
    },
  ): ResultEvent {
    this.head += 1n;
    const event: ResultEvent = {
      id: id(),
      sequence: String(this.head),
      type: input.type as ResultEvent['type'],
      aggregate_kind: 'task',
      aggregate_id: input.task_id,
      aggregate_revision: input.task_revision,
      occurred_at: iso(Date.now()),
      details: (input.details ?? {}) as ResultEvent['details'],
      snapshot: {
        schema_version: 1,
        task_id: input.task_id,
        queue_id: queueId,
        state: SNAPSHOT_STATE[input.type] as ResultEvent['snapshot']['state'],
        revision: input.task_revision,
        effect_uncertain: input.effect_uncertain ?? false,
        ...(input.result !== undefined ? { result: input.result } : {}),
        ...(input.current_attempt_id !== undefined ? { current_attempt_id: input.current_attempt_id } : {}),
      },
    };
    this.results.push({ sequence: this.head, queueId, event });
    return event;
  }

  /** Removes the results below `before`, except those an unfinished delivery still needs. */
  prune(before: bigint): void {
    const needed = new Set([...this.deliveries.values()].filter((d) => d.state !== 'ACKED').map((d) => d.eventId));
    for (let i = this.results.length - 1; i >= 0; i--) {
      const r = this.results[i]!;
      if (r.sequence < before && !needed.has(r.event.id)) this.results.splice(i, 1);
    }
    if (before - 1n > this.boundary) this.boundary = before - 1n;
  }

  eventOf(d: Delivery): ResultEvent {
    const found = this.results.find((r) => r.event.id === d.eventId);
    if (!found) throw new FixtureError('UNAVAILABLE', 'the event of this delivery is gone');
    return found.event;
  }

  // --- subscriptions --------------------------------------------------------------------------

  /** The subscription `subId` if `credential` owns it and may still see its queue. */
  owned(credential: Credential, subId: string): Sub {
    const sub = this.subs.get(subId);
    if (!sub || sub.credentialId !== credential.id || !credential.queues.has(sub.queueId))
      throw new FixtureError('NOT_FOUND', 'subscription not found');
    return sub;
  }

  pendingCount(sub: Sub): number {
    let n = 0;
    for (const d of this.deliveries.values()) if (d.subscriptionId === sub.id && d.state !== 'ACKED') n++;
    return n;
  }

  /** Matching results the subscription has not materialized yet. */
  unmaterialized(sub: Sub): StoredResult[] {
    const types = this.faults.has('types-ignored') ? TYPE_ORDER : sub.types;
    return this.results.filter((r) => r.sequence > sub.cursor && r.queueId === sub.queueId && types.includes(r.event.type));
  }

  create(
    credential: Credential,
    body: { name: string; queue_id: string; types?: string[]; from_sequence?: string | null; max_pending?: number; max_attempts?: number },
  ): Sub {
    if (!credential.queues.has(body.queue_id)) throw new FixtureError('NOT_FOUND', 'queue not found');
    const from = body.from_sequence === undefined || body.from_sequence === null ? this.head : BigInt(body.from_sequence);
    if (from > this.head) throw new FixtureError('INVALID_ARGUMENT', 'from_sequence is beyond the committed head');
    if (from < this.boundary) throw new FixtureError('EVENT_HISTORY_EXPIRED', 'from_sequence is before the retention boundary');
    const live = [...this.subs.values()].filter((s) => s.namespace === credential.namespace && s.retiredAt === undefined);
    if (live.some((s) => s.name === body.name)) throw new FixtureError('STATE_CONFLICT', 'the name is taken in this namespace');
    // The fixture deliberately does not enforce the 64-subscription limit (its known-failing file says so).
    const types = body.types && body.types.length > 0 ? TYPE_ORDER.filter((t) => body.types!.includes(t)) : [...TYPE_ORDER];
    const now = Date.now();
    const sub: Sub = {
      id: id(),
      queueId: body.queue_id,
      credentialId: credential.id,
      namespace: credential.namespace,
      name: body.name,
      revision: 1n,
      enabled: true,
      types,
      cursor: from,
      maxPending: body.max_pending || 100,
      maxAttempts: body.max_attempts || 20,
      createdAt: now,
      updatedAt: now,
    };
    this.subs.set(sub.id, sub);
    return sub;
  }

  checkRevision(current: bigint, expected: string): void {
    if (this.faults.has('stale-revision-accepted')) return;
    if (BigInt(expected) !== current)
      throw new FixtureError('STATE_CONFLICT', `expected_revision ${expected} is not the current revision ${current}`);
  }

  configure(sub: Sub, expected: string, enabled: boolean): void {
    if (sub.retiredAt !== undefined) throw new FixtureError('STATE_CONFLICT', 'the subscription is retired');
    this.checkRevision(sub.revision, expected);
    sub.enabled = enabled;
    sub.revision += 1n;
    sub.updatedAt = Date.now();
  }

  retire(sub: Sub, expected: string): void {
    if (sub.retiredAt !== undefined) throw new FixtureError('STATE_CONFLICT', 'the subscription is retired');
    this.checkRevision(sub.revision, expected);
    const blocking = [...this.deliveries.values()].filter(
      (d) =>
        d.subscriptionId === sub.id &&
        d.state !== 'ACKED' &&
        !(d.state === 'PENDING' && this.faults.has('retire-ignores-pending')) &&
        !(d.state === 'EXPIRED' && this.faults.has('retire-ignores-expired')),
    );
    if (blocking.length > 0) throw new FixtureError('STATE_CONFLICT', `${blocking.length} delivery(ies) are not ACKED`);
    if (this.unmaterialized(sub).length > 0) throw new FixtureError('STATE_CONFLICT', 'matching results are not materialized yet');
    const now = Date.now();
    sub.retiredAt = now;
    sub.retiredSequence = this.head;
    sub.enabled = false;
    sub.revision += 1n;
    sub.updatedAt = now;
  }

  retry(d: Delivery, expected: string, additional: number): void {
    if (d.state !== 'EXPIRED')
      throw new FixtureError('STATE_CONFLICT', `the delivery is ${d.state}; only EXPIRED deliveries can be retried`);
    this.checkRevision(d.revision, expected);
    if (d.budget + additional > MAX_BUDGET && !this.faults.has('retry-ignores-budget-cap'))
      throw new FixtureError('STATE_CONFLICT', `the cumulative attempt budget would pass ${MAX_BUDGET}`);
    d.budget += additional;
    d.state = 'PENDING';
    d.availableAt = Date.now();
    d.revision += 1n;
  }

  // --- claims and acknowledgements ------------------------------------------------------------

  /** Expired leases of `sub` go back to PENDING within their budget, else EXPIRED. */
  recover(sub: Sub, now: number): void {
    for (const d of this.deliveries.values()) {
      if (d.subscriptionId !== sub.id || d.state !== 'LEASED' || (d.leaseUntil ?? 0) > now) continue;
      d.state = d.attempts < d.budget ? 'PENDING' : 'EXPIRED';
      d.leaseUntil = undefined;
      d.session = undefined;
      d.revision += 1n;
    }
  }

  /** Creates deliveries for matching results after the cursor, while the backlog allows. */
  materialize(sub: Sub, now: number): void {
    for (const r of this.results) {
      if (r.sequence <= sub.cursor) continue;
      if (r.queueId === sub.queueId && (this.faults.has('types-ignored') ? TYPE_ORDER : sub.types).includes(r.event.type)) {
        if (this.pendingCount(sub) >= sub.maxPending) return;
        const d: Delivery = {
          id: createHash('sha256').update(`${sub.id}/${r.event.id}`).digest('hex').slice(0, 32),
          subscriptionId: sub.id,
          eventId: r.event.id,
          sequence: r.sequence,
          revision: 1n,
          state: 'PENDING',
          createdAt: now,
          availableAt: now,
          epoch: 0n,
          attempts: 0,
          budget: sub.maxAttempts,
        };
        this.deliveries.set(d.id, d);
      }
      sub.cursor = r.sequence;
    }
    if (sub.cursor < this.head) sub.cursor = this.head;
  }

  /** Leases up to `free` PENDING deliveries of `sub` to `session`; returns each with its secret. */
  lease(sub: Sub, session: string, free: number, now: number): Array<{ delivery: Delivery; secret: string }> {
    const out: Array<{ delivery: Delivery; secret: string }> = [];
    const ready = [...this.deliveries.values()]
      .filter((d) => d.subscriptionId === sub.id && d.state === 'PENDING' && d.availableAt <= now)
      .sort((a, b) => (a.sequence < b.sequence ? -1 : 1));
    for (const d of ready.slice(0, Math.max(0, free))) {
      const secret = encodeBase64url(new Uint8Array(randomBytes(32)));
      d.state = 'LEASED';
      d.epoch += 1n;
      d.attempts += 1;
      d.leaseUntil = now + this.leaseMs;
      d.digest = digestOf(secret);
      d.session = session;
      d.revision += 1n;
      out.push({ delivery: d, secret });
    }
    return out;
  }

  /** Leases `session` holds that are still running. */
  held(session: string, now: number): number {
    let n = 0;
    for (const d of this.deliveries.values()) if (d.session === session && d.state === 'LEASED' && (d.leaseUntil ?? 0) > now) n++;
    return n;
  }

  /** An ACK with the newest proof acknowledges; the same proof again is a duplicate; anything else lost the lease. */
  ack(sub: Sub, deliveryId: string, epoch: string, secret: string): { delivery: Delivery; duplicate: boolean } {
    const d = this.deliveries.get(deliveryId);
    const lost = () => new FixtureError('DELIVERY_LEASE_LOST', 'this proof was replaced or is not valid');
    if (!d || d.subscriptionId !== sub.id || d.digest === undefined || BigInt(epoch) !== d.epoch) throw lost();
    const given = digestOf(secret);
    if (!timingSafeEqual(given, d.digest)) throw lost();
    if (d.state === 'ACKED') return { delivery: d, duplicate: true };
    if (this.faults.has('late-ack-refused') && (d.leaseUntil === undefined || d.leaseUntil < Date.now())) throw lost();
    d.state = 'ACKED';
    d.acknowledgedAt = Date.now();
    d.leaseUntil = undefined;
    d.session = undefined;
    d.revision += 1n;
    return { delivery: d, duplicate: false };
  }

  // --- cursors ----------------------------------------------------------------------------

  /** An opaque cursor: the position and the scope it was issued for, with an HMAC. */
  cursor(scope: string, position: string): string {
    const body = Buffer.from(JSON.stringify([scope, position])).toString('base64url');
    return `${body}.${createHmac('sha256', this.cursorKey).update(body).digest('base64url')}`;
  }

  /** The position of a cursor issued for `scope`; anything else is INVALID_ARGUMENT. */
  position(scope: string, cursor: string): string {
    const [body, mac, extra] = cursor.split('.');
    const bad = () => new FixtureError('INVALID_ARGUMENT', 'the cursor is not valid here');
    if (!body || !mac || extra !== undefined) throw bad();
    const expected = createHmac('sha256', this.cursorKey).update(body).digest('base64url');
    if (mac.length !== expected.length || !timingSafeEqual(Buffer.from(mac), Buffer.from(expected))) throw bad();
    const [s, position] = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as [string, string];
    if (s !== scope) throw bad();
    return position;
  }

  // --- wire views -----------------------------------------------------------------------------

  subscriptionView(sub: Sub): Subscription {
    return {
      id: sub.id,
      queue_id: sub.queueId,
      credential_id: sub.credentialId,
      name: sub.name,
      revision: String(sub.revision),
      enabled: sub.enabled,
      types: [...sub.types] as Subscription['types'],
      cursor_sequence: String(sub.cursor),
      pending_count: this.pendingCount(sub),
      max_pending: sub.maxPending,
      max_attempts: sub.maxAttempts,
      created_at: iso(sub.createdAt),
      updated_at: iso(sub.updatedAt),
      ...(sub.retiredAt !== undefined ? { retired_at: iso(sub.retiredAt), retired_sequence: String(sub.retiredSequence) } : {}),
    };
  }

  deliveryView(d: Delivery): EventDelivery {
    return {
      id: d.id,
      subscription_id: d.subscriptionId,
      event_id: d.eventId,
      sequence: String(d.sequence),
      revision: String(d.revision),
      state: d.state,
      created_at: iso(d.createdAt),
      available_at: iso(d.availableAt),
      lease_epoch: String(d.epoch),
      ...(d.state === 'LEASED' && d.leaseUntil !== undefined ? { lease_until: iso(d.leaseUntil) } : {}),
      attempts: d.attempts,
      attempt_budget: d.budget,
      ...(d.state === 'ACKED' && d.acknowledgedAt !== undefined ? { acknowledged_at: iso(d.acknowledgedAt) } : {}),
    };
  }
}

/**
 * @module
 * What a case works with: HTTP with raw bytes, WebSocket with raw frames, a result publisher,
 * credentials by role, fixtures (subscriptions that are retired again after the case), checks
 * that fail with a readable message, and fast-check properties that report their seed and the
 * request or frame they actually sent. Everything a case sends or receives lands in its evidence.
 * Responses and frames are typed with the generated types and checked with the generated
 * validators; nothing here restates a shape of the contract.
 */
import { createHash } from 'node:crypto';
import * as generated from '@orbit/generated';
import type {
  AckReplyFrame,
  AckRequestFrame,
  DeliverFrame,
  DeliveryDetail,
  DeliveryList,
  EventDelivery,
  Subscription,
  SubscriptionResult,
  Validator,
  WelcomeFrame,
} from '@orbit/generated';
import {
  validateDeliveryDetail,
  validateDeliveryList,
  validateErrorEnvelope,
  validateSubscription,
  validateSubscriptionResult,
} from '@orbit/generated';
import { ERROR_TABLE, type ErrorCode } from '@orbit/spec/errors';
import fc from 'fast-check';
import type { Role, SuiteConfig, Timing } from './config.ts';
import { CheckFailure, SkipSignal } from './errors.ts';
import { type Evidence, EvidenceLog } from './evidence.ts';
import { type HttpResponse, sendHttp } from './http.ts';
import { isObject, memberAt } from './members.ts';
import { type PublishedEvent, type PublishInput, publishResult, randomId } from './publisher.ts';
import { runCommand, substitute } from './shell.ts';
import { type AckReply, EventConnection, isDeliver, type OpenOptions, type Received, repliesTo, type UpgradeOutcome } from './ws.ts';

/** The resolved environment of one run: a configuration with its credentials and queues filled in. */
export interface RunEnvironment {
  readonly config: SuiteConfig;
  /** Values for `{placeholders}` in commands (`port`, `tmpdir`). */
  readonly vars: Readonly<Record<string, string>>;
  /** The run's seed; each property derives its own from it and the case id. */
  readonly seed: number;
  readonly numRuns: number;
  /** A short random tag that makes names and idempotency keys unique per run. */
  readonly runTag: string;
}

export interface RequestOptions {
  /** A value is sent as JSON; a string or bytes are sent verbatim. */
  readonly body?: unknown;
  readonly key?: string;
  readonly headers?: Readonly<Record<string, string>>;
  /** `null` sends no Content-Type; default `application/json` when there is a body. */
  readonly contentType?: string | null;
  readonly timeoutMs?: number;
}

/** Fields of an event.ack body to send instead of the proof's own, with any value. */
export type AckOverride = { readonly [K in keyof AckRequestFrame['body']]?: unknown };

let counter = 0;

/** The name of a generated validator, for messages (`validateSubscription` -> `Subscription`). */
const VALIDATOR_NAMES = new Map<unknown, string>(
  Object.entries(generated)
    .filter(([name]) => name.startsWith('validate'))
    .map(([name, fn]) => [fn, name.slice('validate'.length)]),
);

/** JSON text with sorted member names, for order-independent comparison. */
export function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'undefined';
}

/** A 31-bit seed for one property, fixed by the run seed and the case id. */
export function propertySeed(runSeed: number, caseId: string): number {
  return createHash('sha256').update(`${runSeed}:${caseId}`).digest().readUInt32BE(0) & 0x7fffffff;
}

/** The last thing the client sent in `items` (an HTTP request or a frame), as text. */
export function lastSent(items: readonly Evidence[]): string {
  for (let i = items.length - 1; i >= 0; i--) {
    const e = items[i]!;
    if (e.kind === 'http') return `${e.method} ${e.target}${e.requestBody !== undefined ? ` ${e.requestBody}` : ''}`;
    if (e.kind === 'ws-frame' && e.direction === 'sent') return `${e.binary ? '(binary frame) ' : 'frame '}${e.text}`;
  }
  return '(nothing was sent)';
}

export class CaseContext {
  readonly config: SuiteConfig;
  readonly timing: Timing;
  private currentLog: EvidenceLog;
  private readonly connections: EventConnection[] = [];
  /** Every connection of the case, also closed ones: their deliveries are proofs for cleanup. */
  private readonly allConnections: EventConnection[] = [];
  private readonly owned: Array<{ role: Role; id: string }> = [];
  /** Problems found while cleaning up (reported, never a failure). */
  readonly cleanupNotes: string[] = [];
  /** What a MAY case observed (its `info` outcome), or a remark of any case. */
  readonly observations: string[] = [];

  constructor(
    readonly env: RunEnvironment,
    readonly caseId: string,
    readonly evidence: EvidenceLog = new EvidenceLog(),
  ) {
    this.config = env.config;
    this.timing = env.config.timing;
    this.currentLog = evidence;
    this.redactInto(evidence);
  }

  private redactInto(log: EvidenceLog): void {
    for (const [role, credential] of Object.entries(this.config.credentials))
      if (credential) log.redact(credential.token, `<token:${role}>`);
  }

  get log(): EvidenceLog {
    return this.currentLog;
  }

  /** Runs `fn` with its traffic recorded in `log` instead of the case's evidence. */
  async withEvidence<T>(log: EvidenceLog, fn: () => Promise<T>): Promise<T> {
    const previous = this.currentLog;
    this.currentLog = log;
    try {
      return await fn();
    } finally {
      this.currentLog = previous;
    }
  }

  // --- configuration ------------------------------------------------------------------------

  get queue(): string {
    return this.config.queues.primary!;
  }

  /** A second queue of the full credential; skips the case when none is configured. */
  get secondaryQueue(): string {
    return this.config.queues.secondary ?? this.skip('the configuration has no queues.secondary');
  }

  get otherNamespaceQueue(): string {
    return this.config.queues.otherNamespace ?? this.skip('the configuration has no queues.otherNamespace');
  }

  token(role: Role): string {
    return this.config.credentials[role]?.token ?? this.skip(`the configuration has no credentials.${role}`);
  }

  credentialId(role: Role): string | undefined {
    return this.config.credentials[role]?.credentialId;
  }

  skip(reason: string): never {
    throw new SkipSignal(reason);
  }

  /** Records what the case observed: the message of an `info` outcome. */
  observe(text: string): void {
    this.observations.push(text);
    this.log.note(`observed: ${text}`);
  }

  /** A subscription name unique to this run. */
  name(prefix = 'cf'): string {
    return `${prefix}-${this.env.runTag}-${++counter}`;
  }

  /** An Idempotency-Key unique to this run, so that a rerun against the same server never replays it. */
  key(prefix = 'cf'): string {
    return `${prefix}-${this.env.runTag}-${randomId()}`;
  }

  /** Time to wait for a reply frame or a state change that should be immediate. */
  get replyMs(): number {
    return Math.max(5_000, this.timing.writeTimeoutMs);
  }

  /** Time to wait for a delivery of a freshly published result. */
  get deliverMs(): number {
    return 10_000;
  }

  /** How long "nothing happens" is observed; shorter than a lease so no expiry interferes. */
  get quietMs(): number {
    return Math.max(100, Math.min(this.timing.quietMs, Math.floor(this.timing.leaseDurationMs * 0.6)));
  }

  /**
   * A "nothing happens" window that ends before the lease of `deliver` could run out (so a
   * legitimate redelivery never counts against the server); 0 when too little time is left.
   */
  quietWithinLease(deliver: Received<DeliverFrame>): number {
    const left = deliver.$at + Math.floor(this.timing.leaseDurationMs * 0.8) - Date.now();
    const ms = Math.max(0, Math.min(this.quietMs, left));
    if (ms < this.quietMs) this.log.note(`quiet window shortened to ${ms} ms to stay within the lease`);
    return ms;
  }

  /** Upper bound for an expired lease to be recovered and offered again. */
  get redeliveryMs(): number {
    return 2 * this.timing.leaseDurationMs + this.timing.redeliveryBackoffMs + 5_000;
  }

  /**
   * Skips the case when the lease the server actually granted (its `lease_until`, read against
   * the deliver frame's arrival) runs out later than the case can wait: a case that waits for an
   * expiry could otherwise only time out, or pass without testing anything.
   */
  requireLeaseWithin(deliver: Received<DeliverFrame>, budgetMs: number): void {
    const until = Date.parse(deliver.body.delivery.lease_until ?? '');
    const lease = Number.isFinite(until) ? until - Date.parse(deliver.body.delivery.created_at) : Number.NaN;
    const granted = Math.max(Number.isFinite(lease) ? lease : 0, 0);
    if (granted > budgetMs)
      this.skip(
        `the server granted a lease of about ${granted} ms (lease_until ${deliver.body.delivery.lease_until}); this case can wait ` +
          `${budgetMs} ms: ` +
          `start the server with a shorter lease and set timing.leaseDurationMs to it`,
      );
  }

  // --- checks -------------------------------------------------------------------------------

  check(condition: unknown, message: string): asserts condition {
    if (!condition) throw new CheckFailure(message);
  }

  /** Deep equality of JSON values (member order does not matter). */
  equal(actual: unknown, expected: unknown, what: string): void {
    if (canonical(actual) !== canonical(expected))
      throw new CheckFailure(`${what}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`);
  }

  /** Checks `value` against a generated validator (`validateSubscription`, ...). */
  validate<T>(validator: Validator<T>, value: unknown, what: string): asserts value is T {
    if (validator(value)) return;
    const e = validator.errors?.[0];
    throw new CheckFailure(
      `${what} does not match ${VALIDATOR_NAMES.get(validator) ?? 'the schema'}: ${e?.instancePath || '(root)'} ${e?.message ?? ''}: ` +
        `${JSON.stringify(value)?.slice(0, 400)}`,
    );
  }

  private describe(res: HttpResponse): string {
    return `HTTP ${res.status} ${res.text.slice(0, 300)}`;
  }

  /** A successful envelope with `status`; returns `data`, checked by `validator`. */
  expectData<T>(res: HttpResponse, status: number, what: string, validator: Validator<T>): T {
    if (res.status !== status) throw new CheckFailure(`${what}: expected HTTP ${status}, got ${this.describe(res)}`);
    const body = res.json;
    if (!isObject(body) || !('data' in body))
      throw new CheckFailure(`${what}: expected a {request_id, data} envelope, got ${res.text.slice(0, 300)}`);
    this.validate(validator, body.data, `${what}: data`);
    return body.data;
  }

  /** An error envelope with the seed's status for `code`. */
  expectError(res: HttpResponse, code: ErrorCode, what: string): void {
    const status = ERROR_TABLE[code].status;
    if (res.status !== status || res.errorCode !== code) {
      throw new CheckFailure(`${what}: expected HTTP ${status} ${code}, got ${this.describe(res)}`);
    }
    this.validate(validateErrorEnvelope, res.json, `${what}: the error body`);
  }

  /** An error envelope with any of `codes` (where the seed leaves the choice open). */
  expectOneOf(res: HttpResponse, codes: readonly ErrorCode[], what: string): ErrorCode {
    const match = codes.find((c) => c === res.errorCode && ERROR_TABLE[c].status === res.status);
    if (!match)
      throw new CheckFailure(
        `${what}: expected one of ${codes.map((c) => `${ERROR_TABLE[c].status} ${c}`).join(', ')}, got ${this.describe(res)}`,
      );
    this.validate(validateErrorEnvelope, res.json, `${what}: the error body`);
    return match;
  }

  /** An error frame with `code`. */
  expectFrameError(frame: Received, code: ErrorCode, what: string): void {
    if (frame.type !== 'error' || frame.error.code !== code)
      throw new CheckFailure(`${what}: expected an error frame ${code}, got ${frame.$text}`);
  }

  /**
   * The request `messageId` was refused: either an error frame (reply_to = messageId) with one of
   * `codes`, or the connection closed with 1008 (an invalid envelope). Returns which.
   */
  async expectRefused(conn: EventConnection, messageId: string, codes: readonly ErrorCode[], what: string): Promise<'error' | 'closed'> {
    const frame = await conn.poll(repliesTo(messageId), this.replyMs);
    if (frame) {
      if (frame.type !== 'error' || !codes.includes(frame.error.code))
        throw new CheckFailure(`${what}: expected an error frame ${codes.join(' or ')} or a 1008 close, got ${frame.$text}`);
      return 'error';
    }
    const closed = await conn.waitClose(this.replyMs);
    if (!closed)
      throw new CheckFailure(
        `${what}: expected an error frame ${codes.join(' or ')} or a 1008 close; got neither within ${this.replyMs} ms`,
      );
    if (closed.code !== 1008) throw new CheckFailure(`${what}: expected a 1008 close, got ${closed.code} ${closed.reason}`);
    return 'closed';
  }

  /** Waits until the server closes `conn`; fails with what arrived when it stays open. */
  async expectClosed(
    conn: EventConnection,
    timeoutMs: number,
    what: string,
    codes?: readonly number[],
  ): Promise<{ code: number; reason: string }> {
    const closed = await conn.waitClose(timeoutMs);
    if (!closed) throw new CheckFailure(`${what}: expected the server to close the connection within ${timeoutMs} ms; it stayed open`);
    if (codes && !codes.includes(closed.code))
      throw new CheckFailure(`${what}: expected close code ${codes.join(' or ')}, got ${closed.code} ${closed.reason}`);
    return closed;
  }

  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => setTimeout(resolve, ms));
  }

  /** Polls `probe` until it returns a truthy value; fails after `timeoutMs` naming `what`. */
  async eventually<T>(probe: () => Promise<T | null | undefined | false>, timeoutMs: number, what: string, intervalMs = 100): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = await probe();
      if (value) return value;
      if (Date.now() > deadline) throw new CheckFailure(`timed out after ${timeoutMs} ms waiting for ${what}`);
      await this.sleep(intervalMs);
    }
  }

  // --- HTTP ---------------------------------------------------------------------------------

  /** One request as `role` (null: no Authorization header). */
  request(role: Role | null, method: string, target: string, options: RequestOptions = {}): Promise<HttpResponse> {
    const headers: Record<string, string> = {};
    if (role !== null) headers.authorization = `Bearer ${this.token(role)}`;
    if (options.key !== undefined) headers['idempotency-key'] = options.key;
    let body: string | Uint8Array | undefined;
    if (options.body !== undefined) {
      body = typeof options.body === 'string' || options.body instanceof Uint8Array ? options.body : JSON.stringify(options.body);
      const type = options.contentType === undefined ? 'application/json' : options.contentType;
      if (type !== null) headers['content-type'] = type;
    }
    Object.assign(headers, options.headers ?? {});
    return sendHttp(
      this.config.baseUrl,
      { method, target, headers, ...(body !== undefined ? { body } : {}), ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}) },
      this.log,
    );
  }

  get(role: Role | null, target: string, options: RequestOptions = {}): Promise<HttpResponse> {
    return this.request(role, 'GET', target, options);
  }

  /** A POST with a fresh Idempotency-Key unless `options.key` is given. */
  post(role: Role | null, target: string, body: unknown, options: RequestOptions = {}): Promise<HttpResponse> {
    return this.request(role, 'POST', target, { key: this.key(), ...options, body });
  }

  // --- fixtures -----------------------------------------------------------------------------

  /** A valid create body: a unique name on the primary queue, plus `fields`. */
  subscriptionBody(fields: Record<string, unknown> = {}): Record<string, unknown> {
    return { name: this.name(), queue_id: this.queue, ...fields };
  }

  /** Remembers a subscription so it is retired after the case. */
  own(role: Role, id: string): void {
    if (!this.owned.some((o) => o.id === id)) this.owned.push({ role, id });
  }

  /** Owns the subscription a (possibly wrongly) successful create response carries, if any. */
  ownCreated(role: Role, res: HttpResponse): void {
    const id = memberAt(res.json, 'data', 'subscription', 'id');
    if (res.status >= 200 && res.status < 300 && typeof id === 'string') this.own(role, id);
  }

  /** Creates a subscription (201 expected) owned by `role` and retired after the case. */
  async createSubscription(fields: Record<string, unknown> = {}, role: Role = 'full'): Promise<Subscription> {
    const res = await this.post(role, '/v1/subscriptions', this.subscriptionBody(fields));
    this.ownCreated(role, res);
    return this.expectData(res, 201, 'setup: create a subscription', validateSubscriptionResult).subscription;
  }

  async getSubscription(id: string, role: Role = 'full'): Promise<Subscription> {
    return this.expectData(await this.get(role, `/v1/subscriptions/${id}`), 200, `GET /v1/subscriptions/${id}`, validateSubscription);
  }

  /** Pauses or resumes with the current revision; returns the new snapshot. */
  async configure(id: string, enabled: boolean, role: Role = 'full'): Promise<Subscription> {
    const current = await this.getSubscription(id, role);
    const res = await this.post(role, `/v1/subscriptions/${id}:configure`, {
      expected_revision: current.revision,
      enabled,
      reason: 'conformance',
    });
    return this.expectData(res, 200, `configure enabled=${enabled}`, validateSubscriptionResult).subscription;
  }

  /** Retires with the current revision (200 expected). */
  async retire(id: string, role: Role = 'full'): Promise<SubscriptionResult> {
    const current = await this.getSubscription(id, role);
    const res = await this.post(role, `/v1/subscriptions/${id}:retire`, { expected_revision: current.revision, reason: 'conformance' });
    return this.expectData(res, 200, 'retire', validateSubscriptionResult);
  }

  async deliveryDetail(subscriptionId: string, deliveryId: string, role: Role = 'full'): Promise<DeliveryDetail> {
    const res = await this.get(role, `/v1/subscriptions/${subscriptionId}/deliveries/${deliveryId}`);
    return this.expectData(res, 200, `GET delivery ${deliveryId}`, validateDeliveryDetail);
  }

  async listDeliveries(subscriptionId: string, query = '', role: Role = 'full'): Promise<DeliveryList> {
    const res = await this.get(role, `/v1/subscriptions/${subscriptionId}/deliveries${query ? `?${query}` : ''}`);
    return this.expectData(res, 200, `list deliveries ${query}`, validateDeliveryList);
  }

  /** Polls the delivery until its state is `state`. */
  async waitForDeliveryState(
    subscriptionId: string,
    deliveryId: string,
    state: EventDelivery['state'],
    timeoutMs: number,
  ): Promise<EventDelivery> {
    return this.eventually(
      async () => {
        const detail = await this.deliveryDetail(subscriptionId, deliveryId);
        return detail.delivery.state === state ? detail.delivery : null;
      },
      timeoutMs,
      `delivery ${deliveryId} to become ${state}`,
      100,
    );
  }

  /** Appends one result through the configured publisher. */
  publish(input: PublishInput): Promise<PublishedEvent> {
    return publishResult(
      {
        config: this.config.publish,
        baseUrl: this.config.baseUrl,
        publisherToken: this.config.credentials.publisher?.token,
        primaryQueue: this.queue,
        cwd: this.config.cwd,
        vars: this.env.vars,
        keyPrefix: `cf-pub-${this.env.runTag}`,
      },
      input,
      this.log,
    );
  }

  /** Runs a command of the configuration with `{placeholders}`; a non-zero exit fails the case as a setup error. */
  private async configured(what: string, template: string, vars: Record<string, string>): Promise<void> {
    const command = substitute(template, { ...this.env.vars, ...vars });
    const env = Object.fromEntries(Object.entries(vars).map(([k, v]) => [`ORBIT_CONFORMANCE_${k.toUpperCase()}`, v]));
    const result = await runCommand(command, { cwd: this.config.cwd, env });
    this.log.note(`${what} command exited ${result.code}: ${result.stdout}${result.stderr}`);
    if (result.code !== 0)
      throw new CheckFailure(`setup: the ${what} command failed (exit ${result.code}): ${result.stderr.slice(0, 300)}`);
  }

  /** Runs the retention command: results below `beforeSequence` are removed. */
  async prune(beforeSequence: string): Promise<void> {
    const retention = this.config.retention ?? this.skip('the configuration has no retention.command');
    await this.configured('retention', retention.command, { before_sequence: beforeSequence });
  }

  /** Runs the attempt-budget command: the delivery's attempts and attempt_budget are set directly. */
  async setAttemptBudget(subscriptionId: string, deliveryId: string, attempts: number, budget: number): Promise<void> {
    const hook = this.config.attemptBudget ?? this.skip('the configuration has no attemptBudget.command');
    await this.configured('attempt-budget', hook.command, {
      subscription_id: subscriptionId,
      delivery_id: deliveryId,
      attempts: String(attempts),
      attempt_budget: String(budget),
    });
  }

  // --- WebSocket ----------------------------------------------------------------------------

  /** Attempts an upgrade as `role` (null: no token); the connection, if any, is closed after the case. */
  async upgrade(role: Role | null, options: Omit<OpenOptions, 'token'> = {}): Promise<UpgradeOutcome> {
    const outcome = await EventConnection.open(
      this.config.baseUrl,
      { ...options, token: role === null ? null : this.token(role) },
      this.log,
    );
    if (outcome.kind === 'open') {
      this.connections.push(outcome.conn);
      this.allConnections.push(outcome.conn);
    }
    return outcome;
  }

  /** Opens an event connection as `role`; a refusal fails the case. */
  async connect(role: Role = 'full', options: Omit<OpenOptions, 'token'> = {}): Promise<EventConnection> {
    const outcome = await this.upgrade(role, options);
    if (outcome.kind !== 'open')
      throw new CheckFailure(`setup: the upgrade as ${role} was refused: HTTP ${outcome.status} ${outcome.body.slice(0, 300)}`);
    return outcome.conn;
  }

  /**
   * Connects and binds to `subscriptionId`; the welcome must come. Like a well-behaved client the
   * connection then pings at the announced heartbeat interval, unless `keepAlive` is false.
   */
  async bind(
    subscriptionId: string,
    capacity = 1,
    role: Role = 'full',
    options: { keepAlive?: boolean } = {},
  ): Promise<{ conn: EventConnection; welcome: Received<WelcomeFrame> }> {
    const conn = await this.connect(role);
    const welcome = await conn.hello(subscriptionId, capacity, this.replyMs);
    if (welcome.type !== 'events.welcome') throw new CheckFailure(`setup: expected events.welcome, got ${welcome.$text}`);
    if (options.keepAlive !== false)
      conn.startHeartbeat(
        Math.min(welcome.body.heartbeat_interval_ms || this.timing.heartbeatIntervalMs, Math.floor(this.timing.idleTimeoutMs / 3)),
      );
    return { conn, welcome };
  }

  /** The next event.deliver on `conn`. */
  deliver(conn: EventConnection, timeoutMs = this.deliverMs, what = 'an event.deliver'): Promise<Received<DeliverFrame>> {
    return conn.next(isDeliver, timeoutMs, what);
  }

  /** Sends event.ack with the proof of `deliver` (any field overridable, also by an invalid value); returns the message_id. */
  sendAck(conn: EventConnection, deliver: Received<DeliverFrame>, override: AckOverride = {}): string {
    const proof: AckRequestFrame['body'] = {
      delivery_id: deliver.body.delivery.id,
      epoch: deliver.body.delivery.lease_epoch,
      lease_secret: deliver.body.lease_secret,
    };
    return conn.send('event.ack', { ...proof, ...override });
  }

  /** ACKs `deliver` on `conn` and returns the reply frame (an ack or an error). */
  ack(conn: EventConnection, deliver: Received<DeliverFrame>, override: AckOverride = {}): Promise<AckReply> {
    return conn.ackReply(this.sendAck(conn, deliver, override), this.replyMs);
  }

  /** ACKs `deliver` and fails unless the reply is an ack; returns it. */
  async acked(conn: EventConnection, deliver: Received<DeliverFrame>, what = 'ACK'): Promise<Received<AckReplyFrame>> {
    const reply = await this.ack(conn, deliver);
    if (reply.type !== 'ack') throw new CheckFailure(`${what}: expected an ack reply, got ${reply.$text}`);
    return reply;
  }

  /**
   * The newest event.deliver of the same delivery seen on any connection of the case: where a
   * slow run let the lease run out and the delivery was sent again, this is the proof to use.
   */
  latest(deliver: Received<DeliverFrame>): Received<DeliverFrame> {
    let best = deliver;
    for (const c of this.allConnections) {
      for (const f of c.received) {
        if (
          isDeliver(f) &&
          f.body.delivery.id === deliver.body.delivery.id &&
          BigInt(f.body.delivery.lease_epoch) > BigInt(best.body.delivery.lease_epoch)
        )
          best = f;
      }
    }
    if (best !== deliver)
      this.log.note(
        `the lease of ${deliver.body.delivery.id} ran out during the case; using the newer proof of epoch ` +
          `${best.body.delivery.lease_epoch}`,
      );
    return best;
  }

  /** Every event.deliver received on any connection of the case (the proofs cleanup ACKs). */
  deliveries(): Array<Received<DeliverFrame>> {
    return this.allConnections.flatMap((c) => c.received.filter(isDeliver));
  }

  /** Every server-frame violation seen on this case's connections. */
  frameViolations(): string[] {
    return this.allConnections.flatMap((c) => c.violations.map((v) => `connection ${c.id}: ${v}`));
  }

  // --- properties ---------------------------------------------------------------------------

  /**
   * Runs a fast-check property; `predicate` throws (a CheckFailure) when the server misbehaves.
   * On failure the case fails with the request or frame the failing run sent last (after
   * shrinking), the seed and the replay line, and the evidence of that run only.
   */
  async property<T>(arbitrary: fc.Arbitrary<T>, predicate: (value: T) => Promise<void>, options: { numRuns?: number } = {}): Promise<void> {
    const seed = propertySeed(this.env.seed, this.caseId);
    const numRuns = options.numRuns ?? this.env.numRuns;
    const outer = this.currentLog;
    let lastFailure: EvidenceLog | null = null;
    let runs = 0;
    const details = await fc.check(
      fc.asyncProperty(arbitrary, async (value) => {
        runs++;
        const runLog = new EvidenceLog();
        this.redactInto(runLog);
        this.currentLog = runLog;
        const mark = this.connections.length;
        try {
          await predicate(value);
        } catch (error) {
          lastFailure = runLog;
          throw error;
        } finally {
          this.currentLog = outer;
          await Promise.all(this.connections.splice(mark).map((c) => c.close()));
        }
      }),
      { seed, numRuns, plugins: [fc.interruptAfterTimeLimit(45_000, { failOnInterrupt: true })] },
    );
    outer.note(`property: ${runs} runs (numRuns ${numRuns}, seed ${seed})`);
    const replay = `replay: --seed ${this.env.seed} --num-runs ${numRuns} --only ${this.caseId}`;
    if (!details.failed) return;
    if (details.counterexample === null)
      throw new CheckFailure(`property stopped after ${details.numRuns} run(s) without a counterexample (time limit of 45 s); ${replay}`);
    const failing = (lastFailure as EvidenceLog | null)?.items ?? [];
    const sent = lastSent(failing);
    const value = fc.stringify(details.counterexample);
    const failure = details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
    outer.note(`evidence of the shrunk counterexample (generated value ${value}):`);
    for (const item of failing) outer.add(item);
    throw new CheckFailure(
      `property failed after ${details.numRuns} run(s) and ${details.numShrinks} shrink(s); counterexample, as sent: ` +
        `${sent}\n${failure}\n` +
        `${replay} (property seed ${details.seed}, path ${details.counterexamplePath})`,
      'assert',
      { seed: details.seed, path: details.counterexamplePath, sent, value, numRuns: details.numRuns, numShrinks: details.numShrinks },
    );
  }

  // --- teardown -----------------------------------------------------------------------------

  async closeConnections(): Promise<void> {
    await Promise.all(this.connections.splice(0).map((c) => c.close()));
  }

  /** Closes connections and retires every subscription the case created (see `cleanup.ts`). */
  async teardown(
    retire: (ctx: CaseContext, role: Role, id: string, proofs: Array<Received<DeliverFrame>>) => Promise<string | null>,
  ): Promise<void> {
    const proofs = this.deliveries();
    await this.closeConnections();
    for (const { role, id } of this.owned.splice(0).reverse()) {
      try {
        const note = await retire(this, role, id, proofs);
        if (note) this.cleanupNotes.push(note);
      } catch (error) {
        this.cleanupNotes.push(`subscription ${id}: cleanup failed: ${(error as Error).message}`);
      }
    }
    await this.closeConnections();
  }
}

/**
 * @module
 * The HTTP part of a case's context: requests as a role with raw bodies, the envelope checks
 * (`{request_id, data}` checked by a generated validator, error envelopes with the status of their
 * code), and the fixtures: subscriptions that are retired again after the case, deliveries read
 * back, results published, and the configured retention and attempt-budget commands.
 */
import type { DeliveryDetail, DeliveryList, EventDelivery, Subscription, SubscriptionResult, Validator } from '@orbit/generated';
import {
  validateDeliveryDetail,
  validateDeliveryList,
  validateErrorEnvelope,
  validateSubscription,
  validateSubscriptionResult,
} from '@orbit/generated';
import { ERROR_TABLE, type ErrorCode } from '@orbit/spec/errors';
import type { Role } from './config.ts';
import { ContextBase } from './context-base.ts';
import { CheckFailure } from './errors.ts';
import { type HttpResponse, sendHttp } from './http.ts';
import { isObject, memberAt } from './members.ts';
import { type PublishedEvent, type PublishInput, publishResult } from './publisher.ts';
import { runCommand, substitute } from './shell.ts';

export interface RequestOptions {
  /** A value is sent as JSON; a string or bytes are sent verbatim. */
  readonly body?: unknown;
  readonly key?: string;
  readonly headers?: Readonly<Record<string, string>>;
  /** `null` sends no Content-Type; default `application/json` when there is a body. */
  readonly contentType?: string | null;
  readonly timeoutMs?: number;
  /** Hold the body back until this long has passed without an answer to the head (see `HttpRequest`). */
  readonly answerBeforeBodyMs?: number;
}

/** HTTP, envelope checks and fixtures, on top of the environment and checks of `ContextBase`. */
export class HttpContext extends ContextBase {
  /** The subscriptions the case created, retired after it (see `CaseContext.teardown`). */
  protected readonly owned: Array<{ role: Role; id: string }> = [];

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
      {
        method,
        target,
        headers,
        ...(body !== undefined ? { body } : {}),
        ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}),
        ...(options.answerBeforeBodyMs !== undefined ? { answerBeforeBodyMs: options.answerBeforeBodyMs } : {}),
      },
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
}

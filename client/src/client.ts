/**
 * @module
 * The management client (spec/rules.md#s1-9 to #s1-16; the result seam: spec/README.md, The result
 * log): one method per operation of `spec/openapi.yaml`. Every answer is parsed with the strict
 * codec and checked by the generated envelope validator; errors are `OrbitError`s carrying the
 * server's code, HTTP status and request_id. Writes take the caller's Idempotency-Key explicitly;
 * transport failures (network error, timeout, 503 UNAVAILABLE, 429) are retried with the same key
 * and the same body bytes, a bounded number of times, with jittered exponential backoff.
 *
 * Longer than 400 lines: one short method per operation of spec/openapi.yaml on one class, which
 * all share its transport and retry code; kept together, the class reads as the API's index.
 */
import { stringify, type RawJson } from '@orbit/spec/codec';
import {
  validateDeliveryDetailEnvelope,
  validateDeliveryListEnvelope,
  validateDeliveryRetryResultEnvelope,
  validateErrorEnvelope,
  validateHealthEnvelope,
  validatePublishResultEnvelope,
  validatePublishResultsEnvelope,
  validateSubscriptionEnvelope,
  validateSubscriptionHistoryEnvelope,
  validateSubscriptionListEnvelope,
  validateSubscriptionResultEnvelope,
  type ConfigureSubscriptionRequest,
  type CreateSubscriptionRequest,
  type DeliveryState,
  type ErrorEnvelope,
  type ErrorObject,
  type EventDelivery,
  type PublishResultRequest,
  type RetireSubscriptionRequest,
  type RetryDeliveryRequest,
  type Subscription,
  type SubscriptionHistoryEntry,
} from '@orbit/generated';
import { backoffDelay, resolveBackoff, retryAfterMs, sleep, type BackoffOptions } from './backoff.ts';
import { OrbitTransportError, causeText, invalidArgument, serverError } from './errors.ts';
import { errorFields, safeLog, type Log } from './log.ts';
import { checkTokenSource, currentToken, type TokenSource } from './token.ts';
import { publishSpan, tracingOn } from './tracing.ts';
import { isId, rawPaths, readDocument, type ResultEvent } from './wire.ts';
import type { OrbitError } from '@orbit/spec/errors';
import { MAX_BATCH_ITEMS } from '@orbit/spec/protocol';
import { PATTERNS, type Validator } from '@orbit/generated';

export type {
  ConfigureSubscriptionRequest,
  CreateSubscriptionRequest,
  RetireSubscriptionRequest,
  RetryDeliveryRequest,
  DeliveryState,
  SubscriptionHistoryEntry,
};

/** The receipt of create, configure and retire (`deduplicated` is true on a replay of the same key). */
export interface SubscriptionResult {
  readonly subscription: Subscription;
  readonly deduplicated: boolean;
}

export interface SubscriptionPage {
  readonly items: Subscription[];
  /** Absent on the last page. */
  readonly next_cursor?: string;
}

export interface DeliveryPage {
  readonly items: EventDelivery[];
  readonly next_cursor?: string;
}

export interface HistoryPage {
  readonly items: SubscriptionHistoryEntry[];
  readonly next_cursor?: string;
}

export interface DeliveryDetail {
  readonly delivery: EventDelivery;
  readonly event: ResultEvent;
}

export interface DeliveryRetryResult {
  readonly delivery: EventDelivery;
  readonly deduplicated: boolean;
}

export interface PublishResult {
  readonly event: ResultEvent;
  readonly deduplicated: boolean;
}

/**
 * The body of `publishResult`: `result` is any JSON value (a `RawJson` is sent byte for byte, so
 * numbers beyond double precision survive) and `details` an object or a `RawJson` object.
 */
export interface PublishResultInput extends Omit<PublishResultRequest, 'details' | 'result'> {
  readonly details?: Record<string, unknown> | RawJson;
  readonly result?: unknown;
}

/** One item of `publishResults`: a `PublishResultInput` with its own idempotency key. */
export interface PublishResultsItemInput extends PublishResultInput {
  readonly idempotency_key: string;
}

/** One item's outcome in a batch publish: its event, or its own error (IDEMPOTENCY_CONFLICT, EVENT_HISTORY_EXPIRED). */
export type PublishResultsOutcome = PublishResult | { readonly error: ErrorObject };

/** The answer of `publishResults`: one outcome per item, in the order of the items. */
export interface PublishResultsResult {
  readonly results: PublishResultsOutcome[];
}

export interface RetryOptions extends BackoffOptions {
  /** Total attempts of one call, the first included (default 5). 1 disables retries. */
  readonly maxAttempts?: number;
}

export interface ClientOptions {
  /** The server, e.g. `http://127.0.0.1:8080` (a path prefix is kept). */
  readonly baseUrl: string;
  /**
   * The bearer token (sent only in the Authorization header), or a function that returns it (or a
   * promise of it), asked again for every attempt of every call: a rotated credential is picked up
   * without a new client (docs/sdk.md, Token provider).
   */
  readonly token: TokenSource;
  /** A `fetch` implementation (default: the global one). */
  readonly fetch?: typeof globalThis.fetch;
  /** Retry policy for transport failures; `false` sends each request once. */
  readonly retry?: RetryOptions | false;
  /** Time limit of one attempt, answer body included (default 10000 ms; the server gives up after 8 s). */
  readonly timeoutMs?: number;
  /** Extra headers sent with every request. */
  readonly headers?: Readonly<Record<string, string>>;
  /** Told about requests (`debug`), retries and their delays (`warn`); silent by default (docs/sdk.md, Logging). */
  readonly log?: Log;
}

/** Per-call options. */
export interface CallOptions {
  /** Aborts the call (and its retries); the call rejects with the signal's reason. */
  readonly signal?: AbortSignal;
}

export interface ListSubscriptionsQuery {
  readonly queueId: string;
  /** 1–100, the server's default is 20. */
  readonly limit?: number;
  /** The `next_cursor` of the previous page (same queue). */
  readonly cursor?: string;
}

export interface ListDeliveriesQuery {
  readonly state?: DeliveryState;
  readonly limit?: number;
  readonly cursor?: string;
}

export interface ListHistoryQuery {
  readonly limit?: number;
  readonly cursor?: string;
}

/** Yields the items of page after page, following `next_cursor` until the last page. */
async function* everyPage<T>(
  page: (cursor: string | undefined) => Promise<{ readonly items: T[]; readonly next_cursor?: string }>,
): AsyncGenerator<T, void, undefined> {
  let cursor: string | undefined;
  do {
    const current = await page(cursor);
    yield* current.items;
    cursor = current.next_cursor;
  } while (cursor !== undefined);
}

const withCursor = (cursor: string | undefined): { cursor?: string } => (cursor !== undefined ? { cursor } : {});

interface Operation {
  readonly name: string;
  readonly method: 'GET' | 'POST';
  readonly path: string;
  readonly query?: ReadonlyArray<readonly [string, string | number | undefined]>;
  readonly key?: string;
  readonly body?: unknown;
  readonly validate: Validator<unknown>;
  readonly okStatus: readonly number[];
  readonly raw?: string[][];
}

const RETRYABLE_STATUS = new Set([429, 502, 503, 504]);

function checkId(what: string, value: unknown): string {
  if (!isId(value)) throw invalidArgument(`${what} must be 32 lower-case hexadecimal characters`);
  return value;
}

function checkKey(key: unknown): string {
  if (typeof key !== 'string' || !PATTERNS.idempotencyKey.test(key)) {
    throw invalidArgument('the Idempotency-Key must be 1–255 visible ASCII characters, persisted by the caller before the call');
  }
  return key;
}

/** A fresh random Idempotency-Key. Persist it before the call that uses it, and reuse it until that call is answered. */
export function newIdempotencyKey(prefix = 'orbit'): string {
  const bytes = new Uint8Array(16);
  globalThis.crypto.getRandomValues(bytes);
  return `${prefix}-${Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')}`;
}

export class OrbitClient {
  readonly baseUrl: string;
  readonly #token: TokenSource;
  readonly #log: Log;
  readonly #fetch: typeof globalThis.fetch;
  readonly #maxAttempts: number;
  readonly #backoff: ReturnType<typeof resolveBackoff>;
  readonly #timeoutMs: number;
  readonly #headers: Readonly<Record<string, string>>;

  constructor(options: ClientOptions) {
    let url: URL;
    try {
      url = new URL(options.baseUrl);
    } catch {
      throw invalidArgument(`baseUrl must be an absolute http(s) URL, got "${options.baseUrl}"`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw invalidArgument('baseUrl must use http or https');
    if (url.search || url.hash) throw invalidArgument('baseUrl must not have a query or fragment (credentials never go in the URL)');
    if (url.username || url.password) throw invalidArgument('baseUrl must not carry credentials');
    this.baseUrl = url.href.replace(/\/+$/, '');
    this.#token = checkTokenSource(options.token);
    this.#log = safeLog(options.log);
    this.#fetch = options.fetch ?? globalThis.fetch.bind(globalThis);
    const retry = options.retry === false ? { maxAttempts: 1 } : (options.retry ?? {});
    this.#maxAttempts = retry.maxAttempts ?? 5;
    if (!Number.isInteger(this.#maxAttempts) || this.#maxAttempts < 1) throw new RangeError('retry.maxAttempts must be an integer >= 1');
    this.#backoff = resolveBackoff(retry, { initialDelayMs: 200, maxDelayMs: 5000, multiplier: 2, jitter: 0.5 });
    this.#timeoutMs = options.timeoutMs ?? 10_000;
    this.#headers = options.headers ?? {};
  }

  // --- subscriptions (spec/rules.md#s2-1 to #s3-15) ----------------------------------------------

  /** POST /v1/subscriptions (`events:manage`). 201 first, then `deduplicated: true` for the same key and body. */
  createSubscription(key: string, body: CreateSubscriptionRequest, options?: CallOptions): Promise<SubscriptionResult> {
    return this.#call<SubscriptionResult>(
      {
        name: 'CreateSubscription',
        method: 'POST',
        path: '/v1/subscriptions',
        key: checkKey(key),
        body,
        validate: validateSubscriptionResultEnvelope,
        okStatus: [200, 201],
      },
      options,
    );
  }

  /** GET /v1/subscriptions?queue_id=… (`events:read`): one page, newest first. */
  listSubscriptions(query: ListSubscriptionsQuery, options?: CallOptions): Promise<SubscriptionPage> {
    return this.#call<SubscriptionPage>(
      {
        name: 'ListSubscriptions',
        method: 'GET',
        path: '/v1/subscriptions',
        query: [
          ['queue_id', checkId('queueId', query.queueId)],
          ['limit', query.limit],
          ['cursor', query.cursor],
        ],
        validate: validateSubscriptionListEnvelope,
        okStatus: [200],
      },
      options,
    );
  }

  /** Every subscription of the queue, page after page (an operational listing, not a snapshot). */
  iterateSubscriptions(
    query: Omit<ListSubscriptionsQuery, 'cursor'>,
    options?: CallOptions,
  ): AsyncGenerator<Subscription, void, undefined> {
    return everyPage((cursor) => this.listSubscriptions({ ...query, ...withCursor(cursor) }, options));
  }

  /** GET /v1/subscriptions/{id} (`events:read`): the current configuration and usage. */
  getSubscription(id: string, options?: CallOptions): Promise<Subscription> {
    return this.#call<Subscription>(
      {
        name: 'GetSubscription',
        method: 'GET',
        path: `/v1/subscriptions/${checkId('subscription id', id)}`,
        validate: validateSubscriptionEnvelope,
        okStatus: [200],
      },
      options,
    );
  }

  /**
   * POST /v1/subscriptions/{id}:configure (`events:manage`): pause (`enabled: false`) or resume.
   * A replay must resend the original body, including the original `expected_revision`.
   */
  configureSubscription(id: string, key: string, body: ConfigureSubscriptionRequest, options?: CallOptions): Promise<SubscriptionResult> {
    return this.#call<SubscriptionResult>(
      {
        name: 'ConfigureSubscription',
        method: 'POST',
        path: `/v1/subscriptions/${checkId('subscription id', id)}:configure`,
        key: checkKey(key),
        body,
        validate: validateSubscriptionResultEnvelope,
        okStatus: [200],
      },
      options,
    );
  }

  /** POST /v1/subscriptions/{id}:retire (`events:manage`): for good; the subscription stays readable. */
  retireSubscription(id: string, key: string, body: RetireSubscriptionRequest, options?: CallOptions): Promise<SubscriptionResult> {
    return this.#call<SubscriptionResult>(
      {
        name: 'RetireSubscription',
        method: 'POST',
        path: `/v1/subscriptions/${checkId('subscription id', id)}:retire`,
        key: checkKey(key),
        body,
        validate: validateSubscriptionResultEnvelope,
        okStatus: [200],
      },
      options,
    );
  }

  /**
   * GET /v1/subscriptions/{id}/history (`events:read`, Orbit's extension): one page of the audit
   * trail (create, pause, resume, retire, delivery retry, each with its reason), newest first.
   */
  listSubscriptionHistory(id: string, query: ListHistoryQuery = {}, options?: CallOptions): Promise<HistoryPage> {
    return this.#call<HistoryPage>(
      {
        name: 'ListSubscriptionHistory',
        method: 'GET',
        path: `/v1/subscriptions/${checkId('subscription id', id)}/history`,
        query: [
          ['limit', query.limit],
          ['cursor', query.cursor],
        ],
        validate: validateSubscriptionHistoryEnvelope,
        okStatus: [200],
      },
      options,
    );
  }

  /** The whole configuration history of the subscription, page after page. */
  iterateSubscriptionHistory(
    id: string,
    query: Omit<ListHistoryQuery, 'cursor'> = {},
    options?: CallOptions,
  ): AsyncGenerator<SubscriptionHistoryEntry, void, undefined> {
    return everyPage((cursor) => this.listSubscriptionHistory(id, { ...query, ...withCursor(cursor) }, options));
  }

  // --- deliveries (spec/rules.md#s4-1 to #s4-28) -------------------------------------------------

  /** GET /v1/subscriptions/{id}/deliveries (`events:read`): one page, newest first, optionally one state. */
  listEventDeliveries(id: string, query: ListDeliveriesQuery = {}, options?: CallOptions): Promise<DeliveryPage> {
    return this.#call<DeliveryPage>(
      {
        name: 'ListEventDeliveries',
        method: 'GET',
        path: `/v1/subscriptions/${checkId('subscription id', id)}/deliveries`,
        query: [
          ['limit', query.limit],
          ['cursor', query.cursor],
          ['state', query.state],
        ],
        validate: validateDeliveryListEnvelope,
        okStatus: [200],
      },
      options,
    );
  }

  /** Every materialized delivery of the subscription, page after page. */
  iterateEventDeliveries(
    id: string,
    query: Omit<ListDeliveriesQuery, 'cursor'> = {},
    options?: CallOptions,
  ): AsyncGenerator<EventDelivery, void, undefined> {
    return everyPage((cursor) => this.listEventDeliveries(id, { ...query, ...withCursor(cursor) }, options));
  }

  /** GET /v1/subscriptions/{id}/deliveries/{delivery_id} (`events:read`): the delivery and its event (never a lease secret). */
  getEventDelivery(id: string, deliveryId: string, options?: CallOptions): Promise<DeliveryDetail> {
    return this.#call<DeliveryDetail>(
      {
        name: 'GetEventDelivery',
        method: 'GET',
        path: `/v1/subscriptions/${checkId('subscription id', id)}/deliveries/${checkId('delivery id', deliveryId)}`,
        validate: validateDeliveryDetailEnvelope,
        okStatus: [200],
        raw: rawPaths('DeliveryDetail', ['data']),
      },
      options,
    );
  }

  /** POST …/deliveries/{delivery_id}:retry (`events:manage`): an EXPIRED delivery becomes PENDING with more budget. */
  retryEventDelivery(
    id: string,
    deliveryId: string,
    key: string,
    body: RetryDeliveryRequest,
    options?: CallOptions,
  ): Promise<DeliveryRetryResult> {
    return this.#call<DeliveryRetryResult>(
      {
        name: 'RetryEventDelivery',
        method: 'POST',
        path: `/v1/subscriptions/${checkId('subscription id', id)}/deliveries/${checkId('delivery id', deliveryId)}:retry`,
        key: checkKey(key),
        body,
        validate: validateDeliveryRetryResultEnvelope,
        okStatus: [200],
      },
      options,
    );
  }

  // --- results (the HTTP seam: spec/README.md, The result log) -----------------------------------

  /** POST /v1/queues/{queue_id}/results (`results:publish`): appends one result; 201 first, then `deduplicated: true`. */
  publishResult(queueId: string, key: string, body: PublishResultInput, options?: CallOptions): Promise<PublishResult> {
    if (tracingOn() && body.trace_context === undefined)
      return publishSpan(queueId, 1, (own) => this.publishResult(queueId, key, { ...body, trace_context: own }, options));
    return this.#call<PublishResult>(
      {
        name: 'PublishResult',
        method: 'POST',
        path: `/v1/queues/${checkId('queueId', queueId)}/results`,
        key: checkKey(key),
        body,
        validate: validatePublishResultEnvelope,
        okStatus: [200, 201],
        raw: rawPaths('PublishResultResponse', ['data']),
      },
      options,
    );
  }

  /**
   * POST /v1/queues/{queue_id}/results:batch (`results:publish`): appends 1–100 results in one
   * transaction; each item carries its own idempotency key (one namespace with `publishResult`) and
   * gets its own outcome, in order. A retry resends the whole batch: every item replays or appends once.
   */
  publishResults(queueId: string, items: readonly PublishResultsItemInput[], options?: CallOptions): Promise<PublishResultsResult> {
    if (!Array.isArray(items) || items.length < 1 || items.length > MAX_BATCH_ITEMS)
      throw invalidArgument(`a batch publish takes 1 to ${MAX_BATCH_ITEMS} items`);
    const keys = new Set<string>();
    for (const item of items) {
      checkKey(item.idempotency_key);
      if (keys.has(item.idempotency_key)) throw invalidArgument(`the key ${item.idempotency_key} is used twice in one batch`);
      keys.add(item.idempotency_key);
    }
    if (tracingOn() && items.some((item) => item.trace_context === undefined))
      return publishSpan(queueId, items.length, (own) =>
        this.publishResults(
          queueId,
          items.map((item) => (item.trace_context === undefined ? { ...item, trace_context: own } : item)),
          options,
        ),
      );
    return this.#call<PublishResultsResult>(
      {
        name: 'PublishResults',
        method: 'POST',
        path: `/v1/queues/${checkId('queueId', queueId)}/results:batch`,
        body: { items },
        validate: validatePublishResultsEnvelope,
        okStatus: [200],
        raw: rawPaths('PublishResultsResponse', ['data']),
      },
      options,
    );
  }

  /** GET /healthz (no authentication). */
  health(options?: CallOptions): Promise<{ status: 'ok' }> {
    return this.#call<{ status: 'ok' }>(
      { name: 'GetHealth', method: 'GET', path: '/healthz', validate: validateHealthEnvelope, okStatus: [200] },
      options,
    );
  }

  // --- transport ---------------------------------------------------------------------------------

  #url(op: Operation): string {
    const params = new URLSearchParams();
    for (const [name, value] of op.query ?? []) if (value !== undefined) params.append(name, String(value));
    const query = params.toString();
    return `${this.baseUrl}${op.path}${query ? `?${query}` : ''}`;
  }

  /**
   * Runs the operation with retries and returns the answer's `data`. With a token provider, a
   * refusal with UNAUTHENTICATED is sent again once, at once, when the provider then returns
   * another token: the request was refused before it did anything, and a rotation's new token
   * works on its first request (spec/README.md, "Authentication is at most 1 s stale").
   */
  async #call<T>(op: Operation, options: CallOptions = {}): Promise<T> {
    const url = this.#url(op);
    // Serialized once: every retry sends the very same bytes with the very same key.
    const body = op.body === undefined ? undefined : stringify(op.body);
    const headers: Record<string, string> = { ...this.#headers, accept: 'application/json' };
    if (op.key !== undefined) headers['idempotency-key'] = op.key;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const where = { operation: op.name, method: op.method, url };
    let tokenRenewed = false;
    for (let attempt = 1; ; attempt++) {
      options.signal?.throwIfAborted();
      this.#log('debug', `${op.name}: ${op.method} ${url}`, { ...where, attempt });
      // Only the caller's abort escapes #attempt.
      const outcome = await this.#attempt<{ data: T }>(op, url, headers, body, options.signal);
      if ('value' in outcome) return outcome.value.data;
      const { error } = outcome;
      if (error.code === 'UNAUTHENTICATED' && typeof this.#token === 'function' && !tokenRenewed && outcome.token !== undefined) {
        tokenRenewed = true;
        const limit = AbortSignal.timeout(this.#timeoutMs);
        const fresh = await currentToken(this.#token, op.name, options.signal ? AbortSignal.any([options.signal, limit]) : limit).catch(
          () => outcome.token,
        );
        if (fresh !== outcome.token) {
          this.#log('info', `${op.name}: the token was refused; sending again with the provider's new token`, {
            ...where,
            ...errorFields(error),
          });
          attempt--; // not a transport retry: it does not count against maxAttempts
          continue;
        }
      }
      if (!error.retryable) throw error;
      if (attempt >= this.#maxAttempts) {
        if (this.#maxAttempts > 1)
          this.#log('warn', `${op.name}: giving up after ${attempt} attempts: ${error.message}`, {
            ...where,
            attempt,
            ...errorFields(error),
          });
        throw error;
      }
      // The server's Retry-After is a lower bound of the wait.
      const delayMs = Math.max(backoffDelay(attempt - 1, this.#backoff), outcome.waitMs);
      this.#log('warn', `${op.name}: retrying in ${delayMs} ms (attempt ${attempt + 1} of ${this.#maxAttempts}): ${error.message}`, {
        ...where,
        attempt: attempt + 1,
        max_attempts: this.#maxAttempts,
        delay_ms: delayMs,
        ...errorFields(error),
      });
      await sleep(delayMs, options.signal);
    }
  }

  /**
   * One attempt: the value, or an error with the server's Retry-After and the token it sent;
   * rethrows only the caller's abort. The token is asked for inside the attempt, under its time
   * limit, so a hanging provider is a timeout like a hanging server.
   */
  async #attempt<T>(
    op: Operation,
    url: string,
    headers: Record<string, string>,
    body: string | undefined,
    signal: AbortSignal | undefined,
  ): Promise<{ value: T } | { error: OrbitError; waitMs: number; token?: string }> {
    const timeout = AbortSignal.timeout(this.#timeoutMs);
    const combined = signal ? AbortSignal.any([signal, timeout]) : timeout;
    const where = `${op.name}: ${op.method} ${url}`;
    const timedOut = (cause: unknown, what = 'no answer') => ({
      error: new OrbitTransportError('timeout', `${where} failed: ${what} within ${this.#timeoutMs} ms`, { cause }),
      waitMs: 0,
    });
    // A fixed token is used at once: no await, so the request starts in the caller's turn.
    let token: string | undefined = op.path === '/healthz' || typeof this.#token !== 'string' ? undefined : this.#token;
    if (op.path !== '/healthz' && token === undefined) {
      try {
        token = await currentToken(this.#token, op.name, combined);
      } catch (error) {
        if (signal?.aborted) throw signal.reason;
        if (timeout.aborted) return timedOut(error, 'no token from the token provider');
        return { error: error as OrbitError, waitMs: 0 };
      }
    }
    const started = performance.now();
    let response: Response;
    let text: string;
    try {
      response = await this.#fetch(url, {
        method: op.method,
        headers: token === undefined ? headers : { ...headers, authorization: `Bearer ${token}` },
        ...(body !== undefined ? { body } : {}),
        signal: combined,
        redirect: 'manual',
      });
      text = await response.text();
    } catch (cause) {
      if (signal?.aborted) throw signal.reason;
      if (timeout.aborted) return { ...timedOut(cause), ...(token !== undefined ? { token } : {}) };
      // The reason is in the cause's chain (fetch says only "fetch failed"). A custom fetch might
      // quote the request's headers: the token is cut out of whatever it says.
      const reason = token === undefined ? causeText(cause) : causeText(cause).split(token).join('[token]');
      return {
        error: new OrbitTransportError('network', `${where} failed: ${reason}`, { cause }),
        waitMs: 0,
        ...(token !== undefined ? { token } : {}),
      };
    }
    const status = response.status;
    const headerRequestId = response.headers.get('x-request-id') ?? undefined;
    this.#log('debug', `${op.name}: HTTP ${status}`, {
      operation: op.name,
      status,
      duration_ms: Math.round(performance.now() - started),
      ...(headerRequestId ? { request_id: headerRequestId } : {}),
    });
    const withToken = token !== undefined ? { token } : {};
    if (op.okStatus.includes(status)) {
      const read = readDocument<T>(text, op.validate, op.raw);
      if (read.ok) return { value: read.value };
      return {
        error: new OrbitTransportError('bad_response', `${where}: the ${status} answer breaks the contract: ${read.problem}`, {
          status,
          ...(headerRequestId ? { requestId: headerRequestId } : {}),
        }),
        waitMs: 0,
        ...withToken,
      };
    }
    if (status >= 400) {
      const read = readDocument<ErrorEnvelope>(text, validateErrorEnvelope);
      const wait = retryAfterMs(response.headers.get('retry-after'));
      if (read.ok) {
        const error = serverError(read.value.error, {
          status,
          requestId: read.value.request_id,
          ...(wait !== undefined ? { retryAfterMs: wait } : {}),
        });
        return { error, waitMs: error.retryAfterMs ?? 0, ...withToken };
      }
      // Not our envelope: a proxy or load balancer answered. Gateway errors are worth a retry.
      const retryable = RETRYABLE_STATUS.has(status);
      const error = new OrbitTransportError('bad_response', `${where}: HTTP ${status} without an Orbit error envelope (${read.problem})`, {
        status,
        retryable,
        ...(headerRequestId ? { requestId: headerRequestId } : {}),
        ...(retryable && wait !== undefined ? { retryAfterMs: wait } : {}),
      });
      return { error, waitMs: error.retryAfterMs ?? 0, ...withToken };
    }
    return {
      error: new OrbitTransportError('bad_response', `${where}: unexpected HTTP ${status}`, {
        status,
        ...(headerRequestId ? { requestId: headerRequestId } : {}),
      }),
      waitMs: 0,
      ...withToken,
    };
  }
}

/** Creates a management client. */
export function createClient(options: ClientOptions): OrbitClient {
  return new OrbitClient(options);
}

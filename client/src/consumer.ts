/**
 * @module
 * The automatic consumer (spec/rules.md#s6-7 to #s6-19, #s8-6): connects, pings, reconnects with
 * jittered exponential backoff, and for each delivery runs the user's handler inside the Inbox
 * transaction keyed by `event.id`, commits, and only then ACKs. Proofs are stored durably (in the
 * same transaction) before the ACK is sent and deleted once the server answers; on every
 * (re)connect the stored proofs are re-reported unchanged. `stop()` drains: no new handler starts,
 * running ones finish (or the timeout passes), then the connection is closed.
 *
 * Longer than 400 lines: one class, `EventConsumer`, whose handler, ACK, ping, reconnect and drain
 * paths are one state machine (connecting → connected → reconnecting → stopping → stopped) over
 * the same private fields.
 */
import { SpanStatusCode, trace } from '@opentelemetry/api';
import { OrbitError } from '@orbit/spec/errors';
import type { EventDelivery } from '@orbit/generated';
import { backoffDelay, resolveBackoff, sleep, type BackoffOptions } from './backoff.ts';
import { ConnectionClosedError, OrbitTransportError, invalidArgument, reconnectsAfter } from './errors.ts';
import {
  connectEvents,
  connectUrl,
  providedToken,
  type AckResult,
  type CloseInfo,
  type ConnectEventsOptions,
  type Delivery,
  type EventConnection,
  type Welcome,
} from './events.ts';
import type { Inbox, PendingAck } from './inbox/types.ts';
import { errorFields, safeLog, type Log, type LogLevel } from './log.ts';
import { checkTokenSource, type TokenSource } from './token.ts';
import { parentOf, SpanKind, traced, tracingOn } from './tracing.ts';
import { isId, type ResultEvent } from './wire.ts';

/** What a handler gets: the event, its delivery, and the open Inbox transaction. */
export interface HandlerContext<Tx> {
  readonly event: ResultEvent;
  readonly delivery: EventDelivery;
  /** The local transaction: write the business effect through it so it commits with the inbox record. */
  readonly tx: Tx;
}

export type Handler<Tx> = (context: HandlerContext<Tx>) => unknown;

/** Where an `error` event came from. */
export type ErrorPhase = 'handler' | 'inbox' | 'ack' | 'ping' | 'connection';

export type ConsumerEvent =
  | { readonly type: 'connected'; readonly sessionId: string; readonly welcome: Welcome }
  | { readonly type: 'delivered'; readonly delivery: EventDelivery; readonly event: ResultEvent }
  | { readonly type: 'handled'; readonly delivery: EventDelivery; readonly event: ResultEvent }
  | { readonly type: 'duplicate'; readonly delivery: EventDelivery; readonly event: ResultEvent }
  /** `replayed`: a stored proof re-reported after a (re)connect. */
  | { readonly type: 'acked'; readonly proof: PendingAck; readonly result: AckResult; readonly replayed: boolean }
  | { readonly type: 'lease_lost'; readonly proof: PendingAck; readonly replayed: boolean }
  | { readonly type: 'reconnecting'; readonly attempt: number; readonly delayMs: number; readonly error: OrbitError }
  | {
      readonly type: 'error';
      readonly phase: ErrorPhase;
      readonly error: unknown;
      readonly delivery?: EventDelivery;
      readonly event?: ResultEvent;
    }
  | { readonly type: 'stopped'; readonly error: OrbitError | null };

export type ConsumerEventType = ConsumerEvent['type'];
export type ConsumerState = 'connecting' | 'connected' | 'reconnecting' | 'stopping' | 'stopped';

export interface ReconnectOptions extends BackoffOptions {
  /** Consecutive failed connection attempts before the consumer gives up (default: never). */
  readonly maxAttempts?: number;
}

/** The part of an `EventConnection` the consumer uses (a seam for tests and custom transports). */
export type EventStream = Pick<EventConnection, 'sessionId' | 'welcome' | 'isOpen' | 'ack' | 'ping' | 'close' | 'terminate'> &
  AsyncIterable<Delivery>;

export interface EventConsumerOptions<Tx> {
  readonly baseUrl: string;
  /**
   * The bearer token, or a function that returns it (or a promise of it), asked again for every
   * connection; after an UNAUTHENTICATED end, a provider that returns another token gets one
   * more connection instead of a stop (docs/sdk.md, Token provider).
   */
  readonly token: TokenSource;
  readonly subscriptionId: string;
  /** Deliveries held at once by the connection, 1–32. */
  readonly capacity: number;
  readonly inbox: Inbox<Tx>;
  readonly handler: Handler<Tx>;
  /** `events.ping` period (default 15000 ms, spec/rules.md#s7-1). */
  readonly pingIntervalMs?: number;
  readonly connectTimeoutMs?: number;
  /** Time limit of one ACK or ping answer (default 10000 ms); a timeout cuts the connection and reconnects. */
  readonly requestTimeoutMs?: number;
  /** Reconnect backoff (default 500 ms doubling to 30 s, jitter 0.5). */
  readonly backoff?: ReconnectOptions;
  /** How long a fatal stop waits for running handlers (default 30000 ms). */
  readonly drainTimeoutMs?: number;
  /** Called for every consumer event (see also `on`). Exceptions thrown by hooks are ignored. */
  readonly onEvent?: (event: ConsumerEvent) => void;
  readonly headers?: Readonly<Record<string, string>>;
  /** Opens a connection (default `connectEvents`); a seam for tests and custom transports. */
  readonly connect?: (options: ConnectEventsOptions) => Promise<EventStream>;
  /**
   * Told about connections, closes with their codes, reconnects and their delays, and every error
   * the consumer survives; silent by default (docs/sdk.md, Logging).
   */
  readonly log?: Log;
  /**
   * Stops the consumer when it aborts, as `stop()` does: it drains (10 s), closes the connection
   * normally (1000), reconnects no more, and `done` resolves. Already aborted: it never connects.
   */
  readonly signal?: AbortSignal;
}

export interface StopOptions {
  /** How long to wait for running handlers and their ACKs (default 10000 ms). */
  readonly timeoutMs?: number;
}

export interface StopResult {
  /** True when every running handler and ACK finished before the timeout. */
  readonly drained: boolean;
  /** Handlers or ACKs still running when the consumer gave up waiting. */
  readonly abandoned: number;
}

export interface ConsumerStats {
  readonly delivered: number;
  readonly handled: number;
  readonly duplicates: number;
  readonly acked: number;
  readonly leaseLost: number;
  readonly handlerErrors: number;
  readonly reconnects: number;
}

function asOrbitError(error: unknown): OrbitError {
  if (error instanceof OrbitError) return error;
  return new OrbitTransportError('network', (error as Error)?.message ?? String(error), { cause: error });
}

/** Waits for every promise of `tasks` (including ones added meanwhile) or `timeoutMs`; true when all settled. */
async function settle(tasks: Set<Promise<void>>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (tasks.size > 0) {
    const left = deadline - Date.now();
    if (left <= 0) return false;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), left)));
    const outcome = await Promise.race([Promise.allSettled([...tasks]).then(() => 'done' as const), timeout]);
    clearTimeout(timer);
    if (outcome === 'timeout') return tasks.size === 0;
  }
  return true;
}

export class EventConsumer<Tx = unknown> {
  /** Settles when the consumer has stopped: resolves after `stop()`, rejects with the error that stopped it. */
  readonly done: Promise<void>;

  readonly #options: EventConsumerOptions<Tx>;
  readonly #token: TokenSource;
  readonly #log: Log;
  readonly #backoff: ReturnType<typeof resolveBackoff>;
  readonly #maxAttempts: number;
  readonly #listeners = new Map<ConsumerEventType, Set<(event: ConsumerEvent) => void>>();
  readonly #tasks = new Set<Promise<void>>();
  /** Proofs whose ACK is on the wire, `session_id:delivery_id:epoch`. */
  readonly #acking = new Set<string>();
  readonly #halt = new AbortController();
  #conn: EventStream | null = null;
  #state: ConsumerState = 'connecting';
  #stopping = false;
  #stopResult: Promise<StopResult> | null = null;
  /** stop()'s close of the connection, awaited before `stopped` so the log reads in order. */
  #closing: Promise<void> | null = null;
  #stats = { delivered: 0, handled: 0, duplicates: 0, acked: 0, leaseLost: 0, handlerErrors: 0, reconnects: 0 };

  constructor(options: EventConsumerOptions<Tx>) {
    if (!isId(options.subscriptionId)) throw invalidArgument('subscriptionId must be 32 lower-case hexadecimal characters');
    if (!Number.isInteger(options.capacity) || options.capacity < 1 || options.capacity > 32)
      throw invalidArgument('capacity must be an integer from 1 to 32');
    if (typeof options.handler !== 'function') throw invalidArgument('handler must be a function');
    if (!options.inbox) throw invalidArgument('an inbox is required');
    const ping = options.pingIntervalMs ?? 15_000;
    if (!Number.isFinite(ping) || ping <= 0) throw invalidArgument('pingIntervalMs must be a positive number');
    this.#options = options;
    this.#token = checkTokenSource(options.token);
    this.#log = safeLog(options.log);
    this.#backoff = resolveBackoff(options.backoff, { initialDelayMs: 500, maxDelayMs: 30_000, multiplier: 2, jitter: 0.5 });
    this.#maxAttempts = options.backoff?.maxAttempts ?? Number.POSITIVE_INFINITY;
    const { signal } = options;
    if (signal?.aborted) {
      this.#log('info', 'consumer: the signal was aborted before the start; not connecting', this.#fields());
      this.#stopping = true;
      this.#state = 'stopping';
    }
    this.done = this.#run();
    // `done` is for whoever wants it; an unobserved fatal stop is reported through the `error` and `stopped` events.
    this.done.catch(() => {});
    if (signal && !signal.aborted) {
      const onAbort = (): void => {
        this.#log('info', 'consumer: the signal was aborted; stopping', this.#fields());
        void this.stop();
      };
      signal.addEventListener('abort', onAbort, { once: true });
      void this.done.catch(() => {}).finally(() => signal.removeEventListener('abort', onAbort));
    }
  }

  get state(): ConsumerState {
    return this.#state;
  }

  get stats(): ConsumerStats {
    return { ...this.#stats };
  }

  /** Subscribes to one kind of consumer event; returns the unsubscribe function. */
  on<K extends ConsumerEventType>(type: K, listener: (event: Extract<ConsumerEvent, { type: K }>) => void): () => void {
    let set = this.#listeners.get(type);
    if (!set) {
      set = new Set();
      this.#listeners.set(type, set);
    }
    const wrapped = listener as (event: ConsumerEvent) => void;
    set.add(wrapped);
    return () => set.delete(wrapped);
  }

  /**
   * Drains and stops: no new handler starts (deliveries that arrive now are left to their lease,
   * and the server offers them again later), running handlers and their ACKs get `timeoutMs` to
   * finish, proofs without an answer stay in the Inbox, then the connection is closed. The Inbox
   * stays open: close it after `stop()` resolves.
   */
  stop(options: StopOptions = {}): Promise<StopResult> {
    this.#stopResult ??= (async () => {
      this.#stopping = true;
      if (this.#state !== 'stopped') this.#state = 'stopping';
      this.#halt.abort();
      const drained = await settle(this.#tasks, options.timeoutMs ?? 10_000);
      const abandoned = this.#tasks.size;
      if (!drained) this.#log('warn', `consumer: ${abandoned} handlers or ACKs still running at the stop`, this.#fields({ abandoned }));
      const conn = this.#conn;
      if (conn) {
        this.#closing = this.#close(conn);
        await this.#closing;
      }
      await this.done.catch(() => {});
      return { drained, abandoned };
    })();
    return this.#stopResult;
  }

  #emit(event: ConsumerEvent): void {
    this.#logEvent(event);
    try {
      this.#options.onEvent?.(event);
    } catch (error) {
      // hooks never break the consumer
      this.#log(
        'warn',
        `consumer: the onEvent hook threw on ${event.type}; ignored`,
        this.#fields({ event_type: event.type, ...errorFields(error) }),
      );
    }
    for (const listener of this.#listeners.get(event.type) ?? []) {
      try {
        listener(event);
      } catch (error) {
        this.#log(
          'warn',
          `consumer: a ${event.type} listener threw; ignored`,
          this.#fields({ event_type: event.type, ...errorFields(error) }),
        );
      }
    }
  }

  /** The fields every consumer log entry carries. */
  #fields(extra: Record<string, unknown> = {}): Record<string, unknown> {
    return { subscription_id: this.#options.subscriptionId, ...(this.#conn ? { session_id: this.#conn.sessionId } : {}), ...extra };
  }

  /** Each consumer event as a log entry: what the consumer recovered from is `warn`, what lost work is `error`. */
  #logEvent(event: ConsumerEvent): void {
    const delivery = (d: EventDelivery) => ({ delivery_id: d.id, event_id: d.event_id, epoch: d.lease_epoch });
    const proof = (p: PendingAck) => ({ delivery_id: p.delivery_id, event_id: p.event_id, epoch: p.epoch });
    switch (event.type) {
      case 'connected':
        return this.#log('info', 'consumer: connected', this.#fields({ session_id: event.sessionId, capacity: event.welcome.capacity }));
      case 'delivered':
      case 'handled':
      case 'duplicate':
        return this.#log('debug', `consumer: ${event.type}`, this.#fields({ ...delivery(event.delivery), sequence: event.event.sequence }));
      case 'acked':
        return this.#log(
          'debug',
          'consumer: acked',
          this.#fields({ ...proof(event.proof), deduplicated: event.result.deduplicated, replayed: event.replayed }),
        );
      case 'lease_lost':
        return this.#log(
          'info',
          'consumer: lease lost; the proof is dropped and the redelivery is acknowledged from the Inbox',
          this.#fields({ ...proof(event.proof), replayed: event.replayed }),
        );
      case 'reconnecting':
        return this.#log(
          'warn',
          `consumer: reconnecting in ${event.delayMs} ms (attempt ${event.attempt}): ${event.error.message}`,
          this.#fields({ attempt: event.attempt, delay_ms: event.delayMs, ...errorFields(event.error) }),
        );
      case 'error': {
        const level: LogLevel = event.phase === 'ack' || event.phase === 'ping' ? 'warn' : 'error';
        const what = {
          handler: 'the handler failed; rolled back, the delivery comes again after its lease',
          inbox: 'the Inbox failed',
          ack: 'an ACK failed; its proof stays stored and is re-reported on the next connection',
          ping: 'a ping failed',
          connection: 'stopping',
        }[event.phase];
        return this.#log(
          level,
          `consumer: ${what}: ${errorFields(event.error).error}`,
          this.#fields({ phase: event.phase, ...(event.delivery ? delivery(event.delivery) : {}), ...errorFields(event.error) }),
        );
      }
      case 'stopped':
        return event.error
          ? this.#log('error', `consumer: stopped by ${event.error.code}`, this.#fields(errorFields(event.error)))
          : this.#log('info', 'consumer: stopped', this.#fields());
    }
  }

  /** Closes the connection normally and logs how it ended. */
  async #close(conn: EventStream): Promise<void> {
    const info: CloseInfo | undefined = await conn.close(1000, 'consumer stopping');
    this.#log('info', `consumer: connection closed (${info?.code ?? 1000})`, {
      subscription_id: this.#options.subscriptionId,
      session_id: conn.sessionId,
      close_code: info?.code ?? 1000,
      ...(info?.reason ? { close_reason: info.reason } : {}),
    });
  }

  #track(work: Promise<void>): void {
    this.#tasks.add(work);
    void work.catch(() => {}).finally(() => this.#tasks.delete(work));
  }

  async #run(): Promise<void> {
    let fatal: OrbitError | null = null;
    let failures = 0;
    /** Whether the connection after an UNAUTHENTICATED end already had its new token (one per welcome). */
    let tokenRenewed = false;
    const connect = this.#options.connect ?? connectEvents;
    while (!this.#stopping) {
      let conn: EventStream;
      let token: string | undefined;
      // The halt reaches an attempt only while it connects: once connected, stop() drains first
      // and closes after (connectEvents would close the connection when its signal aborts).
      const attempt = new AbortController();
      const onHalt = (): void => attempt.abort(this.#halt.signal.reason);
      this.#halt.signal.addEventListener('abort', onHalt, { once: true });
      try {
        token = typeof this.#token === 'string' ? this.#token : await this.#providedToken(this.#token, attempt.signal);
        conn = await connect({
          baseUrl: this.#options.baseUrl,
          token,
          subscriptionId: this.#options.subscriptionId,
          capacity: this.#options.capacity,
          ...(this.#options.connectTimeoutMs !== undefined ? { connectTimeoutMs: this.#options.connectTimeoutMs } : {}),
          ...(this.#options.requestTimeoutMs !== undefined ? { requestTimeoutMs: this.#options.requestTimeoutMs } : {}),
          ...(this.#options.headers ? { headers: this.#options.headers } : {}),
          signal: attempt.signal,
        });
      } catch (error) {
        if (this.#stopping) break;
        const orbitError = asOrbitError(error);
        if (!tokenRenewed && (await this.#tokenChanged(orbitError, token))) {
          tokenRenewed = true;
          await this.#wait(0, orbitError);
          continue;
        }
        // Refusals that a new attempt cannot change (bad token, missing permission, unknown subscription, ...).
        if (!(error instanceof OrbitError) || !orbitError.retryable || ++failures >= this.#maxAttempts) {
          fatal = orbitError;
          break;
        }
        await this.#wait(failures - 1, orbitError);
        continue;
      } finally {
        this.#halt.signal.removeEventListener('abort', onHalt);
      }
      if (this.#stopping) {
        await this.#close(conn);
        break;
      }
      failures = 0;
      tokenRenewed = false;
      this.#conn = conn;
      this.#state = 'connected';
      this.#emit({ type: 'connected', sessionId: conn.sessionId, welcome: conn.welcome });
      this.#track(this.#replayPending());
      const pinger = this.#startPinging(conn);
      let ended: unknown = null;
      try {
        for await (const delivery of conn) this.#dispatch(delivery);
      } catch (error) {
        ended = error;
      } finally {
        clearInterval(pinger);
        if (this.#conn === conn) this.#conn = null;
      }
      if (this.#stopping) break;
      const orbitError = asOrbitError(ended ?? new OrbitTransportError('network', 'the connection ended'));
      const closeCode = orbitError instanceof ConnectionClosedError ? ` (${orbitError.closeCode})` : '';
      this.#log('warn', `consumer: connection ended${closeCode}: ${orbitError.code}: ${orbitError.message}`, {
        subscription_id: this.#options.subscriptionId,
        session_id: conn.sessionId,
        ...errorFields(orbitError),
      });
      if (await this.#tokenChanged(orbitError, token)) {
        tokenRenewed = true;
        failures = 1;
        await this.#wait(0, orbitError);
        continue;
      }
      if (!reconnectsAfter(orbitError)) {
        fatal = orbitError;
        break;
      }
      failures = 1;
      await this.#wait(0, orbitError);
    }
    if (fatal) {
      this.#stopping = true;
      this.#state = 'stopping';
      this.#emit({ type: 'error', phase: 'connection', error: fatal });
      await settle(this.#tasks, this.#options.drainTimeoutMs ?? 30_000);
    }
    await this.#closing;
    this.#state = 'stopped';
    this.#emit({ type: 'stopped', error: fatal });
    if (fatal) throw fatal;
  }

  /**
   * After UNAUTHENTICATED, whether the token provider now has another token than the one refused:
   * then one more connection is worth it. A rotation's grace period ends with the server closing
   * the connections of the old token (spec/README.md, "Authorization while connected"); the
   * provider, updated meanwhile, gives the new one. A fixed token, or a provider that returns the
   * refused token again, stops the consumer as before.
   */
  async #tokenChanged(error: OrbitError, refused: string | undefined): Promise<boolean> {
    if (error.code !== 'UNAUTHENTICATED' || typeof this.#token !== 'function' || refused === undefined) return false;
    let fresh: string;
    try {
      fresh = await this.#providedToken(this.#token, this.#halt.signal);
    } catch {
      return !this.#stopping; // the provider failed: the next attempt asks it again, and its failure is retryable
    }
    if (fresh === refused) return false;
    this.#log('info', "consumer: the token was refused; connecting again with the provider's new token", {
      subscription_id: this.#options.subscriptionId,
      ...errorFields(error),
    });
    return true;
  }

  /** The provider's token for a connection, as `connectEvents` asks for it: under `connectTimeoutMs`. */
  #providedToken(provider: Exclude<TokenSource, string>, signal: AbortSignal): Promise<string> {
    const where = `ConnectEvents: GET ${connectUrl(this.#options.baseUrl)}`;
    return providedToken(provider, where, this.#options.connectTimeoutMs ?? 10_000, signal);
  }

  async #wait(attempt: number, error: OrbitError): Promise<void> {
    // The server's Retry-After is a lower bound of the wait (spec/rules.md#s7-20, #s7-21); a 429
    // without one (a proxy's) still waits the contract's 1 s.
    const floorMs = error.retryAfterMs ?? (error.code === 'CAPACITY_EXCEEDED' ? 1000 : 0);
    const delayMs = Math.max(backoffDelay(attempt, this.#backoff), floorMs);
    this.#state = 'reconnecting';
    this.#stats.reconnects++;
    this.#emit({ type: 'reconnecting', attempt: attempt + 1, delayMs, error });
    await sleep(delayMs, this.#halt.signal);
  }

  #startPinging(conn: EventStream): NodeJS.Timeout {
    const timer = setInterval(() => {
      if (!conn.isOpen) return;
      conn.ping().catch((error: unknown) => {
        if (!conn.isOpen) return; // the close explains itself
        this.#emit({ type: 'error', phase: 'ping', error });
        // No answer: the connection is dead or stuck. Cut it; the loop reconnects.
        if (error instanceof OrbitTransportError) conn.terminate();
      });
    }, this.#options.pingIntervalMs ?? 15_000);
    timer.unref();
    return timer;
  }

  #dispatch(item: Delivery): void {
    // Stopping: start nothing new. The lease runs out and the server offers the delivery again.
    if (this.#stopping) return;
    this.#track(tracingOn() ? this.#tracedProcess(item) : this.#process(item));
  }

  /**
   * `#process` in a span that is a child of the publish's trace context (docs/sdk.md, Tracing):
   * the handler runs inside it, so its own spans join the trace, and the ACK is its child.
   */
  #tracedProcess(item: Delivery): Promise<void> {
    const { delivery, event } = item;
    return traced(
      'orbit.process',
      {
        kind: SpanKind.CONSUMER,
        parent: parentOf(event.trace_context),
        attributes: {
          'messaging.system': 'orbit',
          'messaging.operation.type': 'process',
          'orbit.subscription.id': delivery.subscription_id,
          'orbit.delivery.id': delivery.id,
          'orbit.event.id': event.id,
          'orbit.event.sequence': event.sequence,
          'orbit.delivery.attempts': delivery.attempts,
        },
      },
      () => this.#process(item),
    );
  }

  async #process(item: Delivery): Promise<void> {
    const { delivery, event } = item;
    this.#stats.delivered++;
    this.#emit({ type: 'delivered', delivery, event });
    const proof: PendingAck = { ...item.proof, subscription_id: delivery.subscription_id, event_id: event.id };
    let handlerFailed = false;
    let duplicate: boolean;
    try {
      const outcome = await this.#options.inbox.transaction(
        event.id,
        async (tx) => {
          try {
            await this.#options.handler({ event, delivery, tx });
          } catch (error) {
            handlerFailed = true;
            throw error;
          }
        },
        {
          entry: { subscription_id: delivery.subscription_id, delivery_id: delivery.id, sequence: event.sequence, event_type: event.type },
          pendingAck: proof,
        },
      );
      duplicate = outcome.duplicate;
    } catch (error) {
      // Rolled back: nothing recorded, no ACK. The lease runs out and the event comes again.
      if (handlerFailed) this.#stats.handlerErrors++;
      trace.getActiveSpan()?.setStatus({ code: SpanStatusCode.ERROR, message: handlerFailed ? 'the handler failed' : 'the inbox failed' });
      this.#emit({ type: 'error', phase: handlerFailed ? 'handler' : 'inbox', error, delivery, event });
      return;
    }
    if (duplicate) this.#stats.duplicates++;
    else this.#stats.handled++;
    this.#emit({ type: duplicate ? 'duplicate' : 'handled', delivery, event });
    // Committed (with the proof): now, and only now, acknowledge.
    await this.#ack(proof, false);
  }

  /** Re-reports every stored proof of this subscription on the current connection. */
  async #replayPending(): Promise<void> {
    let stored: PendingAck[];
    try {
      stored = await this.#options.inbox.pendingAcks(this.#options.subscriptionId);
    } catch (error) {
      this.#emit({ type: 'error', phase: 'inbox', error });
      return;
    }
    await Promise.all(stored.map((proof) => this.#ack(proof, true)));
  }

  async #ack(proof: PendingAck, replayed: boolean): Promise<void> {
    const conn = this.#conn;
    // No connection: the proof stays stored and is re-reported on the next one.
    if (!conn?.isOpen) return;
    const key = `${conn.sessionId}:${proof.delivery_id}:${proof.epoch}`;
    if (this.#acking.has(key)) return;
    this.#acking.add(key);
    try {
      let result: AckResult;
      try {
        const frame = { delivery_id: proof.delivery_id, epoch: proof.epoch, lease_secret: proof.lease_secret };
        result = tracingOn()
          ? await traced(
              'orbit.ack',
              {
                kind: SpanKind.CLIENT,
                attributes: {
                  'orbit.subscription.id': proof.subscription_id,
                  'orbit.delivery.id': proof.delivery_id,
                  'orbit.event.id': proof.event_id,
                  'orbit.ack.replayed': replayed,
                },
              },
              () => conn.ack(frame),
            )
          : await conn.ack(frame);
      } catch (error) {
        if (error instanceof OrbitError && error.code === 'DELIVERY_LEASE_LOST') {
          // Replaced by a newer delivery: forget this proof; the redelivery finds the event in the inbox and ACKs with its own proof.
          await this.#forget(proof);
          this.#stats.leaseLost++;
          this.#emit({ type: 'lease_lost', proof, replayed });
          return;
        }
        this.#emit({ type: 'error', phase: 'ack', error });
        // An unanswered ACK means a stuck connection: reconnect, and the stored proof is re-reported.
        if (error instanceof OrbitTransportError && error.failure === 'timeout') conn.terminate();
        return;
      }
      await this.#forget(proof);
      this.#stats.acked++;
      this.#emit({ type: 'acked', proof, result, replayed });
    } finally {
      this.#acking.delete(key);
    }
  }

  async #forget(proof: PendingAck): Promise<void> {
    try {
      await this.#options.inbox.deletePendingAck(proof.delivery_id, proof.epoch);
    } catch (error) {
      // Harmless: the proof is re-reported later and answered as deduplicated or lease lost.
      this.#emit({ type: 'error', phase: 'inbox', error });
    }
  }
}

/** Creates and starts a consumer. */
export function createEventConsumer<Tx>(options: EventConsumerOptions<Tx>): EventConsumer<Tx> {
  return new EventConsumer(options);
}

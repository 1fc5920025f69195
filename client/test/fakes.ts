/**
 * @module
 * Test-only helpers for the unit tests of this package (client/src/*.test.ts): contract-valid fake
 * deliveries and an in-memory `EventStream`. Under test/, so the package never ships them.
 */
import { randomBytes } from 'node:crypto';
import { encodeBase64url, RawJson } from '@orbit/spec/codec';
import { ConnectionClosedError } from '../src/errors.ts';
import type { AckProof, AckResult, CloseInfo, Delivery, PingResult, Welcome } from '../src/events.ts';
import type { EventStream } from '../src/consumer.ts';
import type { OrbitError } from '@orbit/spec/errors';

export function id(): string {
  return randomBytes(16).toString('hex');
}

export function secret(): string {
  return encodeBase64url(randomBytes(32));
}

export function fakeDelivery(
  subscriptionId: string,
  options: { eventId?: string; deliveryId?: string; epoch?: string; sequence?: string } = {},
): Delivery {
  const eventId = options.eventId ?? id();
  const deliveryId = options.deliveryId ?? id();
  const epoch = options.epoch ?? '1';
  const sequence = options.sequence ?? '1';
  const leaseSecret = secret();
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  return {
    delivery: {
      id: deliveryId,
      subscription_id: subscriptionId,
      event_id: eventId,
      sequence,
      revision: '2',
      state: 'LEASED',
      created_at: now,
      available_at: now,
      lease_epoch: epoch,
      lease_until: now,
      attempts: Number(epoch),
      attempt_budget: 20,
    },
    event: {
      id: eventId,
      sequence,
      type: 'task.succeeded',
      aggregate_kind: 'task',
      aggregate_id: id(),
      aggregate_revision: '1',
      occurred_at: now,
      details: new RawJson('{}'),
      snapshot: {
        schema_version: 1,
        task_id: id(),
        queue_id: id(),
        state: 'SUCCEEDED',
        revision: '1',
        effect_uncertain: false,
        result: new RawJson('12345678901234567890123'),
      },
    },
    leaseSecret,
    proof: { delivery_id: deliveryId, epoch, lease_secret: leaseSecret },
    sessionId: id(),
  };
}

type AckBehaviour = (proof: AckProof) => Promise<AckResult>;

/** An in-memory connection: push deliveries, script ACK answers, end it with an error. */
export class FakeStream implements EventStream {
  readonly sessionId = id();
  readonly welcome: Welcome;
  readonly acks: AckProof[] = [];
  readonly pings: number[] = [];
  closedWith: CloseInfo | null = null;
  terminated = false;
  onAck: AckBehaviour;
  readonly #buffer: Delivery[] = [];
  #end: { error: OrbitError | null } | null = null;
  #wake: (() => void) | null = null;
  #resolveEnded!: (error: OrbitError | null) => void;
  readonly #ended = new Promise<OrbitError | null>((resolve) => (this.#resolveEnded = resolve));

  constructor(subscriptionId: string, onAck?: AckBehaviour) {
    this.welcome = {
      session_id: this.sessionId,
      subscription_id: subscriptionId,
      capacity: 4,
      lease_duration_ms: 30000,
      heartbeat_interval_ms: 15000,
      server_time: new Date().toISOString(),
      enabled: true,
    };
    this.onAck =
      onAck ??
      (async (proof) => ({
        delivery_id: proof.delivery_id,
        event_id: id(),
        epoch: proof.epoch,
        acknowledged_at: new Date().toISOString(),
        deduplicated: false,
      }));
  }

  get isOpen(): boolean {
    return this.#end === null;
  }

  push(delivery: Delivery): void {
    this.#buffer.push(delivery);
    this.#signal();
  }

  /** Ends the stream as the server would (an error) or as a client close (null). */
  end(error: OrbitError | null = new ConnectionClosedError('UNAVAILABLE', 'cut', 1006, '')): void {
    if (this.#end) return;
    this.#end = { error };
    this.closedWith = { code: error ? 1006 : 1000, reason: '', error: error as CloseInfo['error'] };
    this.#resolveEnded(error);
    this.#signal();
  }

  #signal(): void {
    const wake = this.#wake;
    this.#wake = null;
    wake?.();
  }

  async ack(proof: AckProof): Promise<AckResult> {
    if (!this.isOpen) throw new ConnectionClosedError('UNAVAILABLE', 'closed', 1006, '');
    this.acks.push(proof);
    // Like a real connection, an unanswered request fails when the connection ends.
    return Promise.race([
      this.onAck(proof),
      this.#ended.then((error) => Promise.reject(error ?? new ConnectionClosedError('UNAVAILABLE', 'closed by the client', 1000, ''))),
    ]);
  }

  async ping(): Promise<PingResult> {
    this.pings.push(Date.now());
    return { server_time: new Date().toISOString(), enabled: true };
  }

  async close(): Promise<CloseInfo> {
    this.end(null);
    return this.closedWith!;
  }

  terminate(): void {
    this.terminated = true;
    this.end();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<Delivery> {
    for (;;) {
      const next = this.#buffer.shift();
      if (next) {
        yield next;
        continue;
      }
      if (this.#end) {
        if (this.#end.error) throw this.#end.error;
        return;
      }
      await new Promise<void>((resolve) => (this.#wake = resolve));
    }
  }
}

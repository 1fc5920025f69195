/**
 * The delivery engine driven directly, without sockets: a store on a fresh database, a node, a
 * subscription with bound sessions, and turns whose every input the test chooses. What the engine
 * returns is exactly what a connection would be sent, so a test can ACK it as a consumer would, at
 * moments it picks: the counts of statements and commits then do not depend on timing
 * (engine-cost.test.ts), and random operation sequences are repeatable (engine-counters.test.ts).
 */
import { randomBytes } from 'node:crypto';
import { ALL_PERMISSIONS, freshDatabase, type StoreKind, type TestDatabase } from '@orbit/testing';
import { DeliveryEngine, type Principal, Store } from '../src/internal.ts';
import type { AckRequest, Leased, TurnHints, TurnOutcome } from '../src/engine/engine.ts';
import { redeliveryPolicy } from '../src/domain/delivery.ts';
import type { ResultInput } from '../src/store/store.ts';
import { publishKey } from '../src/http/results.ts';
import { RawJson } from '@orbit/spec/codec';

export const POLICY = redeliveryPolicy({ redeliveryBackoffMs: 0, redeliveryBackoffMaxMs: 0 });

const key = () => randomBytes(8).toString('hex');
/** A publish's details and result: about 600 characters of JSON text together. */
const PAYLOAD = {
  details: `{"worker":"worker-01","region":"local","note":"${'n'.repeat(60)}"}`,
  result: `{"output_uri":"s3://bucket/results/${'0'.repeat(32)}.json","bytes":12345678901234567890,"summary":"${'s'.repeat(380)}"}`,
};
const writeKey = () => ({ key: key(), digest: randomBytes(32).toString('hex'), render: () => ({ status: 200, body: '{}' }) });

export interface EngineWorld {
  readonly db: TestDatabase;
  readonly store: Store;
  readonly engine: DeliveryEngine;
  readonly nodeId: string;
  close(): Promise<void>;
}

export async function openWorld(kind: StoreKind): Promise<EngineWorld> {
  const db = await freshDatabase(kind);
  const store = await Store.open(db.url);
  const nodeId = key().padEnd(32, '0');
  await store.registerNode({ id: nodeId, description: 'engine test' });
  return {
    db,
    store,
    engine: new DeliveryEngine(store.db, store.clock),
    nodeId,
    async close() {
      await store.close();
      await db.drop();
    },
  };
}

/** A namespace with one queue and a credential for it: subscriptions and publishes. */
export class Tenant {
  private constructor(
    readonly world: EngineWorld,
    readonly principal: Principal,
    readonly queueId: string,
  ) {}

  static async create(world: EngineWorld): Promise<Tenant> {
    const boot = await world.store.bootstrap({ namespace: `n-${key()}`, application: 'app', queues: ['q'], permissions: ALL_PERMISSIONS });
    return new Tenant(world, (await world.store.authenticate(boot.token))!, boot.queue_ids.q!);
  }

  /** Appends `n` results of `type` to the queue, in one transaction. */
  async publish(n: number, type: ResultInput['type'] = 'task.succeeded'): Promise<void> {
    await this.world.store.appendResults(Array.from({ length: n }, () => this.result(type)));
  }

  /** A result for the queue, as a publisher sends it. */
  result(type: ResultInput['type'] = 'task.succeeded'): ResultInput {
    return { queueId: this.queueId, type, taskId: key().padEnd(32, '2'), taskRevision: '1' };
  }

  /**
   * A batch publish through the HTTP seam's store function: one item per key, each with about 600
   * characters of details and result (as the benchmark's), answered as the route answers.
   */
  async publishBatch(n: number): Promise<void> {
    await this.world.store.publishResults(
      this.principal,
      this.queueId,
      Array.from({ length: n }, () => ({
        input: { ...this.result(), details: new RawJson(PAYLOAD.details), result: new RawJson(PAYLOAD.result) },
        write: publishKey(key(), randomBytes(32).toString('hex')),
      })),
    );
  }

  async subscribe(options: { maxPending?: number; maxAttempts?: number } = {}): Promise<Consumer> {
    const written = await this.world.store.createSubscription(
      this.principal,
      { name: `s-${key()}`, queue_id: this.queueId, max_pending: options.maxPending ?? 1000, max_attempts: options.maxAttempts ?? 20 },
      writeKey(),
    );
    if (written.replayed) throw new Error('a fresh key was replayed');
    return new Consumer(this, written.value.id, written.value.types, written.value.cursorSequence);
  }
}

/** One subscription, with the turn's inputs a lane would give. */
export class Consumer {
  /** What the last turn saw, as a lane keeps it. */
  hints: TurnHints;
  readonly sessions: string[] = [];

  constructor(
    readonly tenant: Tenant,
    readonly subscriptionId: string,
    readonly types: readonly string[],
    cursor: bigint,
  ) {
    this.hints = { cursor, waiting: true, checkAt: null };
  }

  /** A subscription of a tenant of its own. */
  static async create(world: EngineWorld, options: { maxPending?: number; maxAttempts?: number } = {}): Promise<Consumer> {
    return (await Tenant.create(world)).subscribe(options);
  }

  get world(): EngineWorld {
    return this.tenant.world;
  }

  get principal(): Principal {
    return this.tenant.principal;
  }

  get queueId(): string {
    return this.tenant.queueId;
  }

  publish(n: number, type: ResultInput['type'] = 'task.succeeded'): Promise<void> {
    return this.tenant.publish(n, type);
  }

  async bind(capacity: number): Promise<string> {
    const id = key().padEnd(32, '1');
    await this.world.engine.bind(this.principal, { id, nodeId: this.world.nodeId, subscriptionId: this.subscriptionId, capacity });
    this.sessions.push(id);
    return id;
  }

  /** One turn, as a lane runs it: `acks` in order, `rooms` per session. */
  async turn(acks: readonly AckRequest[], rooms: readonly { id: string; room: number }[], leaseMs = 60_000): Promise<TurnOutcome> {
    const outcome = await this.world.engine.turn({
      subscriptionId: this.subscriptionId,
      queueId: this.queueId,
      types: this.types,
      acks,
      sessions: rooms,
      leaseMs,
      policy: POLICY,
      hints: this.hints,
    });
    this.hints = outcome.hints;
    return outcome;
  }

  async configure(enabled: boolean): Promise<void> {
    const current = await this.world.store.getSubscription(this.principal, this.subscriptionId);
    await this.world.store.configureSubscription(
      this.principal,
      this.subscriptionId,
      { expected_revision: current.revision.toString(), enabled, reason: 'test' },
      writeKey(),
    );
  }

  /** A manual retry of an EXPIRED delivery (1 more attempt). */
  async retry(deliveryId: string): Promise<void> {
    const { delivery } = await this.world.store.getDelivery(this.principal, this.subscriptionId, deliveryId);
    await this.world.store.retryDelivery(
      this.principal,
      { subscriptionId: this.subscriptionId, deliveryId },
      { expected_revision: delivery.revision.toString(), reason: 'test', additional_attempts: 1 },
      writeKey(),
    );
  }
}

/** The proof a consumer sends back for a delivery. */
export function proofOf(item: Leased): AckRequest {
  return { deliveryId: item.delivery.id, epoch: item.delivery.leaseEpoch, secret: item.secret };
}

/**
 * @module
 * The repository: the one interface the HTTP layer, the WebSocket engine and the CLI use, the same
 * for both stores. It owns the database handle and the deployment's cursor secret.
 */
import { randomBytes } from 'node:crypto';
import type { DeliveryState } from '../domain/delivery.ts';
import { PageCursors } from '../domain/page-cursor.ts';
import * as deliveries from './deliveries.ts';
import { Batcher } from './batcher.ts';
import type { Delivery } from '../domain/delivery.ts';
import type { SubscriptionRecord } from '../domain/subscription.ts';
import type { HistoryRecord, QueueRecord, ResultRecord, SessionRecord } from './records.ts';
import { expireReceipts, scopeOf, type StoredAnswer, type WriteKey, type Written } from './idempotency.ts';
import { migrate, type MigrationReport } from './migrate.ts';
import { openDatabase, type OpenOptions } from './open.ts';
import { highestAppended, MAX_GROUP_BYTES, publishAll, publishWeight, type PublishOutcome, type PublishRequest } from './publish.ts';
import type { Page } from './paging.ts';
import * as principals from './principal.ts';
import { PrincipalCache } from './principal-cache.ts';
import type { BootstrapInput, BootstrapResult, Principal } from './principal.ts';
import * as results from './results.ts';
import { oldestResults, prune, type PruneOptions, type PruneReport } from './retention.ts';
import * as health from './health.ts';
import * as cluster from './cluster.ts';
import { listHistory } from './history.ts';
import { listQueues } from './queues.ts';
import { TrackedDatabase } from './tracked.ts';
import { tracedCommit, tracingOn } from '../tracing.ts';
import { DatabaseClock } from './clock.ts';
import * as sessions from './sessions.ts';
import type { ResultInput } from './results.ts';
import type { Database, Sql } from './sql.ts';
import * as subscriptions from './subscriptions.ts';

export type { Principal, BootstrapInput, BootstrapResult, ResultInput };
export type { Page } from './paging.ts';
export type { Readiness } from './health.ts';
export type { Delivery, HistoryRecord, QueueRecord, ResultRecord, SessionRecord, SubscriptionRecord, StoredAnswer, WriteKey, Written };
export type { PublishOutcome };
export { DatabaseOpenError } from './open.ts';

async function deploymentSecret(db: Database): Promise<string> {
  await db.transaction(async (tx) => {
    await tx.run(`${tx.phrases.insertIgnore} INTO orbit_meta (name, value) VALUES ('cursor_secret', ?)`, [randomBytes(32).toString('hex')]);
  });
  const [row] = await db.all("SELECT value FROM orbit_meta WHERE name = 'cursor_secret'");
  return String(row!.value);
}

export class Store {
  private appendListeners = new Set<(head: bigint) => void>();
  /** Publishes through the seam that arrive together commit together (see `publish.ts`). */
  private readonly publishes = new Batcher<PublishRequest, PublishOutcome>(
    async (requests) => {
      const outcomes = await (tracingOn()
        ? tracedCommit(
            requests.map((r) => r.input.traceContext),
            () => publishAll(this.db, requests),
          )
        : publishAll(this.db, requests));
      const head = highestAppended(outcomes);
      if (head !== undefined) this.notifyAppended(head);
      return outcomes;
    },
    { weigh: publishWeight, maxWeight: MAX_GROUP_BYTES },
  );

  /** The database's clock as this node last saw it (see `clock.ts`). */
  readonly clock = new DatabaseClock();

  /**
   * Bearer authentication for HTTP requests and WebSocket upgrades: answers at most 1 s old (see
   * `principal-cache.ts`). `authenticate` below always asks the database.
   */
  readonly authenticator = new PrincipalCache((digest) => this.authenticateDigest(digest));

  private constructor(
    /** The database, counting operations in flight (see `drain`). */
    readonly db: TrackedDatabase,
    readonly cursors: PageCursors,
    readonly migrations: MigrationReport,
  ) {}

  /**
   * Opens the database, applies pending migrations and loads the deployment secret. A missing MySQL
   * database is refused unless `createDatabase` is set (see `open.ts`).
   */
  static async open(url: string, options: OpenOptions = {}): Promise<Store> {
    const db = new TrackedDatabase(await openDatabase(url, options));
    try {
      const report = await migrate(db);
      return new Store(db, new PageCursors(await deploymentSecret(db)), report);
    } catch (error) {
      await db.close();
      throw error;
    }
  }

  close(): Promise<void> {
    return this.db.close();
  }

  /** The database, for logs: its kind and location, without credentials. */
  get description(): string {
    return this.db.description;
  }

  /**
   * Resolves once no statement or transaction is running (graceful shutdown). Idle must hold across
   * a turn of the event loop: a caller may chain its next transaction right after one commits.
   */
  async drain(): Promise<void> {
    do {
      await this.db.idle();
      await new Promise((resolve) => setImmediate(resolve));
    } while (this.db.inFlight > 0);
  }

  authenticate(token: string): Promise<Principal | null> {
    return principals.authenticate(this.db, token, Date.now());
  }

  /** Re-authenticates by the digest a principal was authenticated with (`Principal.tokenDigest`). */
  authenticateDigest(digest: string): Promise<Principal | null> {
    return principals.authenticateDigest(this.db, digest, Date.now());
  }

  principalById(credentialId: string): Promise<Principal | null> {
    return principals.principalById(this.db, credentialId);
  }

  async revokeCredential(credentialId: string): Promise<boolean> {
    const revoked = await principals.revokeCredential(this.db, credentialId, Date.now());
    this.authenticator.clear();
    return revoked;
  }

  /** Credentials, oldest first (optionally one namespace, by name, or one id); null for an unknown namespace. */
  listCredentials(filter: { namespace?: string; id?: string } = {}): Promise<principals.CredentialInfo[] | null> {
    return principals.listCredentials(this.db, filter, Date.now());
  }

  /** A new token for the same credential; the old one keeps working for `graceMs` (0: stops at once). */
  async rotateCredential(credentialId: string, graceMs: number): Promise<principals.RotateOutcome> {
    const outcome = await this.db.transaction((tx) => principals.rotateCredential(tx, credentialId, graceMs, Date.now()));
    this.authenticator.clear();
    return outcome;
  }

  bootstrap(input: BootstrapInput): Promise<BootstrapResult> {
    return this.db.transaction((tx) => principals.bootstrap(tx, input, Date.now()));
  }

  // --- the result log -------------------------------------------------------------------------

  /**
   * Registers a callback run after every append committed through this store, with the highest
   * sequence it appended: the committed head at that commit (the head row serializes appends).
   */
  onAppend(listener: (head: bigint) => void): () => void {
    this.appendListeners.add(listener);
    return () => this.appendListeners.delete(listener);
  }

  /** Tells local listeners that results up to `head` were committed (call after your own transaction commits). */
  notifyAppended(head: bigint): void {
    for (const listener of this.appendListeners) listener(head);
  }

  /** Appends inside your own transaction; call `notifyAppended()` once it has committed. */
  appendResultsIn(tx: Sql, inputs: readonly ResultInput[]): Promise<ResultRecord[]> {
    return results.appendResults(tx, inputs, Date.now());
  }

  async appendResults(inputs: readonly ResultInput[]): Promise<ResultRecord[]> {
    if (inputs.length === 0) return [];
    const rows = tracingOn()
      ? await tracedCommit(
          inputs.map((input) => input.traceContext),
          () => this.db.transaction((tx) => results.appendAndCommit(tx, inputs, Date.now())),
        )
      : await this.db.transaction((tx) => results.appendAndCommit(tx, inputs, Date.now()));
    const last = rows[rows.length - 1];
    if (last) this.notifyAppended(last.sequence);
    return rows;
  }

  /** The HTTP seam: one idempotent append, scoped to the credential and queue, committed in a group. */
  async publishResult(principal: Principal, input: ResultInput, write: WriteKey<ResultRecord>): Promise<Written<ResultRecord>> {
    subscriptions.requireQueue(principal, input.queueId);
    const outcome = await this.publishes.submit({
      scope: scopeOf(principal.credentialId, `publish:${input.queueId}`, write),
      input,
      render: write.render,
    });
    if ('error' in outcome) throw outcome.error;
    return outcome.written;
  }

  /**
   * A batch publish (spec/README.md, Batch publish): every item is a publish of its own key, the
   * keys are distinct, and the batch commits as one group of its own (never split, never merged
   * with the seam's other groups). Each item gets its own outcome; this node's waiting sessions
   * are woken once.
   */
  async publishResults(
    principal: Principal,
    queueId: string,
    items: readonly { readonly input: ResultInput; readonly write: WriteKey<ResultRecord> }[],
  ): Promise<PublishOutcome[]> {
    if (items.some((item) => item.input.queueId !== queueId)) throw new Error('every item of a batch publishes to its queue');
    subscriptions.requireQueue(principal, queueId);
    if (items.length === 0) return [];
    const requests = items.map(({ input, write }) => ({
      scope: scopeOf(principal.credentialId, `publish:${queueId}`, write),
      input,
      render: write.render,
    }));
    const outcomes = await (tracingOn()
      ? tracedCommit(
          items.map((item) => item.input.traceContext),
          () => publishAll(this.db, requests),
        )
      : publishAll(this.db, requests));
    const head = highestAppended(outcomes);
    if (head !== undefined) this.notifyAppended(head);
    return outcomes;
  }

  /** Removes results below `beforeSequence` (retention); see `retention.ts`. */
  prune(beforeSequence: bigint, options?: PruneOptions): Promise<PruneReport> {
    return prune(this.db, beforeSequence, options);
  }

  /** Removes at most `batch` idempotency receipts older than `maxAgeMs` (see `idempotency.ts`). */
  expireReceipts(maxAgeMs: number, batch: number): Promise<{ deleted: number; full: boolean }> {
    return expireReceipts(this.db, Date.now() - maxAgeMs, batch);
  }

  /** The oldest results above the retention boundary, for retention by age. */
  oldestResults(after: bigint, limit: number): ReturnType<typeof oldestResults> {
    return oldestResults(this.db, after, limit);
  }

  /** Whether a queue with this id exists (in any namespace): for the operator's `orbit publish`. */
  async queueExists(queueId: string): Promise<boolean> {
    const [row] = await this.db.all('SELECT id FROM queues WHERE id = ?', [queueId]);
    return row !== undefined;
  }

  logPosition(): Promise<results.LogPosition> {
    return results.logPosition(this.db);
  }

  // --- subscriptions --------------------------------------------------------------------------

  createSubscription(
    principal: Principal,
    input: Parameters<typeof subscriptions.createSubscription>[2],
    write: WriteKey<SubscriptionRecord>,
  ): Promise<Written<SubscriptionRecord>> {
    return subscriptions.createSubscription(this.db, principal, input, write, Date.now());
  }

  getSubscription(principal: Principal, id: string): Promise<SubscriptionRecord> {
    return subscriptions.ownedSubscription(this.db, principal, id);
  }

  listSubscriptions(principal: Principal, args: { queueId: string; limit: number; cursor?: string }): Promise<Page<SubscriptionRecord>> {
    return subscriptions.listSubscriptions(this.db, this.cursors, principal, args);
  }

  configureSubscription(
    principal: Principal,
    id: string,
    input: Parameters<typeof subscriptions.configureSubscription>[3],
    write: WriteKey<SubscriptionRecord>,
  ): Promise<Written<SubscriptionRecord>> {
    return subscriptions.configureSubscription(this.db, principal, id, input, write, Date.now());
  }

  retireSubscription(
    principal: Principal,
    id: string,
    input: Parameters<typeof subscriptions.retireSubscription>[3],
    write: WriteKey<SubscriptionRecord>,
  ): Promise<Written<SubscriptionRecord>> {
    return subscriptions.retireSubscription(this.db, principal, id, input, write, Date.now());
  }

  /** The subscription as its owner sees it now, or NOT_FOUND. */
  ownedSubscription(principal: Principal, id: string): ReturnType<typeof subscriptions.ownedSubscription> {
    return subscriptions.ownedSubscription(this.db, principal, id);
  }

  // --- nodes and sessions ---------------------------------------------------------------------

  /** Registers (or renews) this node's row. */
  registerNode(node: sessions.NodeInfo): Promise<void> {
    return sessions.registerNode(this.db, node);
  }

  /** Renews the node and its active sessions; removes nodes dead for `ttlMs` with their sessions. */
  heartbeat(node: sessions.NodeInfo, activeSessions: readonly string[], ttlMs: number): Promise<number> {
    return sessions.heartbeat(this.db, node, activeSessions, ttlMs);
  }

  deregisterNode(nodeId: string): Promise<void> {
    return sessions.deregisterNode(this.db, nodeId);
  }

  closeSession(sessionId: string): Promise<void> {
    return sessions.closeSession(this.db, sessionId);
  }

  /** The subscription's sessions on every live node, newest first (see `cluster.ts`). */
  listSessions(
    principal: Principal,
    args: { subscriptionId: string; limit: number; cursor?: string; nodeTtlMs: number },
  ): Promise<Page<SessionRecord>> {
    return cluster.listSessions(this.db, this.cursors, principal, args);
  }

  /** Live nodes, their sessions and the backlog of every subscription: the same on every node. */
  clusterOverview(nodeTtlMs: number): Promise<cluster.ClusterOverview> {
    return cluster.clusterOverview(this.db, nodeTtlMs);
  }

  /** Sessions on live nodes per subscription, for the metrics. */
  sessionsBySubscription(subscriptionIds: readonly string[], nodeTtlMs: number): Promise<Map<string, number>> {
    return cluster.sessionsBySubscription(this.db, subscriptionIds, nodeTtlMs);
  }

  /** What consume access depends on, per subscription (see `domain/access.ts`). */
  accessOf(subscriptionIds: readonly string[]): ReturnType<typeof sessions.accessOf> {
    return sessions.accessOf(this.db, subscriptionIds);
  }

  // --- operations -----------------------------------------------------------------------------

  /** Whether the database answers and every migration of this build is applied. */
  readiness(): Promise<health.Readiness> {
    return health.readiness(this.db);
  }

  /** Backlog per non-retired subscription (at most `limit`), one query: for the metrics. */
  backlog(limit: number): Promise<health.BacklogRow[]> {
    return health.backlog(this.db, limit);
  }

  /** The queues of the principal's queue set, newest first. */
  listQueues(principal: Principal, args: { limit: number; cursor?: string }): Promise<Page<QueueRecord>> {
    return listQueues(this.db, this.cursors, principal, args);
  }

  /** The subscription's audit trail, newest first. */
  listHistory(principal: Principal, args: { subscriptionId: string; limit: number; cursor?: string }): Promise<Page<HistoryRecord>> {
    return listHistory(this.db, this.cursors, principal, args);
  }

  // --- deliveries -----------------------------------------------------------------------------

  listDeliveries(
    principal: Principal,
    args: { subscriptionId: string; state?: DeliveryState; limit: number; cursor?: string },
  ): Promise<Page<Delivery>> {
    return deliveries.listDeliveries(this.db, this.cursors, principal, args);
  }

  getDelivery(principal: Principal, subscriptionId: string, deliveryId: string): ReturnType<typeof deliveries.getDelivery> {
    return deliveries.getDelivery(this.db, principal, subscriptionId, deliveryId);
  }

  retryDelivery(
    principal: Principal,
    ids: { subscriptionId: string; deliveryId: string },
    input: Parameters<typeof deliveries.retryExpiredDelivery>[3],
    write: WriteKey<Delivery>,
  ): Promise<Written<Delivery>> {
    return deliveries.retryExpiredDelivery(this.db, principal, ids, input, write);
  }
}

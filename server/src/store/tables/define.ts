/**
 * @module
 * Orbit's tables, written once for both stores. `sqlite.ts` and `mysql.ts` pass in their dialect's
 * drizzle builders and column types; drizzle-kit reads the tables they export and writes the
 * migrations under `server/migrations/<dialect>/`. Times are epoch milliseconds in 64-bit integer
 * columns and booleans are 0/1 integers in both stores, so the repository's SQL is the same for
 * both. To change the schema: edit this file, run `npm run db:generate`, commit what it writes.
 */

/** The column types of the schema; each dialect spells them in its own SQL. */
export interface ColumnTypes<B> {
  /** 32 hex characters. */
  id(): B;
  /** Up to `length` characters, compared byte for byte. */
  str(length: number): B;
  /** Unbounded text (JSON documents, reasons). */
  text(): B;
  u64(): B;
  i64(): B;
  int(): B;
  /** 0 or 1. */
  bool(): B;
}

/** The part of a drizzle column builder this module uses. */
export interface ColumnBuilder<B> {
  notNull(): B;
  primaryKey(): B;
  /** The value existing rows get when the column is added (counters start at 0). */
  default(value: number): B;
}

/** A dialect's drizzle builders: `sqliteTable` or `mysqlTable`, and the keys that go with it. */
export interface Dialect<B extends ColumnBuilder<B>, C extends { name: string }, E, T> extends ColumnTypes<B> {
  table<K extends string>(name: string, columns: Record<K, B>, extras?: (self: Record<K, C>) => E[]): T;
  index(name: string): { on(...columns: [C, ...C[]]): E };
  unique(name?: string): { on(...columns: [C, ...C[]]): E };
  primaryKey(config: { columns: [C, ...C[]] }): E;
  /** The name of a UNIQUE constraint; undefined leaves it to drizzle. */
  uniqueName(columns: readonly C[]): string | undefined;
}

export function defineTables<B extends ColumnBuilder<B>, C extends { name: string }, E, T>(d: Dialect<B, C, E, T>) {
  const { table, id, str, text, u64, i64, int, bool } = d;
  const key = () => id().notNull().primaryKey();
  const unique = (...columns: [C, ...C[]]) => d.unique(d.uniqueName(columns)).on(...columns);
  const index = (name: string, ...columns: [C, ...C[]]) => d.index(name).on(...columns);

  return {
    orbit_meta: table('orbit_meta', { name: str(64).notNull().primaryKey(), value: text().notNull() }),
    namespaces: table('namespaces', { id: key(), name: str(128).notNull(), created_at: i64().notNull() }, (t) => [unique(t.name)]),
    applications: table(
      'applications',
      { id: key(), namespace_id: id().notNull(), name: str(128).notNull(), created_at: i64().notNull() },
      (t) => [unique(t.namespace_id, t.name)],
    ),
    queues: table('queues', { id: key(), namespace_id: id().notNull(), name: str(128).notNull(), created_at: i64().notNull() }, (t) => [
      unique(t.namespace_id, t.name),
    ]),
    credentials: table(
      'credentials',
      {
        id: key(),
        namespace_id: id().notNull(),
        application_id: id().notNull(),
        token_digest: str(64).notNull(),
        permissions: str(1024).notNull(),
        created_at: i64().notNull(),
        revoked_at: i64(),
        // A rotation keeps the replaced token valid until this time (the grace period).
        previous_token_digest: str(64),
        previous_token_expires_at: i64(),
      },
      (t) => [unique(t.token_digest), unique(t.previous_token_digest)],
    ),
    credential_queues: table('credential_queues', { credential_id: id().notNull(), queue_id: id().notNull() }, (t) => [
      d.primaryKey({ columns: [t.credential_id, t.queue_id] }),
    ]),
    // One row: the committed head of the result log and the retention boundary. Appenders lock it,
    // so sequences commit in order and every sequence at or below the head is committed. The row
    // itself is inserted by the custom migration `result_head`.
    result_head: table('result_head', {
      id: int().notNull().primaryKey(),
      head_sequence: u64().notNull(),
      retention_boundary: u64().notNull(),
    }),
    results: table(
      'results',
      {
        sequence: u64().notNull().primaryKey(),
        id: id().notNull(),
        queue_id: id().notNull(),
        type: str(32).notNull(),
        task_id: id().notNull(),
        task_revision: str(20).notNull(),
        occurred_at: i64().notNull(),
        details: text().notNull(),
        result: text(),
        effect_uncertain: bool().notNull(),
        current_attempt_id: id(),
        // The publish's W3C trace context, as published (spec/README.md, Trace context).
        traceparent: str(55),
        tracestate: str(512),
      },
      (t) => [unique(t.id), index('results_by_queue', t.queue_id, t.sequence)],
    ),
    subscriptions: table(
      'subscriptions',
      {
        id: key(),
        namespace_id: id().notNull(),
        application_id: id().notNull(),
        credential_id: id().notNull(),
        queue_id: id().notNull(),
        name: str(128).notNull(),
        active_name: str(128),
        revision: u64().notNull(),
        enabled: bool().notNull(),
        types: str(128).notNull(),
        cursor_sequence: u64().notNull(),
        max_pending: int().notNull(),
        max_attempts: int().notNull(),
        created_at: i64().notNull(),
        updated_at: i64().notNull(),
        retired_at: i64(),
        retired_sequence: u64(),
        // The delivery engine keeps these under the subscription's row lock, in the transactions
        // that change them (spec/README.md, "The delivery engine"), so no claim counts rows:
        // deliveries that are not ACKED (the API's pending_count), those of them in PENDING, and
        // a time before which no lease of the subscription ends (null: none is leased).
        pending_count: int().notNull().default(0),
        waiting_count: int().notNull().default(0),
        lease_check_at: i64(),
      },
      (t) => [
        unique(t.namespace_id, t.active_name),
        index('subscriptions_by_owner', t.queue_id, t.credential_id, t.created_at, t.id),
        index('subscriptions_by_namespace', t.namespace_id, t.retired_at),
        // The lease sweep finds the subscriptions whose leases may have ended.
        index('subscriptions_by_lease_check', t.lease_check_at),
      ],
    ),
    deliveries: table(
      'deliveries',
      {
        id: key(),
        subscription_id: id().notNull(),
        sequence: u64().notNull(),
        event_id: id().notNull(),
        revision: u64().notNull(),
        state: str(8).notNull(),
        created_at: i64().notNull(),
        available_at: i64().notNull(),
        lease_epoch: u64().notNull(),
        lease_until: i64(),
        lease_digest: str(64),
        lease_session: id(),
        attempts: int().notNull(),
        attempt_budget: int().notNull(),
        acknowledged_at: i64(),
      },
      // Every index is paid for on every delivery: an insert writes each, and a change of state
      // rewrites each that holds `state`. So there are two besides the keys: the list in creation
      // order, which a delivery enters once, and the engine's work index, which serves PENDING
      // rows in sequence order (their lease_until is null), LEASED rows by lease end (recovery),
      // and the rows of one state (the list filtered by a state that is not ACKED, retention).
      (t) => [
        unique(t.subscription_id, t.sequence),
        index('deliveries_list', t.subscription_id, t.created_at, t.id),
        index('deliveries_work', t.subscription_id, t.state, t.lease_until, t.sequence),
      ],
    ),
    idempotency_records: table(
      'idempotency_records',
      {
        credential_id: id().notNull(),
        scope: str(96).notNull(),
        idem_key: str(255).notNull(),
        request_digest: str(64).notNull(),
        status: int().notNull(),
        response: text().notNull(),
        created_at: i64().notNull(),
        // The result of a publish receipt: a replay renders it again (spec/README.md, Idempotency).
        sequence: u64(),
      },
      (t) => [
        d.primaryKey({ columns: [t.credential_id, t.scope, t.idem_key] }),
        index('idempotency_by_age', t.created_at),
        index('idempotency_by_sequence', t.sequence),
      ],
    ),
    // The Orbit processes serving this database; a node renews `last_seen_at` while it runs, and
    // one that stops renewing is gone (its sessions with it).
    nodes: table(
      'nodes',
      { id: key(), description: str(255).notNull(), started_at: i64().notNull(), last_seen_at: i64().notNull() },
      (t) => [index('nodes_by_last_seen', t.last_seen_at)],
    ),
    // Live event connections: which node serves them, for which subscription, with what capacity.
    // Claims enforce capacity from here and from the leases that name the session.
    sessions: table(
      'sessions',
      {
        id: key(),
        node_id: id().notNull(),
        subscription_id: id().notNull(),
        credential_id: id().notNull(),
        capacity: int().notNull(),
        connected_at: i64().notNull(),
        last_seen_at: i64().notNull(),
        // LEASED deliveries that name this session, kept by the engine with its leases, ACKs and
        // recoveries: a claim leases to the session at most `capacity - held`.
        held: int().notNull().default(0),
      },
      (t) => [index('sessions_by_subscription', t.subscription_id), index('sessions_by_node', t.node_id)],
    ),
    audit_log: table(
      'audit_log',
      {
        id: key(),
        subscription_id: id().notNull(),
        delivery_id: id(),
        credential_id: id().notNull(),
        action: str(32).notNull(),
        reason: text().notNull(),
        revision: str(20).notNull(),
        detail: text().notNull(),
        created_at: i64().notNull(),
      },
      (t) => [index('audit_by_subscription', t.subscription_id, t.created_at)],
    ),
  };
}

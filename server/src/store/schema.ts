/**
 * @module
 * The database schema as ordered migrations, one DDL list per dialect. Times are epoch
 * milliseconds in BIGINT columns and booleans are 0/1 integers in both stores, so the repository's
 * SQL is the same for both. A migration, once released, is never edited: add a new one.
 */
import type { Dialect } from './sql.ts';

export interface Migration {
  readonly version: number;
  readonly name: string;
  readonly statements: Readonly<Record<Dialect, readonly string[]>>;
}

/** Column types that differ between the dialects. */
const T = {
  sqlite: { id: 'TEXT', u64: 'INTEGER', i64: 'INTEGER', int: 'INTEGER', bool: 'INTEGER', text: 'TEXT', str: (_n: number) => 'TEXT', table: '' },
  mysql: {
    id: 'CHAR(32) CHARACTER SET ascii COLLATE ascii_bin',
    u64: 'BIGINT UNSIGNED',
    i64: 'BIGINT',
    int: 'INT',
    bool: 'TINYINT',
    text: 'LONGTEXT',
    str: (n: number) => `VARCHAR(${n}) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin`,
    table: ' ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin',
  },
} as const;

function initial(d: Dialect): string[] {
  const t = T[d];
  return [
    `CREATE TABLE orbit_meta (name ${t.str(64)} NOT NULL PRIMARY KEY, value ${t.text} NOT NULL)${t.table}`,
    `CREATE TABLE namespaces (id ${t.id} NOT NULL PRIMARY KEY, name ${t.str(128)} NOT NULL UNIQUE, created_at ${t.i64} NOT NULL)${t.table}`,
    `CREATE TABLE applications (id ${t.id} NOT NULL PRIMARY KEY, namespace_id ${t.id} NOT NULL, name ${t.str(128)} NOT NULL, created_at ${t.i64} NOT NULL, UNIQUE (namespace_id, name))${t.table}`,
    `CREATE TABLE queues (id ${t.id} NOT NULL PRIMARY KEY, namespace_id ${t.id} NOT NULL, name ${t.str(128)} NOT NULL, created_at ${t.i64} NOT NULL, UNIQUE (namespace_id, name))${t.table}`,
    `CREATE TABLE credentials (id ${t.id} NOT NULL PRIMARY KEY, namespace_id ${t.id} NOT NULL, application_id ${t.id} NOT NULL, token_digest ${t.str(64)} NOT NULL UNIQUE, permissions ${t.str(1024)} NOT NULL, created_at ${t.i64} NOT NULL, revoked_at ${t.i64} NULL)${t.table}`,
    `CREATE TABLE credential_queues (credential_id ${t.id} NOT NULL, queue_id ${t.id} NOT NULL, PRIMARY KEY (credential_id, queue_id))${t.table}`,
    // One row: the committed head of the result log and the retention boundary. Appenders lock it,
    // so sequences commit in order and every sequence at or below the head is committed.
    `CREATE TABLE result_head (id ${t.int} NOT NULL PRIMARY KEY, head_sequence ${t.u64} NOT NULL, retention_boundary ${t.u64} NOT NULL)${t.table}`,
    `INSERT INTO result_head (id, head_sequence, retention_boundary) VALUES (1, 0, 0)`,
    `CREATE TABLE results (sequence ${t.u64} NOT NULL PRIMARY KEY, id ${t.id} NOT NULL UNIQUE, queue_id ${t.id} NOT NULL, type ${t.str(32)} NOT NULL, task_id ${t.id} NOT NULL, task_revision ${t.str(20)} NOT NULL, occurred_at ${t.i64} NOT NULL, details ${t.text} NOT NULL, result ${t.text} NULL, effect_uncertain ${t.bool} NOT NULL, current_attempt_id ${t.id} NULL)${t.table}`,
    `CREATE INDEX results_by_queue ON results (queue_id, sequence)`,
    `CREATE TABLE subscriptions (id ${t.id} NOT NULL PRIMARY KEY, namespace_id ${t.id} NOT NULL, application_id ${t.id} NOT NULL, credential_id ${t.id} NOT NULL, queue_id ${t.id} NOT NULL, name ${t.str(128)} NOT NULL, active_name ${t.str(128)} NULL, revision ${t.u64} NOT NULL, enabled ${t.bool} NOT NULL, types ${t.str(128)} NOT NULL, cursor_sequence ${t.u64} NOT NULL, max_pending ${t.int} NOT NULL, max_attempts ${t.int} NOT NULL, created_at ${t.i64} NOT NULL, updated_at ${t.i64} NOT NULL, retired_at ${t.i64} NULL, retired_sequence ${t.u64} NULL, UNIQUE (namespace_id, active_name))${t.table}`,
    `CREATE INDEX subscriptions_by_owner ON subscriptions (queue_id, credential_id, created_at, id)`,
    `CREATE INDEX subscriptions_by_namespace ON subscriptions (namespace_id, retired_at)`,
    `CREATE TABLE deliveries (id ${t.id} NOT NULL PRIMARY KEY, subscription_id ${t.id} NOT NULL, sequence ${t.u64} NOT NULL, event_id ${t.id} NOT NULL, revision ${t.u64} NOT NULL, state ${t.str(8)} NOT NULL, created_at ${t.i64} NOT NULL, available_at ${t.i64} NOT NULL, lease_epoch ${t.u64} NOT NULL, lease_until ${t.i64} NULL, lease_digest ${t.str(64)} NULL, lease_session ${t.id} NULL, attempts ${t.int} NOT NULL, attempt_budget ${t.int} NOT NULL, acknowledged_at ${t.i64} NULL, UNIQUE (subscription_id, sequence))${t.table}`,
    // Claims read (subscription, state, available_at): ACKED rows are never scanned.
    `CREATE INDEX deliveries_claim ON deliveries (subscription_id, state, available_at, sequence)`,
    `CREATE INDEX deliveries_list ON deliveries (subscription_id, created_at, id)`,
    `CREATE INDEX deliveries_list_state ON deliveries (subscription_id, state, created_at, id)`,
    `CREATE TABLE idempotency_records (credential_id ${t.id} NOT NULL, scope ${t.str(96)} NOT NULL, idem_key ${t.str(255)} NOT NULL, request_digest ${t.str(64)} NOT NULL, status ${t.int} NOT NULL, response ${t.text} NOT NULL, created_at ${t.i64} NOT NULL, PRIMARY KEY (credential_id, scope, idem_key))${t.table}`,
    `CREATE TABLE audit_log (id ${t.id} NOT NULL PRIMARY KEY, subscription_id ${t.id} NOT NULL, delivery_id ${t.id} NULL, credential_id ${t.id} NOT NULL, action ${t.str(32)} NOT NULL, reason ${t.text} NOT NULL, revision ${t.str(20)} NOT NULL, detail ${t.text} NOT NULL, created_at ${t.i64} NOT NULL)${t.table}`,
    `CREATE INDEX audit_by_subscription ON audit_log (subscription_id, created_at)`,
  ];
}

/**
 * Operations (issue 8): the background sweep finds expired leases by (state, lease_until), and
 * retention asks whether a result still has a delivery that is not ACKED by (sequence, state).
 * Both were full scans of `deliveries` without these indexes.
 */
function operationsIndexes(): string[] {
  return [
    'CREATE INDEX deliveries_expiry ON deliveries (state, lease_until)',
    'CREATE INDEX deliveries_by_sequence ON deliveries (sequence, state)',
  ];
}

/**
 * A claim reads a subscription's PENDING rows in sequence order. Without this index MySQL walks
 * the (subscription, sequence) key through the whole ACKED history, locking what it reads.
 */
function claimIndex(): string[] {
  return ['CREATE INDEX deliveries_by_state ON deliveries (subscription_id, state, sequence)'];
}

export const MIGRATIONS: readonly Migration[] = [
  { version: 1, name: 'initial', statements: { sqlite: initial('sqlite'), mysql: initial('mysql') } },
  { version: 2, name: 'operations_indexes', statements: { sqlite: operationsIndexes(), mysql: operationsIndexes() } },
  { version: 3, name: 'claim_index', statements: { sqlite: claimIndex(), mysql: claimIndex() } },
];

export const LATEST_VERSION = MIGRATIONS[MIGRATIONS.length - 1]!.version;

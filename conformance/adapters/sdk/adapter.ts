/**
 * The client-mode adapter of our TypeScript SDK: `createEventConsumer` with a durable Inbox,
 * driven by the harness protocol (conformance/harness.schema.json). The handler's business write
 * is one row per event in `harness_events`, in the Inbox's transaction; the SDK commits it with
 * the inbox record and the ACK proof, and only then ACKs (spec/rules.md#s6-7).
 *
 *   tsx adapter.ts --inbox sqlite      the SqliteInbox, in STATE_DIR/inbox.db
 *   tsx adapter.ts --inbox mysql       the MysqlInbox, in a database named after STATE_DIR on the
 *                                      server of ORBIT_CC_MYSQL_URL (mysql://user@host:port), its
 *                                      name prefixed by ORBIT_CC_MYSQL_PREFIX (default orbit_cc_)
 *
 * Each report line is written when the SDK says it happened: `stored` on `handled` (after the
 * commit, before the ACK is sent), `duplicate` on `duplicate`, `error` and `stopped` on a fatal stop.
 */
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createEventConsumer, type Inbox, stringify } from '@orbit/client';
import type { HarnessConfig, HarnessReport } from '../../src/client/harness.generated.ts';

function report(line: HarnessReport): void {
  process.stdout.write(`${JSON.stringify(line)}\n`);
}

async function readConfig(): Promise<HarnessConfig> {
  let text = '';
  for await (const chunk of process.stdin) text += chunk;
  return JSON.parse(text) as HarnessConfig;
}

interface Store {
  inbox: Inbox<unknown>;
  /** The business write, inside the Inbox's transaction. */
  write(tx: unknown, row: [string, string, string, string | null]): Promise<void>;
  stored(): Promise<string[]>;
}

async function sqliteStore(dir: string): Promise<Store> {
  const { SqliteInbox } = await import('@orbit/client/inbox/sqlite');
  const inbox = await SqliteInbox.open({ path: join(dir, 'inbox.db') });
  const db = inbox.database;
  db.exec('CREATE TABLE IF NOT EXISTS harness_events (event_id TEXT PRIMARY KEY, task_id TEXT, event_type TEXT, result_json TEXT)');
  return {
    inbox: inbox as Inbox<unknown>,
    async write(tx, row) {
      (tx as typeof db).prepare('INSERT INTO harness_events VALUES (?, ?, ?, ?)').run(...row);
    },
    async stored() {
      return (db.prepare('SELECT event_id FROM harness_events ORDER BY event_id').all() as Array<{ event_id: string }>).map(
        (r) => r.event_id,
      );
    },
  };
}

async function mysqlStore(dir: string): Promise<Store> {
  const url = process.env.ORBIT_CC_MYSQL_URL;
  if (!url) throw new Error('--inbox mysql needs ORBIT_CC_MYSQL_URL');
  const mysql = await import('mysql2/promise');
  const { MysqlInbox } = await import('@orbit/client/inbox/mysql');
  const database = `${process.env.ORBIT_CC_MYSQL_PREFIX ?? 'orbit_cc_'}${createHash('sha256').update(dir).digest('hex').slice(0, 16)}`;
  const admin = await mysql.createConnection(url);
  await admin.query(`CREATE DATABASE IF NOT EXISTS ${database}`);
  await admin.end();
  const uri = new URL(url);
  uri.pathname = `/${database}`;
  const inbox = await MysqlInbox.open({ uri: uri.toString() });
  await inbox.pool.query(
    'CREATE TABLE IF NOT EXISTS harness_events (event_id CHAR(32) PRIMARY KEY, task_id CHAR(32), event_type VARCHAR(64), result_json LONGTEXT)',
  );
  return {
    inbox: inbox as Inbox<unknown>,
    async write(tx, row) {
      await (tx as import('mysql2/promise').PoolConnection).query('INSERT INTO harness_events VALUES (?, ?, ?, ?)', row);
    },
    async stored() {
      const [rows] = await inbox.pool.query('SELECT event_id FROM harness_events ORDER BY event_id');
      return (rows as Array<{ event_id: string }>).map((r) => r.event_id);
    },
  };
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { inbox: { type: 'string', default: 'sqlite' } } });
  const config = await readConfig();
  const store = values.inbox === 'mysql' ? await mysqlStore(config.state_dir) : await sqliteStore(config.state_dir);
  report({ type: 'ready', stored: await store.stored() });
  const interval = config.heartbeat_interval_ms;
  const consumer = createEventConsumer({
    baseUrl: config.base_url,
    token: config.token,
    subscriptionId: config.subscription_id,
    capacity: config.capacity,
    inbox: store.inbox,
    pingIntervalMs: interval,
    // An unanswered ping or ACK cuts the connection after three intervals (docs/sdk.md).
    requestTimeoutMs: interval * 3,
    backoff: { initialDelayMs: 100, maxDelayMs: 1_000 },
    drainTimeoutMs: 1_000,
    async handler({ event, tx }) {
      const result = event.snapshot.result === undefined ? null : stringify(event.snapshot.result);
      await store.write(tx, [event.id, event.snapshot.task_id, event.type, result]);
    },
    onEvent(e) {
      if (e.type === 'handled') {
        const result = e.event.snapshot.result;
        report({
          type: 'stored',
          event_id: e.event.id,
          delivery_id: e.delivery.id,
          task_id: e.event.snapshot.task_id,
          event_type: e.event.type,
          ...(result === undefined ? {} : { result_json: stringify(result) }),
        });
      } else if (e.type === 'duplicate') report({ type: 'duplicate', event_id: e.event.id, delivery_id: e.delivery.id });
      else if (e.type === 'stopped') {
        const code = e.error?.code ?? null;
        if (e.error) report({ type: 'error', code, message: e.error.message });
        report({ type: 'stopped', code });
      }
    },
  });
  await consumer.done.catch(() => undefined);
  await store.inbox.close();
  process.exit(0);
}

main().catch((error: unknown) => {
  process.stderr.write(`adapter failed: ${(error as Error)?.stack ?? String(error)}\n`);
  process.exit(1);
});

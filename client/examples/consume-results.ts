/**
 * Example: consume a subscription's results into a durable Inbox (spec/rules.md#s6-7, #s8-7).
 *
 *   ORBIT_TOKEN=... ORBIT_SUBSCRIPTION_ID=... npx tsx client/examples/consume-results.ts
 *
 * For each delivery, inside ONE local transaction of the Inbox database: if the event is already
 * in the Inbox, nothing is done; otherwise a row is appended to the business table
 * `example_results` and the event is recorded. The transaction commits, and only then is the
 * delivery acknowledged. The process can be killed at any moment (even with SIGKILL): on the next
 * start, proofs that were not answered are re-reported, redeliveries are recognised in the Inbox,
 * and `example_results` ends with exactly one row per event.
 *
 * Environment:
 *   ORBIT_URL               server (default http://127.0.0.1:8080, what `npm start` serves)
 *   ORBIT_TOKEN             bearer token with events:consume (required)
 *   ORBIT_SUBSCRIPTION_ID   subscription to consume (required)
 *   ORBIT_INBOX             sqlite:PATH (default sqlite:./consumer-inbox.db) or mysql://user:pass@host:port/db
 *   ORBIT_INBOX_SCOPE       receiver scope inside the Inbox tables (default "default")
 *   ORBIT_CAPACITY          deliveries held at once, 1-32 (default 4)
 *   ORBIT_PING_INTERVAL_MS  heartbeat period (default 15000)
 *   ORBIT_HANDLER_DELAY_MS  artificial work inside each transaction, for crash tests (default 0)
 *   ORBIT_EXIT_WHEN_IDLE_MS stop gracefully after this long without a delivery and with no
 *                           unanswered proof (default: run until SIGINT/SIGTERM)
 *   ORBIT_OUTPUT            "text" (default) or "json": one JSON object per line, for scripts
 *
 * Exit code: 0 after a graceful stop (SIGINT, SIGTERM, idle exit), 1 when the consumer stopped on
 * an error it cannot recover from (the reason is printed), 2 for a usage error.
 */
import type Database from 'better-sqlite3';
import type { PoolConnection } from 'mysql2/promise';
import {
  ConnectionClosedError,
  createEventConsumer,
  OrbitError,
  type ConsumerEvent,
  type ErrorCode,
  type EventConsumer,
  type HandlerContext,
  type Inbox,
} from '@orbit/client';

const env = process.env;
const baseUrl = env.ORBIT_URL ?? 'http://127.0.0.1:8080';
const token = env.ORBIT_TOKEN ?? '';
const subscriptionId = env.ORBIT_SUBSCRIPTION_ID ?? '';
const inboxUrl = env.ORBIT_INBOX ?? 'sqlite:./consumer-inbox.db';
const json = env.ORBIT_OUTPUT === 'json';

function integer(name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!/^[0-9]+$/.test(raw) || value < min || value > max) usage(`${name} must be an integer from ${min} to ${max}`);
  return value;
}

function usage(message: string): never {
  console.error(`consume-results: ${message}`);
  console.error(
    'usage: ORBIT_TOKEN=<token> ORBIT_SUBSCRIPTION_ID=<32 hex> [ORBIT_URL=...] [ORBIT_INBOX=sqlite:PATH|mysql://...] npx tsx client/examples/consume-results.ts',
  );
  process.exit(2);
}

if (!token) usage('ORBIT_TOKEN is required');
if (!/^[0-9a-f]{32}$/.test(subscriptionId)) usage('ORBIT_SUBSCRIPTION_ID must be 32 lower-case hexadecimal characters');
const capacity = integer('ORBIT_CAPACITY', 4, 1, 32);
const pingIntervalMs = integer('ORBIT_PING_INTERVAL_MS', 15_000, 100, 3_600_000);
const handlerDelayMs = integer('ORBIT_HANDLER_DELAY_MS', 0, 0, 600_000);
const idleExitMs = integer('ORBIT_EXIT_WHEN_IDLE_MS', 0, 0, 86_400_000);
const scope = env.ORBIT_INBOX_SCOPE;

function print(fields: Record<string, unknown>, text: string): void {
  if (json) console.log(JSON.stringify({ at: new Date().toISOString(), ...fields }));
  else console.log(text);
}

const WHY: Partial<Record<ErrorCode, string>> = {
  UNAUTHENTICATED: 'the token is unknown or revoked',
  PERMISSION_DENIED: 'the credential lacks events:consume (bootstrap it with --event-access) or the queue',
  NOT_FOUND: 'the subscription does not exist, belongs to another credential, or was retired',
  EVENT_HISTORY_EXPIRED: 'results this subscription still needed were pruned; the consumer refuses to skip them silently',
  INVALID_ARGUMENT: 'the server refused the connection parameters (capacity 1-32?)',
};

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** One business effect per event, written in the Inbox transaction. No unique key on event_id on purpose: a duplicate would show. */
async function start(): Promise<{ inbox: Inbox<any>; handler: (context: HandlerContext<any>) => Promise<void> }> {
  // Each Inbox is its own entry point: only the chosen driver is loaded.
  if (inboxUrl.startsWith('sqlite:')) {
    const { SqliteInbox } = await import('@orbit/client/inbox/sqlite');
    const inbox = new SqliteInbox({ path: inboxUrl.slice('sqlite:'.length), ...(scope ? { scope } : {}) });
    inbox.database.exec(`CREATE TABLE IF NOT EXISTS example_results (
      id INTEGER PRIMARY KEY AUTOINCREMENT, event_id TEXT NOT NULL, sequence TEXT NOT NULL, type TEXT NOT NULL,
      task_id TEXT NOT NULL, result TEXT, handled_at TEXT NOT NULL)`);
    return {
      inbox,
      handler: async ({ event, tx }: HandlerContext<Database.Database>) => {
        if (handlerDelayMs > 0) await sleep(handlerDelayMs);
        tx.prepare('INSERT INTO example_results (event_id, sequence, type, task_id, result, handled_at) VALUES (?, ?, ?, ?, ?, ?)').run(
          event.id,
          event.sequence,
          event.type,
          event.snapshot.task_id,
          event.snapshot.result?.text ?? null,
          new Date().toISOString(),
        );
      },
    };
  }
  if (inboxUrl.startsWith('mysql://')) {
    const { MysqlInbox } = await import('@orbit/client/inbox/mysql');
    const inbox = await MysqlInbox.open({ uri: inboxUrl, ...(scope ? { scope } : {}) });
    await inbox.pool.query(`CREATE TABLE IF NOT EXISTS example_results (
      id BIGINT AUTO_INCREMENT PRIMARY KEY, event_id CHAR(32) NOT NULL, sequence DECIMAL(20,0) NOT NULL, type VARCHAR(32) NOT NULL,
      task_id CHAR(32) NOT NULL, result LONGTEXT NULL, handled_at DATETIME(3) NOT NULL, KEY (event_id)) ENGINE=InnoDB`);
    return {
      inbox,
      handler: async ({ event, tx }: HandlerContext<PoolConnection>) => {
        if (handlerDelayMs > 0) await sleep(handlerDelayMs);
        await tx.execute(
          'INSERT INTO example_results (event_id, sequence, type, task_id, result, handled_at) VALUES (?, ?, ?, ?, ?, UTC_TIMESTAMP(3))',
          [event.id, event.sequence, event.type, event.snapshot.task_id, event.snapshot.result?.text ?? null],
        );
      },
    };
  }
  usage('ORBIT_INBOX must be sqlite:PATH or mysql://user:pass@host:port/database');
}

const { inbox, handler } = await start();
let lastActivity = Date.now();

function report(event: ConsumerEvent): void {
  switch (event.type) {
    case 'connected':
      return print(
        { type: 'connected', session_id: event.sessionId, enabled: event.welcome.enabled },
        `connected   session=${event.sessionId}${event.welcome.enabled ? '' : ' (subscription paused)'}`,
      );
    case 'delivered':
      lastActivity = Date.now();
      // Scripts (the topology tests' history checker) see each lease as it arrives; people do not need it.
      if (json)
        print(
          {
            type: 'delivered',
            event_id: event.event.id,
            sequence: event.event.sequence,
            delivery_id: event.delivery.id,
            epoch: event.delivery.lease_epoch,
            lease_until: event.delivery.lease_until,
          },
          '',
        );
      return;
    case 'handled':
      return print(
        {
          type: 'handled',
          event_id: event.event.id,
          sequence: event.event.sequence,
          event_type: event.event.type,
          delivery_id: event.delivery.id,
          epoch: event.delivery.lease_epoch,
        },
        `handled     seq=${event.event.sequence} event=${event.event.id} ${event.event.type} task=${event.event.snapshot.task_id} result=${event.event.snapshot.result?.text ?? '(none)'}`,
      );
    case 'duplicate':
      return print(
        {
          type: 'duplicate',
          event_id: event.event.id,
          sequence: event.event.sequence,
          delivery_id: event.delivery.id,
          epoch: event.delivery.lease_epoch,
        },
        `duplicate   seq=${event.event.sequence} event=${event.event.id} (already in the inbox; acknowledging)`,
      );
    case 'acked':
      return print(
        {
          type: 'acked',
          delivery_id: event.proof.delivery_id,
          event_id: event.proof.event_id,
          epoch: event.proof.epoch,
          deduplicated: event.result.deduplicated,
          replayed: event.replayed,
        },
        `acked       delivery=${event.proof.delivery_id} epoch=${event.proof.epoch}${event.result.deduplicated ? ' (already acknowledged)' : ''}${event.replayed ? ' (stored proof re-reported)' : ''}`,
      );
    case 'lease_lost':
      return print(
        { type: 'lease_lost', delivery_id: event.proof.delivery_id, epoch: event.proof.epoch },
        `lease_lost  delivery=${event.proof.delivery_id} epoch=${event.proof.epoch} (a newer delivery will be acknowledged)`,
      );
    case 'reconnecting':
      return print(
        {
          type: 'reconnecting',
          attempt: event.attempt,
          delay_ms: event.delayMs,
          code: event.error.code,
          // The WebSocket close code when a connection ended (1006: cut without a close frame); the
          // balancer tests tell Orbit's own close from the balancer's by it.
          close_code: event.error instanceof ConnectionClosedError ? event.error.closeCode : null,
          message: event.error.message,
        },
        `reconnecting in ${event.delayMs} ms (attempt ${event.attempt}): ${event.error.code} ${event.error.message}`,
      );
    case 'error': {
      const error = event.error as Error & { code?: string };
      return print(
        {
          type: 'error',
          phase: event.phase,
          code: error?.code ?? null,
          message: error?.message ?? String(error),
          event_id: event.event?.id ?? null,
        },
        `error       ${event.phase}: ${error?.code ?? ''} ${error?.message ?? String(error)}`,
      );
    }
    case 'stopped':
      return print({ type: 'stopped', code: event.error?.code ?? null }, `stopped${event.error ? ` on ${event.error.code}` : ''}`);
  }
}

const consumer: EventConsumer<any> = createEventConsumer({
  baseUrl,
  token,
  subscriptionId,
  capacity,
  inbox,
  handler,
  pingIntervalMs,
  onEvent: report,
});
print(
  { type: 'starting', subscription_id: subscriptionId, inbox: inboxUrl.replace(/\/\/[^@/]*@/, '//***@'), capacity },
  `consuming ${subscriptionId} from ${baseUrl} into ${inboxUrl.replace(/\/\/[^@/]*@/, '//***@')} (capacity ${capacity}); Ctrl-C stops after draining`,
);

let stopping = false;
async function shutdown(reason: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  print({ type: 'stopping', reason }, `stopping (${reason}): finishing running handlers, keeping unanswered proofs`);
  const result = await consumer.stop({ timeoutMs: 10_000 });
  const stored = (await inbox.pendingAcks(subscriptionId)).length;
  await inbox.close();
  print(
    { type: 'exit', drained: result.drained, abandoned: result.abandoned, stored_proofs: stored, stats: consumer.stats },
    `exit: ${consumer.stats.handled} handled, ${consumer.stats.duplicates} duplicates, ${consumer.stats.acked} acked, ${stored} proofs kept for the next run`,
  );
  process.exit(0);
}
process.once('SIGINT', () => void shutdown('SIGINT'));
process.once('SIGTERM', () => void shutdown('SIGTERM'));

if (idleExitMs > 0) {
  const timer = setInterval(
    () => {
      if (stopping || consumer.state !== 'connected' || Date.now() - lastActivity < idleExitMs) return;
      void inbox.pendingAcks(subscriptionId).then((stored) => {
        if (stored.length === 0 && Date.now() - lastActivity >= idleExitMs) void shutdown(`idle for ${idleExitMs} ms`);
      });
    },
    Math.min(500, idleExitMs),
  );
  timer.unref();
}

consumer.done.then(
  () => {
    // A graceful stop: shutdown() prints the summary and exits.
  },
  async (error: unknown) => {
    if (stopping) return;
    const code = (error as OrbitError).code;
    console.error(`\nconsume-results: stopped on ${code}: ${(error as Error).message}`);
    if (error instanceof OrbitError && WHY[error.code]) console.error(`why: ${WHY[error.code]}`);
    await inbox.close();
    process.exit(1);
  },
);

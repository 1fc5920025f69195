/**
 * @module
 * `orbit serve | dev | migrate | bootstrap | publish | prune` (the brief's operator interface).
 * Each command is a thin layer over the server package; the exit code is 0 on success, 1 on a
 * runtime failure and 2 on a usage error.
 */
import { parseArgs } from 'node:util';
import { loadSettings, SettingsError } from '../config.ts';
import { startServer } from '../server.ts';
import { Store } from '../store/store.ts';
import { PERMISSIONS } from '../store/principal.ts';
import { publishCommand } from './publish.ts';
import { createLogger } from './log.ts';
import { UsageError } from './usage.ts';

const USAGE = `usage: orbit <command> [options]

commands:
  serve      [--listen HOST:PORT] [--database URL]     serve the API and orbit.events.v1
  dev                                                   serve 127.0.0.1:8080 on sqlite:./orbit.db with a demo credential
  migrate    [--database URL]                           apply migrations only
  bootstrap  --namespace N --application A --queue Q [--queue Q2] [--event-access] [--publish-access] [--permissions p1,p2] [--json]
  publish    --queue-id ID --type T --task-id ID [--task-revision N] [--details JSON] [--result JSON] [--effect-uncertain] [--current-attempt-id ID]
  prune      --before-sequence N                        remove results below N (retention)

environment: ORBIT_LISTEN, ORBIT_DATABASE_URL and the ORBIT_* timing settings (see docs/operations.md)`;


function databaseUrl(values: { database?: string | undefined }): string {
  return loadSettings(process.env, values.database ? { databaseUrl: values.database } : {}).databaseUrl;
}

async function serve(args: string[], dev: boolean): Promise<void> {
  const { values } = parseArgs({ args, options: { listen: { type: 'string' }, database: { type: 'string' } }, strict: true });
  const settings = loadSettings(process.env, {
    ...(values.listen ? { listen: values.listen } : dev ? { listen: '127.0.0.1:8080' } : {}),
    ...(values.database ? { databaseUrl: values.database } : dev ? { databaseUrl: 'sqlite:./orbit.db' } : {}),
  });
  const log = createLogger(dev ? 'pretty' : 'json');
  const running = await startServer(settings, log);
  log('info', 'orbit is serving', { url: running.url, database: running.orbit.store.db.description, migrations: running.orbit.store.migrations.current });
  if (dev) await printDemo(running.orbit.store, running.url);
  const stop = async (signal: string) => {
    log('info', 'shutting down', { signal });
    process.once('SIGTERM', () => process.exit(1));
    process.once('SIGINT', () => process.exit(1));
    await running.close();
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop('SIGTERM'));
  process.once('SIGINT', () => void stop('SIGINT'));
}

/** On a new database, `orbit dev` creates a demo credential and shows how to use it. */
async function printDemo(store: Store, url: string): Promise<void> {
  const [existing] = await store.db.all('SELECT COUNT(*) AS n FROM credentials');
  if (Number(existing!.n) > 0) {
    console.log(`\nThis database already has credentials; tokens are shown only once. Make a new one with:\n  npx orbit bootstrap --namespace demo --application demo-app --queue demo-queue --event-access --publish-access --json\n`);
    return;
  }
  const demo = await store.bootstrap({ namespace: 'demo', application: 'demo-app', queues: ['demo-queue'], permissions: [...PERMISSIONS] });
  const queueId = demo.queue_ids['demo-queue'];
  console.log(`
Demo credential (shown once; stored only as a digest):
  token:    ${demo.token}
  queue_id: ${queueId}

Try:
  curl -s -X POST ${url}/v1/subscriptions \\
    -H 'Authorization: Bearer ${demo.token}' -H 'Content-Type: application/json' \\
    -H 'Idempotency-Key: first-subscription' \\
    -d '{"name":"object-results","queue_id":"${queueId}"}'
`);
}

async function migrateCommand(args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { database: { type: 'string' } }, strict: true });
  const store = await Store.open(databaseUrl(values));
  console.log(JSON.stringify({ database: store.db.description, applied: store.migrations.applied, current: store.migrations.current }));
  await store.close();
}

async function bootstrapCommand(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      namespace: { type: 'string' },
      application: { type: 'string' },
      queue: { type: 'string', multiple: true },
      'event-access': { type: 'boolean' },
      'publish-access': { type: 'boolean' },
      permissions: { type: 'string' },
      json: { type: 'boolean' },
      database: { type: 'string' },
    },
    strict: true,
  });
  const name = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
  for (const field of ['namespace', 'application'] as const) {
    if (!values[field] || !name.test(values[field])) throw new UsageError(`--${field} is required: 1–128 letters, digits, '.', '_' or '-'`);
  }
  const queues = values.queue ?? [];
  if (queues.length === 0 || !queues.every((q) => name.test(q))) throw new UsageError('at least one --queue NAME is required');
  let permissions: string[];
  if (values.permissions !== undefined) {
    permissions = values.permissions.split(',').map((p) => p.trim()).filter(Boolean);
    const unknown = permissions.filter((p) => !(PERMISSIONS as readonly string[]).includes(p));
    if (unknown.length > 0) throw new UsageError(`unknown permission(s): ${unknown.join(', ')}; known: ${PERMISSIONS.join(', ')}`);
  } else {
    permissions = [];
    if (values['event-access']) permissions.push('events:manage', 'events:read', 'events:consume');
    if (values['publish-access']) permissions.push('results:publish');
  }
  const store = await Store.open(databaseUrl(values));
  try {
    const result = await store.bootstrap({ namespace: values.namespace!, application: values.application!, queues, permissions });
    if (values.json) console.log(JSON.stringify(result));
    else console.log(`credential ${result.credential_id} in namespace ${result.namespace_id}\ntoken (shown once): ${result.token}\npermissions: ${result.permissions.join(', ') || '(none)'}\nqueues: ${JSON.stringify(result.queue_ids)}`);
  } finally {
    await store.close();
  }
}

async function pruneCommand(args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { 'before-sequence': { type: 'string' }, database: { type: 'string' } }, strict: true });
  const before = values['before-sequence'];
  if (!before || !/^(0|[1-9][0-9]{0,19})$/.test(before)) throw new UsageError('--before-sequence N is required (a uint64)');
  const store = await Store.open(databaseUrl(values));
  try {
    console.log(JSON.stringify(await store.prune(BigInt(before))));
  } finally {
    await store.close();
  }
}

const COMMANDS: Record<string, (args: string[]) => Promise<void>> = {
  serve: (args) => serve(args, false),
  dev: (args) => serve(args, true),
  migrate: migrateCommand,
  bootstrap: bootstrapCommand,
  publish: (args) => publishCommand(args, databaseUrl),
  prune: pruneCommand,
};

async function main(argv: string[]): Promise<void> {
  const [command, ...args] = argv;
  if (!command || command === '--help' || command === '-h' || command === 'help') {
    console.log(USAGE);
    return;
  }
  const run = COMMANDS[command];
  if (!run) throw new UsageError(`unknown command "${command}"`);
  await run(args);
}

main(process.argv.slice(2)).catch((error: unknown) => {
  const usage = error instanceof UsageError || error instanceof SettingsError || (error as { code?: string })?.code?.startsWith('ERR_PARSE_ARGS');
  console.error(`orbit: ${(error as Error)?.message ?? String(error)}`);
  if (usage) console.error(`\n${USAGE}`);
  process.exit(usage ? 2 : 1);
});

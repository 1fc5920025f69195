/**
 * @module
 * `orbit serve | dev | migrate | bootstrap | publish | prune | credentials | settings` (the operator
 * interface of docs/operations.md).
 * Each command is a thin layer over the server package; the exit code is 0 on success, 1 on a
 * runtime failure and 2 on a usage error.
 */
import { parseArgs } from 'node:util';
import {
  INTEGER_SETTINGS,
  OTHER_SETTINGS,
  readConfigFile,
  resolveWithSources,
  describeSettings,
  settingsMarkdown,
  SettingsError,
  type Resolved,
} from '../config.ts';
import { startNode } from '../server.ts';
import { Store } from '../store/store.ts';
import { PERMISSIONS } from '../store/principal.ts';
import { installShutdown } from '../ops/shutdown.ts';
import { credentialsCommand, CREDENTIALS_USAGE } from './credentials.ts';
import { publishCommand } from './publish.ts';
import { createLogger } from './log.ts';
import { UsageError } from './usage.ts';

const USAGE = `usage: orbit <command> [options]

commands:
  serve      [--listen HOST:PORT] [--database URL] [--config FILE] [--SETTING VALUE ...]
                                                        serve the API and orbit.events.v1
  dev        [same options as serve]                    serve 127.0.0.1:8080 on sqlite:./orbit.db with a demo credential, readable logs
  migrate    [--database URL] [--config FILE]           apply migrations only
  bootstrap  --namespace N --application A --queue Q [--queue Q2] [--event-access] [--publish-access] [--permissions p1,p2] [--json]
  publish    --queue-id ID --type T --task-id ID [--task-revision N] [--details JSON] [--result JSON] [--effect-uncertain] [--current-attempt-id ID]
  publish    --queue-id ID --batch FILE                 append the results of FILE (a JSON array or JSON lines; - for stdin)
  prune      --before-sequence N                        remove results below N (retention)
  ${CREDENTIALS_USAGE}
  settings   [--markdown] [same options as serve]       print the effective settings (JSON, secrets hidden) or the settings table

The commands that open the database (all but settings) also take --database URL and --config FILE.
Every setting can be given as a flag, an ORBIT_* environment variable or a key of the --config file
(JSON or YAML), in that order of precedence: see \`orbit settings --markdown\` and docs/operations.md.`;

type Values = Record<string, string | boolean | string[] | undefined>;

/** parseArgs options for every setting's flag, plus --config. */
function settingOptions(): Record<string, { type: 'string' }> {
  const options: Record<string, { type: 'string' }> = {};
  for (const s of [...INTEGER_SETTINGS, ...OTHER_SETTINGS]) options[s.flag] = { type: 'string' };
  return options;
}

/** Flag values by setting name; `--config` (or ORBIT_CONFIG) names the config file. */
function resolveFromCli(values: Values, defaults?: Record<string, string>): Resolved {
  const flags: Record<string, string | undefined> = {};
  for (const s of [...INTEGER_SETTINGS, ...OTHER_SETTINGS]) {
    const value = values[s.flag];
    if (typeof value === 'string') flags[s.name] = value;
  }
  const configPath = flags.config ?? (process.env.ORBIT_CONFIG || undefined);
  const file = configPath ? readConfigFile(configPath) : undefined;
  return resolveWithSources({ flags, env: process.env, ...(file ? { file } : {}), ...(defaults ? { defaults } : {}) });
}

function databaseUrl(values: { database?: string | undefined; config?: string | undefined }): string {
  return resolveFromCli(values as Values).settings.databaseUrl;
}

async function serve(args: string[], dev: boolean): Promise<void> {
  const { values } = parseArgs({ args, options: settingOptions(), strict: true });
  const { settings } = resolveFromCli(values, dev ? { log_format: 'pretty' } : undefined);
  const { log } = createLogger({ format: settings.logFormat, level: settings.logLevel });
  const running = await startNode(settings, log);
  log('info', 'orbit is serving', {
    url: running.url,
    ...(running.metricsUrl ? { metrics_url: running.metricsUrl } : {}),
    database: running.orbit.store.description,
    migrations: running.orbit.store.migrations.current,
    metrics: settings.metrics,
    tls: settings.tls !== null,
  });
  installShutdown({ close: () => running.close(), timeoutMs: settings.shutdownTimeoutMs, log });
  if (dev) await printDemo(running.orbit.store, running.url);
}

async function settingsCommand(args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { ...settingOptions(), markdown: { type: 'boolean' } }, strict: true });
  if (values.markdown) {
    console.log(settingsMarkdown());
    return;
  }
  console.log(JSON.stringify(describeSettings(resolveFromCli(values)), null, 2));
}

/** On a new database, `orbit dev` creates a demo credential and shows how to use it. */
async function printDemo(store: Store, url: string): Promise<void> {
  if (((await store.listCredentials()) ?? []).length > 0) {
    console.log(
      `\nThis database already has credentials; tokens are shown only once. Make a new one with:\n  npx orbit bootstrap --namespace demo --application demo-app --queue demo-queue --event-access --publish-access --json\n`,
    );
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

Operator console: ${url}/console (paste the token there)
`);
}

async function migrateCommand(args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { database: { type: 'string' }, config: { type: 'string' } }, strict: true });
  const store = await Store.open(databaseUrl(values));
  console.log(JSON.stringify({ database: store.description, ...store.migrations }));
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
      config: { type: 'string' },
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
    permissions = values.permissions
      .split(',')
      .map((p) => p.trim())
      .filter(Boolean);
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
    else
      console.log(
        `credential ${result.credential_id} in namespace ${result.namespace_id}\ntoken (shown once): ${result.token}\npermissions: ${result.permissions.join(', ') || '(none)'}\nqueues: ${JSON.stringify(result.queue_ids)}`,
      );
  } finally {
    await store.close();
  }
}

async function pruneCommand(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: { 'before-sequence': { type: 'string' }, database: { type: 'string' }, config: { type: 'string' } },
    strict: true,
  });
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
  credentials: (args) => credentialsCommand(args, databaseUrl),
  settings: settingsCommand,
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
  const usage = error instanceof UsageError || (error as { code?: string })?.code?.startsWith('ERR_PARSE_ARGS');
  if (error instanceof SettingsError) {
    console.error(`orbit: invalid setting: ${error.message}`);
    process.exit(2);
  }
  console.error(`orbit: ${(error as Error)?.message ?? String(error)}`);
  if (usage && !(error instanceof UsageError && !error.showUsage)) console.error(`\n${USAGE}`);
  process.exit(usage ? 2 : 1);
});

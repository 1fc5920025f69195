/**
 * @module
 * `orbit serve | dev | migrate | bootstrap | publish | prune | credentials | settings | version | help`
 * (the operator interface of docs/operations.md). Each command is one entry of `COMMANDS`: its
 * forms declare its options once, and both the parser and `orbit COMMAND --help` are made from them
 * (usage.ts). Each command is a thin layer over the server package; the exit code is 0 on success,
 * 1 on a runtime failure and 2 on a usage or settings error.
 */
import { readFileSync } from 'node:fs';
import { describeSettings, settingsMarkdown, SettingsError } from '../config.ts';
import { startNode } from '../server.ts';
import type { Store } from '../store/store.ts';
import { PERMISSIONS } from '../store/principal.ts';
import { installShutdown } from '../ops/shutdown.ts';
import { CONFORMANCE_CONFIG, conformanceConfigCommand } from './conformance-config.ts';
import { credentialsCommand, CREDENTIALS_FORMS } from './credentials.ts';
import { PUBLISH_FORM, publishCommand } from './publish.ts';
import { createLogger } from './log.ts';
import { DATABASE_OPTIONS, explainStartError, openStore, resolveFromCli, SETTING_OPTIONS } from './options.ts';
import { asksForHelp, type Command, command, commandUsage, type Form, overview, parseForm, UsageError, usageHint } from './usage.ts';

/** The version of this package (`server/package.json`, two levels up from `src/cli/` and from `dist/cli/`). */
function version(): string {
  return (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
}

const SERVE = {
  name: 'serve',
  summary: 'serve the management API and orbit.events.v1, after applying pending migrations',
  options: SETTING_OPTIONS,
  notes: [
    'Logs one JSON line "orbit is serving" with the URL once it accepts requests. SIGTERM or SIGINT shuts down gracefully ' +
      '(docs/operations.md, Shutdown); in production start this command itself, not through npx or npm, so that the signal ' +
      'reaches it (docs/operations.md, Running a node).',
  ],
} as const satisfies Form;

/** What `orbit dev` changes from `orbit serve`'s defaults. */
const DEV_DEFAULTS = { log_format: 'pretty', create_database: 'true' };

const DEV = {
  name: 'dev',
  summary: 'serve for development: readable logs, a missing database created, a demo credential on a new database',
  options: SETTING_OPTIONS,
  notes: [
    'The same as serve (127.0.0.1:8080 on sqlite:./orbit.db unless told otherwise) with log_format pretty and create_database ' +
      'true as defaults. On a database without credentials it creates a demo namespace, application, queue and credential ' +
      'and prints the token once. `npm start` runs it in the repository.',
  ],
} as const satisfies Form;

async function serve(args: string[], dev: boolean): Promise<void> {
  const { values } = parseForm(dev ? DEV : SERVE, args);
  const cli = resolveFromCli(values, dev ? DEV_DEFAULTS : undefined);
  const { settings } = cli;
  const { log } = createLogger({ format: settings.logFormat, level: settings.logLevel });
  const running = await startNode(settings, log).catch((error: unknown) => {
    throw explainStartError(error, cli);
  });
  // Signals are handled before the line that says the node serves: a SIGTERM sent as soon as it is
  // read would otherwise meet the default action and kill the process without its graceful close.
  installShutdown({ close: () => running.close(), timeoutMs: settings.shutdownTimeoutMs, log });
  log('info', 'orbit is serving', {
    url: running.url,
    ...(running.metricsUrl ? { metrics_url: running.metricsUrl } : {}),
    database: running.orbit.store.description,
    migrations: running.orbit.store.migrations.current,
    metrics: settings.metrics,
    tls: settings.tls !== null,
  });
  if (dev) await printDemo(running.orbit.store, running.url);
}

const SETTINGS_FORM = {
  name: 'settings',
  summary: 'print the effective settings and where each came from (JSON, secrets hidden), or the settings table',
  options: {
    markdown: { type: 'boolean', help: 'Print the table of every setting (docs/operations.md holds it) instead.' },
    ...SETTING_OPTIONS,
  },
} as const satisfies Form;

async function settingsCommand(args: string[]): Promise<void> {
  const { values } = parseForm(SETTINGS_FORM, args);
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

const MIGRATE = {
  name: 'migrate',
  summary: 'apply pending migrations and exit',
  options: DATABASE_OPTIONS,
  notes: ['Prints {"database", "applied", "adopted", "current"} as one JSON line (docs/operations.md, Upgrading).'],
} as const satisfies Form;

async function migrateCommand(args: string[]): Promise<void> {
  const { values } = parseForm(MIGRATE, args);
  const store = await openStore(values);
  console.log(JSON.stringify({ database: store.description, ...store.migrations }));
  await store.close();
}

const BOOTSTRAP = {
  name: 'bootstrap',
  summary: 'create or reuse a namespace, application and queues, and print a new credential',
  options: {
    namespace: { type: 'string', value: 'N', required: true, help: 'The namespace: 1–128 letters, digits, ".", "_" or "-".' },
    application: { type: 'string', value: 'A', required: true, help: 'The application, named like the namespace.' },
    queue: { type: 'string', value: 'Q', multiple: true, required: true, help: 'A queue of the credential (repeat for more).' },
    'event-access': { type: 'boolean', help: 'Grant events:manage, events:read and events:consume.' },
    'publish-access': { type: 'boolean', help: 'Grant results:publish.' },
    permissions: {
      type: 'string',
      value: 'LIST',
      help: `The permissions, comma-separated, instead of the two above: ${PERMISSIONS.join(', ')}.`,
    },
    json: { type: 'boolean', help: 'Print {credential_id, token, permissions, queue_ids, ...} as JSON.' },
    ...DATABASE_OPTIONS,
  },
  notes: ['The token is printed once and stored only as a digest; `orbit credentials` lists, revokes and rotates credentials.'],
} as const satisfies Form;

async function bootstrapCommand(args: string[]): Promise<void> {
  const { values } = parseForm(BOOTSTRAP, args);
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
  const store = await openStore(values);
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

const PRUNE = {
  name: 'prune',
  summary: 'retention: remove the results below a sequence (never the event of a delivery that is not ACKED)',
  options: {
    'before-sequence': { type: 'string', value: 'N', required: true, help: 'Remove results whose sequence is below N (a uint64).' },
    ...DATABASE_OPTIONS,
  },
} as const satisfies Form;

async function pruneCommand(args: string[]): Promise<void> {
  const { values } = parseForm(PRUNE, args);
  const before = values['before-sequence'];
  if (!before || !/^(0|[1-9][0-9]{0,19})$/.test(before)) throw new UsageError('--before-sequence N is required (a uint64)');
  const store = await openStore(values);
  try {
    console.log(JSON.stringify(await store.prune(BigInt(before))));
  } finally {
    await store.close();
  }
}

const VERSION = {
  name: 'version',
  summary: 'print the version of @orbit/server (also `orbit --version`)',
  options: {},
} as const satisfies Form;

const HELP = {
  name: 'help',
  summary: 'print the commands, or the help of COMMAND (also `orbit COMMAND --help`)',
  positionals: '[COMMAND [SUBCOMMAND]]',
  options: {},
} as const satisfies Form;

/** The commands of `orbit`, in the order `orbit --help` lists them. A new command is one entry here. */
export const COMMANDS: readonly Command[] = [
  command(SERVE, (args) => serve(args, false)),
  command(DEV, (args) => serve(args, true)),
  command(MIGRATE, migrateCommand),
  command(BOOTSTRAP, bootstrapCommand),
  command(PUBLISH_FORM, publishCommand),
  command(PRUNE, pruneCommand),
  { name: 'credentials', summary: 'list, revoke or rotate credentials', forms: CREDENTIALS_FORMS, run: credentialsCommand },
  command(SETTINGS_FORM, settingsCommand),
  command(CONFORMANCE_CONFIG, conformanceConfigCommand),
  command(VERSION, async (args) => {
    parseForm(VERSION, args);
    console.log(version());
  }),
  command(HELP, async (args) => {
    const { positionals } = parseForm(HELP, args);
    console.log(help(positionals));
  }),
];

/** `orbit help [COMMAND [SUBCOMMAND]]`: the overview, a command's forms, or one subcommand's. */
function help([name, sub]: readonly string[]): string {
  if (!name) return overview(COMMANDS);
  const found = find(name);
  const form = sub === undefined ? undefined : found.forms.find((f) => f.name === `${name} ${sub}`);
  return form ? commandUsage({ ...found, forms: [form] }) : commandUsage(found);
}

function find(name: string): Command {
  const found = COMMANDS.find((c) => c.name === name);
  if (!found) throw new UsageError(`unknown command "${name}"; the commands are ${COMMANDS.map((c) => c.name).join(', ')}`);
  return found;
}

/**
 * Runs `orbit ARGV` and resolves with the exit code: 0, 1 on a failure at run time, 2 on a usage
 * or settings error (the message on stderr, with the command's synopsis for a usage error).
 * `serve` and `dev` resolve once listening and keep the process alive.
 */
export async function main(argv: readonly string[]): Promise<number> {
  const [name, ...args] = argv;
  let current: Command | undefined;
  try {
    if (!name || name === '--help' || name === '-h') {
      console.log(overview(COMMANDS));
      return 0;
    }
    if (name === '--version') {
      console.log(version());
      return 0;
    }
    current = find(name);
    if (asksForHelp(args)) console.log(help([name, ...args.filter((a) => !a.startsWith('-')).slice(0, 1)]));
    else await current.run(args);
    return 0;
  } catch (error) {
    if (error instanceof SettingsError) {
      console.error(`orbit: invalid setting: ${error.message}`);
      return 2;
    }
    const usage = error instanceof UsageError || String((error as { code?: unknown })?.code).startsWith('ERR_PARSE_ARGS');
    console.error(`orbit: ${(error as Error)?.message ?? String(error)}`);
    if (usage && !(error instanceof UsageError && !error.showUsage))
      console.error(`\n${current ? usageHint(current) : 'Run `orbit --help` for the commands.'}`);
    return usage ? 2 : 1;
  }
}

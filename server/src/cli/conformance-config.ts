/**
 * @module
 * `orbit conformance-config [--out FILE] [--url URL] [--retention] [serve's options]`: points the
 * conformance suite (`@orbit/conformance`, conformance/README.md) at this deployment in one step.
 * It opens the database as `orbit bootstrap` does and creates the suite's credentials and queues by
 * the suite's own plan (`bootstrapRoles`, so the roles and permissions are written down once, in
 * the suite), then writes a configuration with the tokens, the queue ids, the timings and limits of
 * the settings it resolves exactly as `orbit serve` would (flags, environment, `--config` file), and
 * the features Orbit offers. A server is not needed for this; it must run on the same database.
 *
 * Running it again works and replaces the file: the namespaces, application and queues are reused,
 * seven new credentials are created, and those that the replaced file named are revoked, so reruns
 * do not pile up live tokens. The suite is an optional peer of the server package and is loaded
 * only by this command.
 */
import { chmodSync, existsSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import type { Bootstrapped, RoleRequest } from '@orbit/conformance';
import { stringify } from 'yaml';
import type { Settings } from '../config.ts';
import { openStore, resolveFromCli, SETTING_OPTIONS } from './options.ts';
import { type Form, parseForm, UsageError } from './usage.ts';

export const CONFORMANCE_CONFIG = {
  name: 'conformance-config',
  summary: "create the conformance suite's credentials and write its configuration for this deployment",
  options: {
    out: {
      type: 'string',
      value: 'FILE',
      default: 'orbit-conformance.yaml',
      help: 'Write the configuration here (readable by its owner only).',
    },
    url: {
      type: 'string',
      value: 'URL',
      help: 'Where the suite reaches the server. Default: the listen address (a wildcard host on loopback), https with TLS.',
    },
    retention: {
      type: 'boolean',
      help: 'Also declare the retention feature, with orbit prune on the same database: it prunes the whole deployment, so a test server only.',
    },
    ...SETTING_OPTIONS,
  },
  notes: [
    'Opens the database as bootstrap does and creates one credential per role of the suite (namespaces conformance and ' +
      'conformance-other, queues conformance-a and conformance-b); timing and limits are the settings resolved as serve ' +
      'resolves them, so give it the settings the server runs with. Running it again creates new credentials and revokes ' +
      'those of the file it replaces. Needs @orbit/conformance installed beside @orbit/server. Then: npx orbit-conformance ' +
      '--config FILE (conformance/README.md, Orbit in one command).',
  ],
} as const satisfies Form;

/** The features of the suite (conformance/README.md, Features) that Orbit offers and a fresh deployment can be tested on. */
const FEATURES = ['results-http', 'batch-publish', 'history', 'queue-list', 'connection-limit', 'subscription-limit', 'request-timeout'];

/** A word for `sh -c`: single-quoted unless it is plainly safe. */
function shellWord(word: string): string {
  return /^[A-Za-z0-9_./:@=+,-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** The URL the suite reaches a server with these settings at: its listener, with a wildcard host read as loopback. */
export function defaultUrl(settings: Pick<Settings, 'listen' | 'tls'>): string {
  const { host, port } = settings.listen;
  const reachable = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host;
  return `${settings.tls ? 'https' : 'http'}://${reachable.includes(':') ? `[${reachable}]` : reachable}:${port}`;
}

/** A sqlite URL with an absolute path, so that a command of the configuration works from any directory. */
function absoluteDatabaseUrl(url: string): string {
  if (!url.startsWith('sqlite:')) return url;
  const path = url.slice('sqlite:'.length);
  if (path === ':memory:')
    throw new UsageError("sqlite::memory: is this command's own database, not the server's; give --database of the server");
  return isAbsolute(path) ? url : `sqlite:${resolve(path)}`;
}

/**
 * The suite's `timing` and `limits` for these settings. The suite waits at most `redeliveryBackoffMs`
 * for an expired delivery to come back: with a backoff, that is its cap (spec/README.md, A
 * delivery's life: recovery). It observes "nothing happens" for `quietMs`, well inside a lease.
 */
export function suiteTiming(settings: Settings) {
  return {
    timing: {
      leaseDurationMs: settings.leaseDurationMs,
      heartbeatIntervalMs: settings.heartbeatIntervalMs,
      idleTimeoutMs: settings.idleTimeoutMs,
      helloTimeoutMs: settings.helloTimeoutMs,
      writeTimeoutMs: settings.writeTimeoutMs,
      requestTimeoutMs: settings.requestTimeoutMs,
      redeliveryBackoffMs: settings.redeliveryBackoffMs === 0 ? 0 : settings.redeliveryBackoffMaxMs,
      quietMs: Math.min(1_000, Math.max(100, Math.floor(settings.leaseDurationMs * 0.4))),
    },
    limits: { maxConnections: settings.maxConnections },
  };
}

async function loadSuite(): Promise<typeof import('@orbit/conformance')> {
  try {
    return await import('@orbit/conformance');
  } catch (error) {
    const missing = (error as { code?: string }).code === 'ERR_MODULE_NOT_FOUND' && String(error).includes("'@orbit/conformance'");
    if (!missing) throw error;
    throw new Error('conformance-config needs the conformance suite next to the server: npm install --save-dev @orbit/conformance');
  }
}

export async function conformanceConfigCommand(args: string[]): Promise<void> {
  const { values } = parseForm(CONFORMANCE_CONFIG, args);
  const { settings } = resolveFromCli(values);
  const out = resolve(values.out ?? 'orbit-conformance.yaml');
  const url = values.url ?? defaultUrl(settings);
  const databaseUrl = absoluteDatabaseUrl(settings.databaseUrl);
  const suite = await loadSuite();

  // The credentials of the file this run replaces, when it is one the suite can read.
  let replaced: string[] = [];
  if (existsSync(out)) {
    try {
      const previous = suite.loadConfig(out);
      replaced = Object.values(previous.credentials).flatMap((c) => (c.credentialId ? [c.credentialId] : []));
    } catch {
      // Not a configuration (or a template not filled in): nothing of ours to revoke.
    }
  }

  const store = await openStore(values);
  try {
    const { credentials, queues }: Bootstrapped = await suite.bootstrapRoles(
      ({ namespace, application, queues, permissions }: RoleRequest) => store.bootstrap({ namespace, application, queues, permissions }),
    );
    const orbit = [process.execPath, process.argv[1] ?? 'orbit'].map(shellWord).join(' ');
    const raw = {
      baseUrl: url,
      credentials,
      queues,
      publish: { method: 'http' },
      ...suiteTiming(settings),
      features: values.retention ? [...FEATURES, 'retention'] : FEATURES,
      ...(values.retention
        ? { retention: { command: `${orbit} prune --before-sequence {before_sequence} --database ${shellWord(databaseUrl)}` } }
        : {}),
    };
    // What the suite would refuse is this command's bug; better to say so here than in the run.
    suite.parseConfig(raw, dirname(out));
    writeFileSync(out, header(out) + stringify(raw), { mode: 0o600 });
    chmodSync(out, 0o600);

    const namespaces = Object.values(suite.BOOTSTRAP_NAMESPACES);
    const fresh = new Set(Object.values(credentials).map((c) => c.credentialId));
    let revoked = 0;
    for (const id of replaced) {
      if (fresh.has(id)) continue;
      const [info] = (await store.listCredentials({ id })) ?? [];
      // Only what this command created: a credential of the suite's namespaces, still live.
      if (info && info.revokedAt === null && namespaces.includes(info.namespace as (typeof namespaces)[number])) {
        if (await store.revokeCredential(id)) revoked++;
      }
    }
    console.log(
      `wrote ${out}: ${Object.keys(credentials).length} credentials in the namespaces ${namespaces.join(' and ')}` +
        `${revoked > 0 ? `, and revoked the ${revoked} of the configuration it replaced` : ''}\n` +
        `run the suite: npx orbit-conformance --config ${shellWord(out)}`,
    );
  } finally {
    await store.close();
  }
}

function header(out: string): string {
  return `# The conformance suite's configuration for this Orbit deployment, written by \`orbit conformance-config\`
# (conformance/README.md). Run the suite: npx orbit-conformance --config ${shellWord(out)}
# The tokens are secrets, so the file is readable by its owner only. Running the command again writes new
# credentials and revokes these. timing and limits are the settings the command resolved (flags, ORBIT_*
# environment, --config file): the server must run with the same ones. Behind a load balancer, remove the
# connection-limit feature; the retention feature (--retention) prunes the results of the whole deployment.
`;
}

/**
 * @module
 * The suite's configuration: where the server is, the credentials by role, the queues, how results
 * are published, the server's timing settings (so expiry cases run in seconds), the declared
 * features and, for CI, the commands that start a server and create credentials. Read from JSON
 * or YAML; every problem is reported with the path of the offending entry.
 */
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { validateId } from '@orbit/generated';
import { parseStrict } from '@orbit/spec/codec';
import { parse as parseYaml } from 'yaml';
import { FEATURES, type Feature } from './features.ts';
import { isObject } from './members.ts';

/** The credential roles a configuration names (see README.md for what each must hold). */
export const ROLES = {
  full: 'events:manage, events:read and events:consume on the primary (and secondary) queue',
  sameNamespace: 'a second credential in the same namespace with the same events:* actions and queues',
  readOnly: 'events:read only',
  consumeOnly: 'events:consume only',
  noEvents: 'no events:* action at all (e.g. results:publish only)',
  otherNamespace: 'events:* in another namespace',
  publisher: 'results:publish on the primary queue (used by the HTTP publisher)',
} as const;
export type Role = keyof typeof ROLES;

export interface Credential {
  readonly token: string;
  /** Known in spawn mode (bootstrap output) or when given; lets cases check `credential_id`. */
  readonly credentialId?: string;
}

export interface Timing {
  readonly leaseDurationMs: number;
  readonly heartbeatIntervalMs: number;
  readonly idleTimeoutMs: number;
  readonly helloTimeoutMs: number;
  readonly writeTimeoutMs: number;
  readonly requestTimeoutMs: number;
  /** Longest delay the server may add before an expired delivery is offered again. */
  readonly redeliveryBackoffMs: number;
  /** How long a case waits to conclude that something does NOT happen. */
  readonly quietMs: number;
}

/** The seed's values; a server started with shorter settings must say so in `timing`. */
export const SEED_TIMING: Timing = {
  leaseDurationMs: 30_000,
  heartbeatIntervalMs: 15_000,
  idleTimeoutMs: 60_000,
  helloTimeoutMs: 5_000,
  writeTimeoutMs: 5_000,
  requestTimeoutMs: 8_000,
  redeliveryBackoffMs: 0,
  quietMs: 1_000,
};

export type PublishConfig = { readonly method: 'http' } | { readonly method: 'command'; readonly command: string };

export interface SpawnConfig {
  /** Shell command that starts the server; `{port}` and `{tmpdir}` are substituted. */
  readonly command: string;
  readonly env: Readonly<Record<string, string>>;
  readonly startupTimeoutMs: number;
}

export interface BootstrapConfig {
  /** Shell command run once per role; prints `{token, credential_id?, queue_ids?}` as JSON. */
  readonly command: string;
  readonly namespace: string;
  readonly otherNamespace: string;
}

export interface SuiteConfig {
  readonly baseUrl: string;
  readonly credentials: Partial<Record<Role, Credential>>;
  readonly queues: { readonly primary?: string; readonly secondary?: string; readonly otherNamespace?: string };
  readonly publish: PublishConfig;
  readonly timing: Timing;
  readonly limits: { readonly maxConnections: number };
  readonly features: readonly Feature[];
  readonly retention?: { readonly command: string };
  /**
   * Sets a delivery's `attempts` and `attempt_budget` directly (`{subscription_id}`,
   * `{delivery_id}`, `{attempts}` and `{attempt_budget}` are substituted): the only way to reach the
   * cumulative budget cap of 1000000, which a client could otherwise only approach one lease expiry
   * at a time.
   */
  readonly attemptBudget?: { readonly command: string };
  readonly server?: SpawnConfig;
  readonly bootstrap?: BootstrapConfig;
  /** fast-check runs per property case. */
  readonly numRuns: number;
  /** Default per-case timeout. */
  readonly caseTimeoutMs: number;
  /** Working directory of every command (the configuration file's directory by default). */
  readonly cwd: string;
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

type Json = Record<string, unknown>;

function only(value: Json, where: string, allowed: readonly string[]): void {
  for (const key of Object.keys(value)) {
    if (!allowed.includes(key)) throw new ConfigError(`${where}: unknown key "${key}" (known: ${allowed.join(', ')})`);
  }
}

function str(value: unknown, where: string): string {
  if (typeof value !== 'string' || value === '') throw new ConfigError(`${where} must be a non-empty string`);
  return value;
}

function int(value: unknown, where: string, min: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min) throw new ConfigError(`${where} must be an integer >= ${min}`);
  return value;
}

function queueId(value: unknown, where: string): string {
  const id = str(value, where);
  if (!validateId(id)) throw new ConfigError(`${where} must be a 32-character lower-case hex id`);
  return id;
}

/** The placeholder of examples/conformance.yaml: a value that still holds it was never filled in. */
export const PLACEHOLDER = 'REPLACE_ME';

const isPlaceholder = (value: unknown): boolean => typeof value === 'string' && value.toUpperCase().includes(PLACEHOLDER);

/**
 * Reads one credential; a value the template left in place, or none at all, becomes a line of
 * `problems` instead of an exception, so that one message names every field at fault.
 */
function credential(value: unknown, role: Role, problems: string[]): Credential | undefined {
  const where = `credentials.${role}`;
  const wanted = `give the token of a credential for this role (${ROLES[role]})`;
  if (value === null || value === '') {
    problems.push(`${where}: empty; ${wanted}, or remove the line (the cases that need it are then skipped)`);
    return undefined;
  }
  const token = isObject(value) ? value.token : value;
  if (isPlaceholder(token)) {
    problems.push(`${where}: still the template's ${PLACEHOLDER}; ${wanted}`);
    return undefined;
  }
  if (typeof value === 'string') return { token: value };
  if (!isObject(value)) throw new ConfigError(`${where} must be a token string or {token, credentialId?}`);
  only(value, where, ['token', 'credentialId']);
  return {
    token: str(value.token, `${where}.token`),
    ...(value.credentialId !== undefined ? { credentialId: queueId(value.credentialId, `${where}.credentialId`) } : {}),
  };
}

const QUEUE_WANTED = {
  primary: 'the id (32 lower-case hex) of a queue that credentials.full can read',
  secondary: 'the id of a second queue of credentials.full, or remove the line (the cursor-bound-to-queue checks are then skipped)',
  otherNamespace: 'the id of a queue of credentials.otherNamespace, or remove the line',
} as const;

/** Validates a parsed configuration object; `cwd` is where relative commands run. */
export function parseConfig(raw: unknown, cwd: string = process.cwd()): SuiteConfig {
  if (!isObject(raw)) throw new ConfigError('the configuration must be an object');
  only(raw, 'config', [
    '$schema',
    'baseUrl',
    'credentials',
    'queues',
    'publish',
    'timing',
    'limits',
    'features',
    'retention',
    'attemptBudget',
    'server',
    'bootstrap',
    'numRuns',
    'caseTimeoutMs',
    'cwd',
  ]);

  const problems: string[] = [];
  const credentials: Partial<Record<Role, Credential>> = {};
  if (raw.credentials !== undefined && raw.credentials !== null) {
    if (!isObject(raw.credentials)) throw new ConfigError('credentials must be an object keyed by role');
    only(raw.credentials, 'credentials', Object.keys(ROLES));
    for (const [role, value] of Object.entries(raw.credentials)) {
      const read = credential(value, role as Role, problems);
      if (read) credentials[role as Role] = read;
    }
  }

  const queues: { primary?: string; secondary?: string; otherNamespace?: string } = {};
  if (raw.queues !== undefined && raw.queues !== null) {
    if (!isObject(raw.queues)) throw new ConfigError('queues must be an object {primary, secondary?, otherNamespace?}');
    only(raw.queues, 'queues', ['primary', 'secondary', 'otherNamespace']);
    for (const key of ['primary', 'secondary', 'otherNamespace'] as const) {
      const value = raw.queues[key];
      if (value === undefined) continue;
      if (value === null || value === '') problems.push(`queues.${key}: empty; give ${QUEUE_WANTED[key]}`);
      else if (isPlaceholder(value)) problems.push(`queues.${key}: still the template's ${PLACEHOLDER}; give ${QUEUE_WANTED[key]}`);
      else if (typeof value !== 'string' || !validateId(value))
        problems.push(`queues.${key}: ${JSON.stringify(value)} is not a 32-character lower-case hex id; give ${QUEUE_WANTED[key]}`);
      else queues[key] = value;
    }
  }

  let publish: PublishConfig = { method: 'http' };
  if (raw.publish !== undefined) {
    if (!isObject(raw.publish)) throw new ConfigError('publish must be {method: "http"} or {method: "command", command}');
    only(raw.publish, 'publish', ['method', 'command']);
    if (raw.publish.method === 'http') publish = { method: 'http' };
    else if (raw.publish.method === 'command') publish = { method: 'command', command: str(raw.publish.command, 'publish.command') };
    else throw new ConfigError('publish.method must be "http" or "command"');
  }

  const timing: Record<string, number> = { ...SEED_TIMING };
  if (raw.timing !== undefined) {
    if (!isObject(raw.timing)) throw new ConfigError('timing must be an object of milliseconds');
    only(raw.timing, 'timing', Object.keys(SEED_TIMING));
    for (const [key, value] of Object.entries(raw.timing)) timing[key] = int(value, `timing.${key}`, key === 'redeliveryBackoffMs' ? 0 : 1);
  }

  let maxConnections = 128;
  if (raw.limits !== undefined) {
    if (!isObject(raw.limits)) throw new ConfigError('limits must be {maxConnections}');
    only(raw.limits, 'limits', ['maxConnections']);
    if (raw.limits.maxConnections !== undefined) maxConnections = int(raw.limits.maxConnections, 'limits.maxConnections', 1);
  }

  const features: Feature[] = [];
  if (raw.features !== undefined) {
    if (!Array.isArray(raw.features)) throw new ConfigError('features must be an array');
    for (const [i, f] of raw.features.entries()) {
      if (typeof f !== 'string' || !Object.hasOwn(FEATURES, f))
        throw new ConfigError(`features[${i}]: unknown feature ${JSON.stringify(f)} (known: ${Object.keys(FEATURES).join(', ')})`);
      features.push(f as Feature);
    }
  }

  let retention: SuiteConfig['retention'];
  if (raw.retention !== undefined) {
    if (!isObject(raw.retention)) throw new ConfigError('retention must be {command}');
    only(raw.retention, 'retention', ['command']);
    retention = { command: str(raw.retention.command, 'retention.command') };
  }
  if (features.includes('retention') && !retention) throw new ConfigError('the feature "retention" needs retention.command');

  let attemptBudget: SuiteConfig['attemptBudget'];
  if (raw.attemptBudget !== undefined) {
    if (!isObject(raw.attemptBudget)) throw new ConfigError('attemptBudget must be {command}');
    only(raw.attemptBudget, 'attemptBudget', ['command']);
    attemptBudget = { command: str(raw.attemptBudget.command, 'attemptBudget.command') };
  }
  if (features.includes('attempt-budget') && !attemptBudget)
    throw new ConfigError('the feature "attempt-budget" needs attemptBudget.command');

  let server: SpawnConfig | undefined;
  if (raw.server !== undefined) {
    if (!isObject(raw.server)) throw new ConfigError('server must be {command, env?, startupTimeoutMs?}');
    only(raw.server, 'server', ['command', 'env', 'startupTimeoutMs']);
    const env: Record<string, string> = {};
    if (raw.server.env !== undefined) {
      if (!isObject(raw.server.env)) throw new ConfigError('server.env must be an object of strings');
      for (const [k, v] of Object.entries(raw.server.env)) env[k] = typeof v === 'number' ? String(v) : str(v, `server.env.${k}`);
    }
    server = {
      command: str(raw.server.command, 'server.command'),
      env,
      startupTimeoutMs: raw.server.startupTimeoutMs === undefined ? 30_000 : int(raw.server.startupTimeoutMs, 'server.startupTimeoutMs', 1),
    };
  }

  let bootstrap: BootstrapConfig | undefined;
  if (raw.bootstrap !== undefined) {
    if (!isObject(raw.bootstrap)) throw new ConfigError('bootstrap must be {command, namespace?, otherNamespace?}');
    only(raw.bootstrap, 'bootstrap', ['command', 'namespace', 'otherNamespace']);
    bootstrap = {
      command: str(raw.bootstrap.command, 'bootstrap.command'),
      namespace: raw.bootstrap.namespace === undefined ? 'conformance' : str(raw.bootstrap.namespace, 'bootstrap.namespace'),
      otherNamespace:
        raw.bootstrap.otherNamespace === undefined ? 'conformance-other' : str(raw.bootstrap.otherNamespace, 'bootstrap.otherNamespace'),
    };
  }

  const baseUrl = raw.baseUrl === undefined && server ? 'http://127.0.0.1:{port}' : str(raw.baseUrl, 'baseUrl');
  // A path is the prefix of a server mounted inside another app (http://host:port/orbit).
  if (!/^https?:\/\/[^/?#]+(\/[^?#]*)?$/.test(baseUrl))
    throw new ConfigError('baseUrl must be http(s)://host[:port] with an optional path prefix, without a query or fragment');

  if (!bootstrap) {
    const given = (key: string) => Object.hasOwn(isObject(raw.credentials) ? raw.credentials : {}, key);
    if (!given('full'))
      problems.push(`credentials.full: missing; give the token of a credential for this role (${ROLES.full}), or bootstrap.command`);
    if (!(isObject(raw.queues) && Object.hasOwn(raw.queues, 'primary')))
      problems.push(`queues.primary: missing; give ${QUEUE_WANTED.primary}, or bootstrap.command`);
    if (publish.method === 'http' && !given('publisher'))
      problems.push(
        `credentials.publisher: missing; publish.method "http" needs the token of a credential for this role (${ROLES.publisher})`,
      );
  }
  // Every field at fault in one message, before the server is asked anything (conformance/README.md, "Before and during the run").
  if (problems.length > 0)
    throw new ConfigError(
      `the configuration is not filled in (${problems.length} ${problems.length === 1 ? 'field' : 'fields'}):\n  ${problems.join('\n  ')}`,
    );

  return {
    baseUrl: baseUrl.replace(/\/$/, ''),
    credentials,
    queues,
    publish,
    timing: timing as unknown as Timing,
    limits: { maxConnections },
    features,
    ...(retention ? { retention } : {}),
    ...(attemptBudget ? { attemptBudget } : {}),
    ...(server ? { server } : {}),
    ...(bootstrap ? { bootstrap } : {}),
    numRuns: raw.numRuns === undefined ? 25 : int(raw.numRuns, 'numRuns', 1),
    caseTimeoutMs: raw.caseTimeoutMs === undefined ? 20_000 : int(raw.caseTimeoutMs, 'caseTimeoutMs', 100),
    cwd: raw.cwd === undefined ? cwd : resolve(cwd, str(raw.cwd, 'cwd')),
  };
}

/** Reads a `.json`, `.yaml` or `.yml` configuration file. */
export function loadConfig(path: string): SuiteConfig {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new ConfigError(`cannot read ${path}: ${(error as Error).message}`);
  }
  let raw: unknown;
  try {
    raw = /\.ya?ml$/i.test(path) ? parseYaml(text, { uniqueKeys: true }) : parseStrict(text);
  } catch (error) {
    throw new ConfigError(`${path} is not valid ${/\.ya?ml$/i.test(path) ? 'YAML' : 'strict JSON'}: ${(error as Error).message}`);
  }
  return parseConfig(raw, dirname(resolve(path)));
}

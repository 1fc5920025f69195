/**
 * @module
 * Server settings. Every setting has one row in `SETTINGS` (or `INTEGER_SETTINGS`, its numeric
 * part): a config-file key, a command-line flag, an `ORBIT_*` environment variable, a default and
 * a range. The documented table (`settingsMarkdown`, `orbit settings --markdown`) is generated from
 * these rows, so the docs cannot drift. Precedence: flag > environment > config file > default.
 * An invalid value stops the start with a `SettingsError` that names where the value came from.
 *
 * Nothing here does I/O except `loadTls` (reads the certificate files a setting names) and
 * `readConfigFile`; `resolveSettings` itself is pure apart from that.
 *
 * Longer than 400 lines: most of it is the settings table, one row per setting, and the resolver,
 * the generated docs table and `orbit settings` all read those rows; split apart, adding a setting
 * would mean editing several files that must agree.
 */
import { readFileSync } from 'node:fs';
import { createSecureContext } from 'node:tls';
import { parse as parseYaml } from 'yaml';
import { parseStrict } from '@orbit/spec/codec';
import { redactDatabaseUrl } from './store/sql.ts';

export type LogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal' | 'silent';
export type LogFormat = 'json' | 'pretty';
export type MetricsMode = 'off' | 'open' | 'token';

export interface ListenAddress {
  readonly host: string;
  readonly port: number;
}

export interface TlsFiles {
  readonly certFile: string;
  readonly keyFile: string;
  /** PEM text, read at start; never logged. */
  readonly cert: string;
  readonly key: string;
}

export interface Settings {
  readonly listen: ListenAddress;
  readonly databaseUrl: string;
  /** Create a MySQL database that `databaseUrl` names and that does not exist (else opening it fails). */
  readonly createDatabase: boolean;
  readonly leaseDurationMs: number;
  readonly heartbeatIntervalMs: number;
  readonly idleTimeoutMs: number;
  readonly helloTimeoutMs: number;
  readonly writeTimeoutMs: number;
  readonly maxConnections: number;
  readonly requestTimeoutMs: number;
  /** Origins allowed to open event connections besides same-origin and none. */
  readonly allowedOrigins: readonly string[];
  /** How often a node looks for results appended by other nodes. */
  readonly pollIntervalMs: number;
  /** A node that has not renewed its row for this long is gone, and its sessions with it. */
  readonly nodeTtlMs: number;
  /** Delay before a recovered delivery is offered again (doubles per attempt, capped). */
  readonly redeliveryBackoffMs: number;
  readonly redeliveryBackoffMaxMs: number;
  /** The background lease sweep: how often, and how many expired leases per batch. */
  readonly sweepIntervalMs: number;
  readonly sweepBatchSize: number;
  /** Retention: 0 turns a limit off; both 0 turns periodic retention off. */
  readonly retentionMaxAgeMs: number;
  readonly retentionMaxResults: number;
  readonly retentionIntervalMs: number;
  readonly retentionBatchSize: number;
  /** How long an idempotency receipt is kept; after it the key is unknown and a request with it is new. */
  readonly idempotencyRetentionMs: number;
  /** MySQL connections per node. */
  readonly databasePoolSize: number;
  readonly shutdownTimeoutMs: number;
  readonly logLevel: LogLevel;
  readonly logFormat: LogFormat;
  readonly metrics: MetricsMode;
  /** Bearer token for `/metrics` when `metrics` is `token`; never logged. */
  readonly metricsToken: string | null;
  /** A separate listener for `/metrics` only; null serves it on the main listener. */
  readonly metricsListen: ListenAddress | null;
  /** Subscriptions reported by the backlog metrics at most (one bounded query per scrape). */
  readonly metricsBacklogLimit: number;
  /** Serve HTTPS and WSS directly when set. */
  readonly tls: TlsFiles | null;
}

export class SettingsError extends Error {
  override readonly name = 'SettingsError';
}

type Key = keyof Settings;

export interface IntegerSetting {
  /** The config-file key. */
  readonly name: string;
  readonly env: string;
  readonly flag: string;
  readonly key: Key;
  readonly fallback: number;
  readonly min: number;
  readonly max: number;
  readonly description: string;
}

function integer(name: string, key: Key, fallback: number, min: number, max: number, description: string): IntegerSetting {
  return { name, env: `ORBIT_${name.toUpperCase()}`, flag: name.replace(/_/g, '-'), key, fallback, min, max, description };
}

/** The numeric settings: name, default (the seed's values where it has one) and range. */
export const INTEGER_SETTINGS: readonly IntegerSetting[] = [
  integer('lease_duration_ms', 'leaseDurationMs', 30_000, 100, 3_600_000, 'Lease of one delivery (spec/rules.md#s6-10: 30 s).'),
  integer(
    'heartbeat_interval_ms',
    'heartbeatIntervalMs',
    15_000,
    100,
    3_600_000,
    'Ping interval advertised in `events.welcome` (spec/rules.md#s7-1: 15 s).',
  ),
  integer(
    'idle_timeout_ms',
    'idleTimeoutMs',
    60_000,
    100,
    3_600_000,
    'An event connection without a valid client frame for this long is closed (spec/rules.md#s7-3: 60 s).',
  ),
  integer(
    'hello_timeout_ms',
    'helloTimeoutMs',
    5_000,
    100,
    600_000,
    'Time to send `events.hello` after the upgrade (spec/rules.md#s5-9: 5 s).',
  ),
  integer(
    'write_timeout_ms',
    'writeTimeoutMs',
    5_000,
    100,
    600_000,
    'A frame not written within this time ends the connection (spec/rules.md#s7-3: 5 s).',
  ),
  integer(
    'max_connections',
    'maxConnections',
    128,
    1,
    100_000,
    'Event connections per node (spec/rules.md#s5-18: 128); beyond it the upgrade gets 429 CAPACITY_EXCEEDED.',
  ),
  integer(
    'request_timeout_ms',
    'requestTimeoutMs',
    8_000,
    100,
    600_000,
    'Server-side limit of one management request (spec/rules.md#s1-19: 8 s), then 503 UNAVAILABLE.',
  ),
  integer(
    'poll_interval_ms',
    'pollIntervalMs',
    20,
    5,
    60_000,
    'How often a node looks for results appended by other nodes, while one of its event connections could take a delivery; ' +
      'with none, it sends no such query.',
  ),
  integer(
    'node_ttl_ms',
    'nodeTtlMs',
    15_000,
    300,
    3_600_000,
    'A node renews its row in `nodes` every third of this; one silent for this long is gone, and any node removes it and its sessions.',
  ),
  integer(
    'redelivery_backoff_ms',
    'redeliveryBackoffMs',
    0,
    0,
    3_600_000,
    'Delay before a recovered delivery is offered again: `backoff · 2^(attempts-1)`; 0 = at once.',
  ),
  integer('redelivery_backoff_max_ms', 'redeliveryBackoffMaxMs', 60_000, 0, 86_400_000, 'Cap of the redelivery delay.'),
  integer(
    'sweep_interval_ms',
    'sweepIntervalMs',
    1_000,
    10,
    3_600_000,
    'Background sweep: expired leases go back to PENDING (or EXPIRED) within this interval, consumed or not.',
  ),
  integer(
    'sweep_batch_size',
    'sweepBatchSize',
    256,
    1,
    10_000,
    'Expired leases recovered per sweep batch (a full batch runs the next one at once).',
  ),
  integer(
    'retention_max_age_ms',
    'retentionMaxAgeMs',
    0,
    0,
    3_153_600_000_000,
    'Periodic retention: prune results older than this; 0 = off.',
  ),
  integer(
    'retention_max_results',
    'retentionMaxResults',
    0,
    0,
    1_000_000_000_000,
    'Periodic retention: keep at most this many newest results; 0 = off.',
  ),
  integer(
    'retention_interval_ms',
    'retentionIntervalMs',
    60_000,
    100,
    86_400_000,
    'How often periodic retention runs: the result limits (when set) and the expiry of idempotency receipts.',
  ),
  integer(
    'retention_batch_size',
    'retentionBatchSize',
    1_000,
    1,
    100_000,
    'Results (or expired idempotency receipts) deleted per retention transaction.',
  ),
  integer(
    'idempotency_retention_ms',
    'idempotencyRetentionMs',
    86_400_000,
    1_000,
    31_536_000_000,
    'How long an `Idempotency-Key` is remembered (24 h, as Stripe); after it a request with the key is new.',
  ),
  integer(
    'database_pool_size',
    'databasePoolSize',
    16,
    1,
    1_000,
    'MySQL connections per node for transactions, plus a quarter of this (at least 2) for single reads (SQLite: one writer, one reader).',
  ),
  integer(
    'shutdown_timeout_ms',
    'shutdownTimeoutMs',
    10_000,
    100,
    600_000,
    'SIGTERM/SIGINT: graceful shutdown must finish within this time, else the process exits with 1.',
  ),
  integer(
    'metrics_backlog_limit',
    'metricsBacklogLimit',
    1_000,
    0,
    100_000,
    'Subscriptions the per-subscription backlog metrics report at most (in subscription id order); 0 = none.',
  ),
];

/** A setting that is not a plain integer. `parse` gets the raw text (or file value) and may throw a message. */
export interface OtherSetting {
  readonly name: string;
  readonly env: string;
  readonly flag: string;
  /** Shown in the docs table. */
  readonly fallbackText: string;
  readonly range: string;
  readonly description: string;
  /** Kept out of `orbit settings` output and logs. */
  readonly secret?: boolean;
  /** A switch: its flag takes no value (`--create-database`); elsewhere `true` or `false`. */
  readonly boolean?: boolean;
  /** The value's name in `orbit COMMAND --help` (`HOST:PORT`, `FILE`). */
  readonly placeholder?: string;
}

function other(name: string, fields: Omit<OtherSetting, 'name' | 'env' | 'flag'> & { flag?: string }): OtherSetting {
  return { name, env: `ORBIT_${name.toUpperCase()}`, flag: fields.flag ?? name.replace(/_/g, '-'), ...fields };
}

export const OTHER_SETTINGS: readonly OtherSetting[] = [
  other('listen', {
    placeholder: 'HOST:PORT',
    fallbackText: '`127.0.0.1:8080`',
    range: '`HOST:PORT` (`[v6]:PORT`); port 0 picks a free port',
    description: 'The HTTP/WebSocket listener.',
  }),
  other('database_url', {
    flag: 'database',
    placeholder: 'URL',
    fallbackText: '`sqlite:./orbit.db`',
    range: '`sqlite:PATH` or `mysql://user:pass@host:port/db`',
    description: 'The store; migrations are applied at start.',
  }),
  other('create_database', {
    boolean: true,
    fallbackText: '`false` (`orbit dev`: `true`)',
    range: '`true`, `false` (the flag takes no value)',
    description:
      'MySQL: create the database that `database_url` names when it does not exist. Without it a missing database stops the start ' +
      'with an error naming it, so a typo never opens an empty store. A SQLite file is created in any case (its directory must exist).',
  }),
  other('allowed_origins', {
    placeholder: 'ORIGINS',
    fallbackText: '(none)',
    range: 'comma-separated `scheme://host[:port]`',
    description: 'Origins allowed to open event connections besides same-origin and no Origin.',
  }),
  other('log_level', {
    placeholder: 'LEVEL',
    fallbackText: '`info`',
    range: '`trace`, `debug`, `info`, `warn`, `error`, `fatal`, `silent`',
    description: 'Log level.',
  }),
  other('log_format', {
    placeholder: 'FORMAT',
    fallbackText: '`json` (`orbit dev`: `pretty`)',
    range: '`json`, `pretty`',
    description: 'JSON lines (pino) or one readable line per entry.',
  }),
  other('metrics', {
    placeholder: 'MODE',
    fallbackText: '`off`',
    range: '`off`, `open`, `token`',
    description: '`GET /metrics`: not served, served to anyone, or only with `Authorization: Bearer <metrics_token>`.',
  }),
  other('metrics_token', {
    placeholder: 'TOKEN',
    fallbackText: '(none)',
    range: '16–256 visible ASCII characters',
    description: 'The bearer token `/metrics` requires when `metrics` is `token`.',
    secret: true,
  }),
  other('metrics_listen', {
    placeholder: 'HOST:PORT',
    fallbackText: '(main listener)',
    range: '`HOST:PORT`',
    description: 'Serve `/metrics` on this separate listener only (requires `metrics` `open` or `token`).',
  }),
  other('tls_cert', {
    placeholder: 'FILE',
    fallbackText: '(none: plain HTTP)',
    range: 'path of a PEM certificate chain',
    description: 'With `tls_key`: serve HTTPS and WSS directly.',
  }),
  other('tls_key', {
    placeholder: 'FILE',
    fallbackText: '(none)',
    range: 'path of a PEM private key',
    description: 'The key of `tls_cert`.',
  }),
  other('config', {
    placeholder: 'FILE',
    fallbackText: '(none)',
    range: 'path of a JSON (`.json`) or YAML file',
    description: 'A config file whose keys are setting names (those of `orbit settings --markdown` but `config`).',
  }),
];

/** Every setting name, in table order. */
export const SETTING_NAMES: readonly string[] = [
  ...OTHER_SETTINGS.slice(0, 4).map((s) => s.name),
  ...INTEGER_SETTINGS.map((s) => s.name),
  ...OTHER_SETTINGS.slice(4).map((s) => s.name),
];

const BY_NAME = new Map<string, IntegerSetting | OtherSetting>([...INTEGER_SETTINGS, ...OTHER_SETTINGS].map((s) => [s.name, s]));

/** Where a value came from: named in error messages and in `orbit settings`. */
export type Source = 'flag' | 'env' | 'file' | 'default';

export interface SettingsInput {
  /** Flag values by setting name (`lease_duration_ms`), as typed. */
  readonly flags?: Readonly<Record<string, string | undefined>>;
  readonly env?: NodeJS.ProcessEnv;
  /** A parsed config file: its path (for messages) and its top-level object. */
  readonly file?: { readonly path: string; readonly values: Readonly<Record<string, unknown>> };
  /** Defaults that differ by command (`orbit dev` logs `pretty`). */
  readonly defaults?: Readonly<Record<string, string>>;
}

interface Raw {
  readonly text: string;
  readonly source: Source;
  /** How the message names it: `--lease-duration-ms`, `ORBIT_LEASE_DURATION_MS`, `lease_duration_ms in FILE`. */
  readonly label: string;
}

export function parseListen(value: string, label = 'listen address'): ListenAddress {
  const match = /^(\[[0-9a-fA-F:]+\]|[A-Za-z0-9.-]+):([0-9]{1,5})$/.exec(value);
  const port = match ? Number(match[2]) : NaN;
  if (!match || port > 65535) throw new SettingsError(`${label} must be HOST:PORT, got "${value}"`);
  return { host: match[1]!.replace(/^\[|\]$/g, ''), port };
}

function fileText(value: unknown, setting: IntegerSetting | OtherSetting): string | null {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (typeof value === 'boolean' && 'boolean' in setting && setting.boolean) return String(value);
  if (Array.isArray(value) && value.every((v) => typeof v === 'string')) return value.join(',');
  return null;
}

/** Checks a config file's keys and value types; unknown keys are an error, never ignored. */
function fileRaw(file: SettingsInput['file']): Map<string, Raw> {
  const out = new Map<string, Raw>();
  if (!file) return out;
  for (const [key, value] of Object.entries(file.values)) {
    const label = `${key} in ${file.path}`;
    if (!BY_NAME.has(key) || key === 'config')
      throw new SettingsError(`unknown setting "${key}" in ${file.path}; known: ${SETTING_NAMES.filter((n) => n !== 'config').join(', ')}`);
    if (value === null || value === undefined) continue;
    const setting = BY_NAME.get(key)!;
    const text = fileText(value, setting);
    if (text === null)
      throw new SettingsError(
        `${label} must be ${'boolean' in setting && setting.boolean ? 'true or false' : 'a string or a number'}, got ${JSON.stringify(value)}`,
      );
    out.set(key, { text, source: 'file', label });
  }
  return out;
}

/** Resolves every setting from flags, environment, config file and defaults, and validates it. */
export function resolveSettings(input: SettingsInput = {}): Settings {
  return resolveWithSources(input).settings;
}

export interface Resolved {
  readonly settings: Settings;
  /** Where each setting's value came from, by setting name. */
  readonly sources: Readonly<Record<string, Source>>;
}

export function resolveWithSources(input: SettingsInput = {}): Resolved {
  const env = input.env ?? {};
  const fromFile = fileRaw(input.file);
  const sources: Record<string, Source> = {};
  const pick = (s: IntegerSetting | OtherSetting): Raw | undefined => {
    const flag = input.flags?.[s.name];
    if (flag !== undefined) return { text: flag, source: 'flag', label: `--${s.flag}` };
    const fromEnv = env[s.env];
    if (fromEnv !== undefined && fromEnv !== '') return { text: fromEnv, source: 'env', label: s.env };
    const file = fromFile.get(s.name);
    if (file) return file;
    const fallback = input.defaults?.[s.name];
    if (fallback !== undefined) return { text: fallback, source: 'default', label: s.name };
    return undefined;
  };
  const text = (name: string): Raw | undefined => {
    const raw = pick(BY_NAME.get(name)!);
    sources[name] = raw?.source ?? 'default';
    return raw;
  };

  const numbers: Record<string, number> = {};
  for (const s of INTEGER_SETTINGS) {
    const raw = text(s.name);
    if (!raw) {
      numbers[s.key] = s.fallback;
      continue;
    }
    const value = raw.text.trim();
    if (!/^[0-9]{1,16}$/.test(value) || Number(value) < s.min || Number(value) > s.max) {
      throw new SettingsError(`${raw.label} must be an integer from ${s.min} to ${s.max}, got "${raw.text}"`);
    }
    numbers[s.key] = Number(value);
  }

  const listenRaw = text('listen');
  const listen = parseListen(listenRaw?.text ?? '127.0.0.1:8080', listenRaw?.label);

  const dbRaw = text('database_url');
  const databaseUrl = dbRaw?.text ?? 'sqlite:./orbit.db';
  if (!/^(sqlite:.+|mysql:\/\/.+)$/.test(databaseUrl))
    throw new SettingsError(
      `${dbRaw!.label} must be sqlite:PATH or mysql://user:pass@host:port/db, got "${redactDatabaseUrl(databaseUrl)}"`,
    );

  const originsRaw = text('allowed_origins');
  const allowedOrigins = (originsRaw?.text ?? '')
    .split(',')
    .map((o) => o.trim())
    .filter(Boolean);
  for (const origin of allowedOrigins) {
    if (!/^https?:\/\/[^/\s]+$/.test(origin))
      throw new SettingsError(`${originsRaw!.label} entries must be scheme://host[:port], got "${origin}"`);
  }

  const oneOf = <T extends string>(name: string, allowed: readonly T[], fallback: T): T => {
    const raw = text(name);
    if (!raw) return fallback;
    const value = raw.text.trim();
    if (!(allowed as readonly string[]).includes(value))
      throw new SettingsError(`${raw.label} must be one of ${allowed.join(', ')}, got "${raw.text}"`);
    return value as T;
  };
  const logLevel = oneOf<LogLevel>('log_level', ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'], 'info');
  const logFormat = oneOf<LogFormat>('log_format', ['json', 'pretty'], 'json');
  const metrics = oneOf<MetricsMode>('metrics', ['off', 'open', 'token'], 'off');
  const createDatabase = oneOf('create_database', ['true', 'false'], 'false') === 'true';

  const tokenRaw = text('metrics_token');
  const metricsToken = tokenRaw?.text ?? null;
  if (tokenRaw && !/^[\x21-\x7E]{16,256}$/.test(tokenRaw.text))
    throw new SettingsError(`${tokenRaw.label} must be 16–256 visible ASCII characters`);
  if (metrics === 'token' && metricsToken === null)
    throw new SettingsError(
      'metrics is "token" but no metrics_token is set (ORBIT_METRICS_TOKEN, --metrics-token or metrics_token in the config file)',
    );

  const metricsListenRaw = text('metrics_listen');
  const metricsListen = metricsListenRaw ? parseListen(metricsListenRaw.text, metricsListenRaw.label) : null;
  if (metricsListen && metrics === 'off')
    throw new SettingsError(`${metricsListenRaw!.label} is set but metrics is "off"; set ORBIT_METRICS to open or token`);

  const certRaw = text('tls_cert');
  const keyRaw = text('tls_key');
  text('config');
  if ((certRaw === undefined) !== (keyRaw === undefined)) {
    throw new SettingsError(
      `${(certRaw ?? keyRaw)!.label} is set without ${certRaw ? 'tls_key (ORBIT_TLS_KEY, --tls-key)' : 'tls_cert (ORBIT_TLS_CERT, --tls-cert)'}; set both or neither`,
    );
  }
  const tls = certRaw && keyRaw ? loadTls(certRaw, keyRaw) : null;

  const settings = {
    ...numbers,
    listen,
    databaseUrl,
    createDatabase,
    allowedOrigins,
    logLevel,
    logFormat,
    metrics,
    metricsToken,
    metricsListen,
    tls,
  } as unknown as Settings;
  return { settings, sources };
}

/** Reads and checks the certificate and key; a bad file is a settings error naming the setting. */
function loadTls(certRaw: Raw, keyRaw: Raw): TlsFiles {
  const read = (raw: Raw): string => {
    try {
      return readFileSync(raw.text, 'utf8');
    } catch (error) {
      throw new SettingsError(`${raw.label}: cannot read "${raw.text}": ${(error as Error).message}`);
    }
  };
  const cert = read(certRaw);
  const key = read(keyRaw);
  try {
    createSecureContext({ cert, key });
  } catch (error) {
    throw new SettingsError(
      `${certRaw.label} / ${keyRaw.label}: not a usable PEM certificate and matching key: ${(error as Error).message}`,
    );
  }
  return { certFile: certRaw.text, keyFile: keyRaw.text, cert, key };
}

/** Reads a config file: `.json` with the strict codec (duplicate keys rejected), anything else as YAML. */
export function readConfigFile(path: string): { path: string; values: Record<string, unknown> } {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new SettingsError(`config file "${path}" cannot be read: ${(error as Error).message}`);
  }
  let values: unknown;
  try {
    values = path.endsWith('.json') ? parseStrict(text) : parseYaml(text, { uniqueKeys: true });
  } catch (error) {
    throw new SettingsError(`config file "${path}" is not valid ${path.endsWith('.json') ? 'JSON' : 'YAML'}: ${(error as Error).message}`);
  }
  if (values === null || values === undefined) values = {};
  if (typeof values !== 'object' || Array.isArray(values)) throw new SettingsError(`config file "${path}" must hold an object of settings`);
  return { path, values: values as Record<string, unknown> };
}

/**
 * The compatibility entry point: environment plus `listen` / `databaseUrl` overrides (treated as
 * flags). Tests and embedders use it.
 */
export function loadSettings(env: NodeJS.ProcessEnv, overrides: { listen?: string; databaseUrl?: string } = {}): Settings {
  return resolveSettings({ env, flags: { listen: overrides.listen, database_url: overrides.databaseUrl } });
}

/** Every setting as a row of the documented table: generated, so docs/operations.md cannot drift. */
export function settingsRows(): { name: string; flag: string; env: string; fallback: string; range: string; description: string }[] {
  return SETTING_NAMES.map((name) => {
    const s = BY_NAME.get(name)!;
    if ('min' in s) {
      return {
        name,
        flag: `--${s.flag}`,
        env: s.env,
        fallback: `\`${s.fallback}\``,
        range: `${s.min}–${s.max}`,
        description: s.description,
      };
    }
    return { name, flag: `--${s.flag}`, env: s.env, fallback: s.fallbackText, range: s.range, description: s.description };
  });
}

export function settingsMarkdown(): string {
  const lines = ['| setting (config file key) | flag | environment | default | range | meaning |', '| --- | --- | --- | --- | --- | --- |'];
  for (const r of settingsRows())
    lines.push(`| \`${r.name}\` | \`${r.flag}\` | \`${r.env}\` | ${r.fallback} | ${r.range} | ${r.description} |`);
  return lines.join('\n');
}

/** A setting's effective value as `orbit settings` and `GET /v1/settings` show it. */
export type SettingValue = string | number | boolean | null;

/**
 * The effective value of every setting but `config`, in table order: secrets replaced (the metrics
 * token by `[redacted]`, the database password by `***`), TLS as file names. What `orbit settings`
 * prints and `GET /v1/settings` answers (spec/README.md, The credential's own view).
 */
export function settingValues(s: Settings): { name: string; value: SettingValue }[] {
  const values: Record<string, SettingValue> = {
    listen: `${s.listen.host.includes(':') ? `[${s.listen.host}]` : s.listen.host}:${s.listen.port}`,
    database_url: redactDatabaseUrl(s.databaseUrl),
    create_database: s.createDatabase,
    allowed_origins: s.allowedOrigins.join(','),
    log_level: s.logLevel,
    log_format: s.logFormat,
    metrics: s.metrics,
    metrics_token: s.metricsToken === null ? null : '[redacted]',
    metrics_listen: s.metricsListen ? `${s.metricsListen.host}:${s.metricsListen.port}` : null,
    tls_cert: s.tls?.certFile ?? null,
    tls_key: s.tls?.keyFile ?? null,
  };
  for (const i of INTEGER_SETTINGS) values[i.name] = s[i.key] as number;
  return SETTING_NAMES.filter((name) => name !== 'config').map((name) => ({ name, value: values[name] ?? null }));
}

/** The effective settings for `orbit settings`: `settingValues` with where each came from. */
export function describeSettings(resolved: Resolved): Record<string, { value: unknown; source: Source }> {
  const out: Record<string, { value: unknown; source: Source }> = {};
  for (const { name, value } of settingValues(resolved.settings)) out[name] = { value, source: resolved.sources[name] ?? 'default' };
  return out;
}

/**
 * @module
 * The settings (config.ts's rows) as command options, and what the commands do with them: resolve
 * them (flag > environment > config file > default), open the store they name, and turn a failure
 * to open it or to listen into a message that names the setting as it was given (`--database`,
 * `ORBIT_DATABASE_URL`, `database_url in FILE`) together with the path, URL or address at fault.
 */
import {
  INTEGER_SETTINGS,
  type IntegerSetting,
  OTHER_SETTINGS,
  type OtherSetting,
  readConfigFile,
  type Resolved,
  resolveWithSources,
  SETTING_NAMES,
  type ListenAddress,
  type Source,
} from '../config.ts';
import { DatabaseOpenError, Store } from '../store/store.ts';
import type { OptionSpec, Options } from './usage.ts';

type Setting = IntegerSetting | OtherSetting;
const SETTINGS: readonly Setting[] = [...OTHER_SETTINGS, ...INTEGER_SETTINGS];
const byName = (name: string): Setting => SETTINGS.find((s) => s.name === name)!;

function settingOption(s: Setting): OptionSpec {
  if ('min' in s) return { type: 'string', value: 'N', help: `${s.description} Default ${s.fallback}, ${s.min}–${s.max}.` };
  const help = `${s.description} Default: ${s.fallbackText}.${s.boolean ? '' : ` Values: ${s.range}.`}`;
  return s.boolean ? { type: 'boolean', help } : { type: 'string', value: s.placeholder ?? 'VALUE', help };
}

function optionsOf(settings: readonly Setting[]): Options {
  return Object.fromEntries(settings.map((s) => [s.flag, settingOption(s)]));
}

/** Every setting as an option (`serve`, `dev`, `settings`), in the order of `orbit settings --markdown`'s rows. */
export const SETTING_OPTIONS: Options = optionsOf(SETTING_NAMES.map(byName));

/** The option of the setting whose flag is `flag`, typed for parseForm. */
function option<T extends OptionSpec['type']>(flag: string, type: T): OptionSpec & { readonly type: T } {
  const spec = settingOption(SETTINGS.find((s) => s.flag === flag)!);
  if (spec.type !== type) throw new TypeError(`--${flag} is a ${spec.type} option`);
  return spec as OptionSpec & { readonly type: T };
}

/** The settings of a command that only opens the database (`migrate`, `bootstrap`, `publish`, `prune`, `credentials`). */
export const DATABASE_OPTIONS = {
  database: option('database', 'string'),
  'create-database': option('create-database', 'boolean'),
  config: option('config', 'string'),
} as const;

/** What a form with DATABASE_OPTIONS (or SETTING_OPTIONS) parsed: values by flag. */
export type SettingValues = Readonly<Record<string, string | boolean | string[] | boolean[] | undefined>>;

export interface CliSettings extends Resolved {
  /** How a message names the setting: as it was given, or `NAME (default)`. */
  label(name: string): string;
}

/** Resolves the settings from parsed flags, the environment and the config file (`--config` or ORBIT_CONFIG). */
export function resolveFromCli(values: SettingValues, defaults?: Record<string, string>): CliSettings {
  const flags: Record<string, string | undefined> = {};
  for (const s of SETTINGS) {
    const value = values[s.flag];
    if (typeof value === 'string') flags[s.name] = value;
    if (value === true) flags[s.name] = 'true';
  }
  const configPath = flags.config ?? (process.env.ORBIT_CONFIG || undefined);
  const file = configPath ? readConfigFile(configPath) : undefined;
  const resolved = resolveWithSources({ flags, env: process.env, ...(file ? { file } : {}), ...(defaults ? { defaults } : {}) });
  const labels: Record<Source, (s: Setting) => string> = {
    flag: (s) => `--${s.flag}`,
    env: (s) => s.env,
    file: (s) => `${s.name} in ${configPath}`,
    default: (s) => `${s.name} (default)`,
  };
  return { ...resolved, label: (name) => labels[resolved.sources[name] ?? 'default'](byName(name)) };
}

/** Opens the store the options name; a failure names the setting and the database. */
export async function openStore(values: SettingValues): Promise<Store> {
  const cli = resolveFromCli(values);
  try {
    return await Store.open(cli.settings.databaseUrl, { createDatabase: cli.settings.createDatabase });
  } catch (error) {
    throw explainStartError(error, cli);
  }
}

/** Why a listener could not be opened, in words; Node's code stays at the end for searching. */
const LISTEN_REASONS: Record<string, string> = {
  EADDRINUSE: 'the port is already in use by another process',
  EADDRNOTAVAIL: "the address is not one of this machine's",
  EACCES: 'permission denied (ports below 1024 need privileges)',
  ENOTFOUND: 'the host name does not resolve',
  EAI_AGAIN: 'the host name does not resolve',
};

/**
 * A failure of `orbit serve`'s start (or of opening the store) with the setting it comes from: a
 * DatabaseOpenError gets the database setting's label, a listener's error its address and label.
 * Anything else is returned as it is.
 */
export function explainStartError(error: unknown, cli: CliSettings): unknown {
  if (error instanceof DatabaseOpenError)
    return new DatabaseOpenError(`${cli.label('database_url')}: ${error.message}`, { cause: error.cause ?? error });
  const e = error as NodeJS.ErrnoException & { address?: string; port?: number; hostname?: string };
  const reason = e?.code ? LISTEN_REASONS[e.code] : undefined;
  if (!reason || !(e.syscall === 'listen' || e.syscall === 'getaddrinfo' || e.syscall === 'bind')) return error;
  // Node names the address it failed on (or the host name it could not resolve); which setting that is.
  const matches = (a: ListenAddress) =>
    e.hostname !== undefined ? e.hostname === a.host : e.port === a.port && (e.address === undefined || e.address === a.host);
  const metrics = cli.settings.metricsListen;
  const name = metrics && matches(metrics) && !matches(cli.settings.listen) ? 'metrics_listen' : 'listen';
  const address = name === 'metrics_listen' && metrics ? metrics : cli.settings.listen;
  const host = address.host.includes(':') ? `[${address.host}]` : address.host;
  return new Error(`${cli.label(name)}: cannot listen on ${host}:${address.port}: ${reason} (${e.code})`, { cause: error });
}

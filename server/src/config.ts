/**
 * @module
 * Server settings: every timing and limit has the seed's value as its default and can be changed
 * through an `ORBIT_*` environment variable (tests shorten them). An invalid value stops the start
 * with a message that names the variable.
 */

export interface Settings {
  readonly listen: { readonly host: string; readonly port: number };
  readonly databaseUrl: string;
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
  /** Delay before a recovered delivery is offered again (doubles per attempt, capped). */
  readonly redeliveryBackoffMs: number;
  readonly redeliveryBackoffMaxMs: number;
}

interface IntegerSetting {
  readonly env: string;
  readonly key: keyof Settings;
  readonly fallback: number;
  readonly min: number;
  readonly max: number;
}

/** The one table of numeric settings: name, default (the seed's values) and range. */
export const INTEGER_SETTINGS: readonly IntegerSetting[] = [
  { env: 'ORBIT_LEASE_DURATION_MS', key: 'leaseDurationMs', fallback: 30_000, min: 100, max: 3_600_000 },
  { env: 'ORBIT_HEARTBEAT_INTERVAL_MS', key: 'heartbeatIntervalMs', fallback: 15_000, min: 100, max: 3_600_000 },
  { env: 'ORBIT_IDLE_TIMEOUT_MS', key: 'idleTimeoutMs', fallback: 60_000, min: 100, max: 3_600_000 },
  { env: 'ORBIT_HELLO_TIMEOUT_MS', key: 'helloTimeoutMs', fallback: 5_000, min: 100, max: 600_000 },
  { env: 'ORBIT_WRITE_TIMEOUT_MS', key: 'writeTimeoutMs', fallback: 5_000, min: 100, max: 600_000 },
  { env: 'ORBIT_MAX_CONNECTIONS', key: 'maxConnections', fallback: 128, min: 1, max: 100_000 },
  { env: 'ORBIT_REQUEST_TIMEOUT_MS', key: 'requestTimeoutMs', fallback: 8_000, min: 100, max: 600_000 },
  { env: 'ORBIT_POLL_INTERVAL_MS', key: 'pollIntervalMs', fallback: 250, min: 10, max: 60_000 },
  { env: 'ORBIT_REDELIVERY_BACKOFF_MS', key: 'redeliveryBackoffMs', fallback: 0, min: 0, max: 3_600_000 },
  { env: 'ORBIT_REDELIVERY_BACKOFF_MAX_MS', key: 'redeliveryBackoffMaxMs', fallback: 60_000, min: 0, max: 86_400_000 },
];

export class SettingsError extends Error {
  override readonly name = 'SettingsError';
}

export function parseListen(value: string): { host: string; port: number } {
  const match = /^(\[[0-9a-fA-F:]+\]|[A-Za-z0-9.-]+):([0-9]{1,5})$/.exec(value);
  const port = match ? Number(match[2]) : NaN;
  if (!match || port > 65535) throw new SettingsError(`listen address must be HOST:PORT, got "${value}"`);
  return { host: match[1]!.replace(/^\[|\]$/g, ''), port };
}

export function loadSettings(env: NodeJS.ProcessEnv, overrides: { listen?: string; databaseUrl?: string } = {}): Settings {
  const numbers: Record<string, number> = {};
  for (const s of INTEGER_SETTINGS) {
    const raw = env[s.env];
    if (raw === undefined || raw === '') {
      numbers[s.key] = s.fallback;
      continue;
    }
    if (!/^[0-9]+$/.test(raw) || Number(raw) < s.min || Number(raw) > s.max) {
      throw new SettingsError(`${s.env} must be an integer from ${s.min} to ${s.max}, got "${raw}"`);
    }
    numbers[s.key] = Number(raw);
  }
  const origins = (env.ORBIT_ALLOWED_ORIGINS ?? '')
    .split(',')
    .map((o) => o.trim())
    .filter(Boolean);
  for (const origin of origins) {
    if (!/^https?:\/\/[^/\s]+$/.test(origin)) throw new SettingsError(`ORBIT_ALLOWED_ORIGINS entries must be scheme://host[:port], got "${origin}"`);
  }
  return {
    listen: parseListen(overrides.listen ?? env.ORBIT_LISTEN ?? '127.0.0.1:8080'),
    databaseUrl: overrides.databaseUrl ?? env.ORBIT_DATABASE_URL ?? 'sqlite:./orbit.db',
    allowedOrigins: origins,
    ...(numbers as Omit<Settings, 'listen' | 'databaseUrl' | 'allowedOrigins'>),
  };
}

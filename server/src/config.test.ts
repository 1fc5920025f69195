import { describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  INTEGER_SETTINGS,
  OTHER_SETTINGS,
  readConfigFile,
  resolveSettings,
  resolveWithSources,
  SETTING_NAMES,
  SettingsError,
  settingsMarkdown,
} from './config.ts';

describe('settings', () => {
  it('has the seed values as defaults and every optional feature off', () => {
    const s = resolveSettings();
    expect(s).toMatchObject({
      listen: { host: '127.0.0.1', port: 8080 },
      databaseUrl: 'sqlite:./orbit.db',
      leaseDurationMs: 30_000,
      heartbeatIntervalMs: 15_000,
      idleTimeoutMs: 60_000,
      helloTimeoutMs: 5_000,
      writeTimeoutMs: 5_000,
      maxConnections: 128,
      requestTimeoutMs: 8_000,
      sweepIntervalMs: 1_000,
      shutdownTimeoutMs: 10_000,
      retentionMaxAgeMs: 0,
      retentionMaxResults: 0,
      metrics: 'off',
      metricsToken: null,
      metricsListen: null,
      tls: null,
      logLevel: 'info',
      logFormat: 'json',
    });
  });

  it('takes flag over environment over file over default, and says where each came from', () => {
    const resolved = resolveWithSources({
      flags: { lease_duration_ms: '4000' },
      env: { ORBIT_LEASE_DURATION_MS: '3000', ORBIT_HEARTBEAT_INTERVAL_MS: '2000' },
      file: { path: 'f.yaml', values: { lease_duration_ms: 1000, heartbeat_interval_ms: 1000, idle_timeout_ms: '1000' } },
    });
    expect(resolved.settings).toMatchObject({
      leaseDurationMs: 4000,
      heartbeatIntervalMs: 2000,
      idleTimeoutMs: 1000,
      helloTimeoutMs: 5000,
    });
    expect(resolved.sources).toMatchObject({
      lease_duration_ms: 'flag',
      heartbeat_interval_ms: 'env',
      idle_timeout_ms: 'file',
      hello_timeout_ms: 'default',
    });
  });

  it('names the setting as it was given when a value is invalid', () => {
    expect(() => resolveSettings({ env: { ORBIT_MAX_CONNECTIONS: '0' } })).toThrow(
      new SettingsError('ORBIT_MAX_CONNECTIONS must be an integer from 1 to 100000, got "0"'),
    );
    expect(() => resolveSettings({ flags: { max_connections: '1.5' } })).toThrow(/--max-connections must be an integer/);
    expect(() => resolveSettings({ file: { path: 'f.json', values: { max_connections: true } } })).toThrow(
      /max_connections in f\.json must be a string or a number/,
    );
    expect(() => resolveSettings({ file: { path: 'f.json', values: { config: 'x' } } })).toThrow(/unknown setting "config" in f\.json/);
    expect(() => resolveSettings({ env: { ORBIT_METRICS: 'token' } })).toThrow(/no metrics_token/);
    expect(() => resolveSettings({ env: { ORBIT_TLS_KEY: 'k.pem' } })).toThrow(/ORBIT_TLS_KEY is set without tls_cert/);
    expect(() => resolveSettings({ env: { ORBIT_TLS_CERT: 'c.pem' } })).toThrow(/ORBIT_TLS_CERT is set without tls_key/);
    expect(() => resolveSettings({ env: { ORBIT_LOG_LEVEL: 'loud' } })).toThrow(
      /ORBIT_LOG_LEVEL must be one of trace, debug, info, warn, error, fatal, silent, got "loud"/,
    );
    expect(() => resolveSettings({ env: { ORBIT_LOG_FORMAT: 'xml' } })).toThrow(/ORBIT_LOG_FORMAT must be one of json, pretty/);
    expect(() => resolveSettings({ env: { ORBIT_METRICS: 'token', ORBIT_METRICS_TOKEN: 'short' } })).toThrow(
      /ORBIT_METRICS_TOKEN must be 16–256 visible ASCII characters/,
    );
    expect(() => resolveSettings({ flags: { metrics_listen: '127.0.0.1:0' } })).toThrow(/--metrics-listen is set but metrics is "off"/);
    expect(() => resolveSettings({ env: { ORBIT_LISTEN: 'localhost' } })).toThrow(/ORBIT_LISTEN must be HOST:PORT, got "localhost"/);
    expect(() => resolveSettings({ env: { ORBIT_LISTEN: '127.0.0.1:70000' } })).toThrow(/ORBIT_LISTEN must be HOST:PORT/);
    expect(() => resolveSettings({ flags: { database_url: 'postgres://x/y' } })).toThrow(/--database must be sqlite:PATH or mysql:/);
    expect(() => resolveSettings({ env: { ORBIT_ALLOWED_ORIGINS: 'console.example' } })).toThrow(
      /ORBIT_ALLOWED_ORIGINS entries must be scheme:\/\/host/,
    );
  });

  it('reads create_database as true or false from a flag, the environment or the file; false by default', () => {
    expect(resolveSettings().createDatabase).toBe(false);
    expect(resolveSettings({ flags: { create_database: 'true' } }).createDatabase).toBe(true);
    expect(resolveSettings({ env: { ORBIT_CREATE_DATABASE: 'true' } }).createDatabase).toBe(true);
    expect(resolveSettings({ file: { path: 'f.yaml', values: { create_database: true } } }).createDatabase).toBe(true);
    expect(resolveSettings({ env: { ORBIT_CREATE_DATABASE: 'false' }, defaults: { create_database: 'true' } }).createDatabase).toBe(false);
    expect(() => resolveSettings({ env: { ORBIT_CREATE_DATABASE: 'yes' } })).toThrow(
      /ORBIT_CREATE_DATABASE must be one of true, false, got "yes"/,
    );
    expect(() => resolveSettings({ file: { path: 'f.json', values: { create_database: 1 } } })).toThrow(
      /create_database in f\.json must be one of true, false, got "1"/,
    );
    expect(() => resolveSettings({ file: { path: 'f.json', values: { create_database: { on: true } } } })).toThrow(
      /create_database in f\.json must be true or false/,
    );
  });

  it('shows a database URL it refuses without its password', () => {
    expect(() => resolveSettings({ flags: { database_url: 'postgres://u:s3cret@h/db' } })).toThrow(
      new SettingsError('--database must be sqlite:PATH or mysql://user:pass@host:port/db, got "postgres://u:***@h/db"'),
    );
  });

  it('reads JSON strictly and YAML with unique keys, and names an unreadable file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'orbit-config-unit-'));
    try {
      const write = (name: string, text: string) => {
        writeFileSync(join(dir, name), text);
        return join(dir, name);
      };
      expect(readConfigFile(write('ok.yaml', 'max_connections: 3\nlisten: "0.0.0.0:9000"\n')).values).toEqual({
        max_connections: 3,
        listen: '0.0.0.0:9000',
      });
      expect(readConfigFile(write('empty.yaml', '')).values).toEqual({});
      expect(() => readConfigFile(write('dup.yaml', 'a: 1\na: 2\n'))).toThrow(/is not valid YAML/);
      expect(() => readConfigFile(write('dup.json', '{"a": 1, "a": 2}'))).toThrow(/is not valid JSON/);
      expect(() => readConfigFile(write('list.yaml', '- 1\n'))).toThrow(/must hold an object of settings/);
      expect(() => readConfigFile(join(dir, 'missing.yaml'))).toThrow(/cannot be read/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('lists every setting once in the generated table', () => {
    const names = [...INTEGER_SETTINGS, ...OTHER_SETTINGS].map((s) => s.name);
    expect(new Set(names).size).toBe(names.length);
    expect([...SETTING_NAMES].sort()).toEqual([...names].sort());
    const table = settingsMarkdown();
    for (const s of [...INTEGER_SETTINGS, ...OTHER_SETTINGS]) expect(table).toContain(`| \`${s.name}\` | \`--${s.flag}\` | \`${s.env}\` |`);
  });
});

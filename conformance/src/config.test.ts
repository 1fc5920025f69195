import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, parseConfig, SEED_TIMING } from './config.ts';

const Q = 'a'.repeat(32);

describe('parseConfig', () => {
  it('fills in the seed timing, 25 runs and the HTTP publisher', () => {
    const config = parseConfig(
      { baseUrl: 'http://127.0.0.1:8080/', credentials: { full: 'tok', publisher: { token: 'pub' } }, queues: { primary: Q } },
      '/x',
    );
    expect(config).toMatchObject({
      baseUrl: 'http://127.0.0.1:8080',
      timing: SEED_TIMING,
      numRuns: 25,
      publish: { method: 'http' },
      features: [],
      cwd: '/x',
    });
    expect(config.credentials.full).toEqual({ token: 'tok' });
  });

  it('names the offending entry', () => {
    const base = { baseUrl: 'http://h:1', credentials: { full: 't', publisher: 'p' }, queues: { primary: Q } };
    expect(() => parseConfig({ ...base, timing: { leaseMs: 1 } })).toThrow('timing: unknown key "leaseMs"');
    expect(() => parseConfig({ ...base, features: ['teleport'] })).toThrow(/features\[0\]: unknown feature "teleport"/);
    expect(() => parseConfig({ ...base, features: ['retention'] })).toThrow('the feature "retention" needs retention.command');
    expect(() => parseConfig({ ...base, queues: { primary: 'ABC' } })).toThrow('queues.primary must be a 32-character lower-case hex id');
    expect(() => parseConfig({ ...base, credentials: { full: 't' } })).toThrow(ConfigError);
    expect(() => parseConfig({ ...base, credentials: { ...base.credentials, admin: 'x' } })).toThrow(/credentials: unknown key "admin"/);
  });

  it('accepts spawn mode without credentials and defaults the base URL to the spawned port', () => {
    const config = parseConfig({
      server: { command: 'orbit serve --listen 127.0.0.1:{port}', env: { ORBIT_LEASE_DURATION_MS: 1000 } },
      bootstrap: { command: 'orbit bootstrap' },
    });
    expect(config.baseUrl).toBe('http://127.0.0.1:{port}');
    expect(config.server?.env).toEqual({ ORBIT_LEASE_DURATION_MS: '1000' });
    expect(config.bootstrap).toMatchObject({ namespace: 'conformance', otherNamespace: 'conformance-other' });
  });
});

describe('loadConfig', () => {
  it('reads YAML and strict JSON, and refuses duplicate keys in either', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cf-config-'));
    writeFileSync(
      join(dir, 'c.yaml'),
      `baseUrl: http://127.0.0.1:8080\ncredentials:\n  full: t\n  publisher: p\nqueues:\n  primary: "${Q}"\n`,
    );
    expect(loadConfig(join(dir, 'c.yaml')).cwd).toBe(dir);
    writeFileSync(join(dir, 'dup.yaml'), 'baseUrl: http://a:1\nbaseUrl: http://b:1\n');
    expect(() => loadConfig(join(dir, 'dup.yaml'))).toThrow(ConfigError);
    writeFileSync(join(dir, 'dup.json'), '{"baseUrl":"http://a:1","baseUrl":"http://b:1"}');
    expect(() => loadConfig(join(dir, 'dup.json'))).toThrow(/not valid strict JSON/);
  });
});

import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { ConfigError, loadConfig, PLACEHOLDER, parseConfig, ROLES, SEED_TIMING } from './config.ts';

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
    expect(() => parseConfig({ ...base, queues: { primary: 'ABC' } })).toThrow(
      'queues.primary: "ABC" is not a 32-character lower-case hex id',
    );
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

describe('a configuration that is not filled in', () => {
  const TEMPLATE = fileURLToPath(new URL('../examples/conformance.yaml', import.meta.url));

  /** The lines of the ConfigError that `run` throws, one per field at fault. */
  function faults(run: () => unknown): string[] {
    try {
      run();
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      const [head, ...lines] = (error as Error).message.split('\n');
      expect(head).toMatch(/^the configuration is not filled in \(\d+ fields?\):$/);
      return lines.map((l) => l.trim());
    }
    throw new Error('no ConfigError');
  }

  it('the shipped template, unedited: names every credential and the primary queue, each once', () => {
    const lines = faults(() => loadConfig(TEMPLATE));
    const fields = lines.map((l) => l.slice(0, l.indexOf(':')));
    expect(fields).toEqual([...Object.keys(ROLES).map((r) => `credentials.${r}`), 'queues.primary']);
    for (const line of lines) expect(line).toContain(`still the template's ${PLACEHOLDER}`);
    expect(lines[2]).toContain('events:read only');
  });

  it('the template with some fields filled in: names only the rest', () => {
    const raw = parseYaml(readFileSync(TEMPLATE, 'utf8')) as { credentials: Record<string, string>; queues: Record<string, string> };
    raw.credentials.full = 'orbit_real';
    raw.credentials.publisher = 'orbit_pub';
    raw.queues.primary = Q;
    const fields = faults(() => parseConfig(raw)).map((l) => l.slice(0, l.indexOf(':')));
    expect(fields).toEqual([
      'credentials.sameNamespace',
      'credentials.readOnly',
      'credentials.consumeOnly',
      'credentials.noEvents',
      'credentials.otherNamespace',
    ]);
    // Left out entirely, a role's cases are skipped instead (README.md, Configuration reference).
    for (const role of fields) delete raw.credentials[role.replace('credentials.', '')];
    expect(parseConfig(raw).credentials).toEqual({ full: { token: 'orbit_real' }, publisher: { token: 'orbit_pub' } });
  });

  it('names empty values, placeholders in {token} form, and every missing field at once', () => {
    const lines = faults(() =>
      parseConfig({ baseUrl: 'http://h:1', credentials: { readOnly: null, noEvents: { token: 'replace_me' } }, queues: { secondary: '' } }),
    );
    expect(lines).toEqual([
      expect.stringMatching(/^credentials\.readOnly: empty; .*or remove the line/),
      expect.stringMatching(/^credentials\.noEvents: still the template's REPLACE_ME/),
      expect.stringMatching(/^queues\.secondary: empty/),
      expect.stringMatching(/^credentials\.full: missing; .*or bootstrap\.command$/),
      expect.stringMatching(/^queues\.primary: missing/),
      expect.stringMatching(/^credentials\.publisher: missing; publish\.method "http" needs/),
    ]);
  });

  it("placeholders are refused in spawn mode too, where missing credentials are the bootstrap's to create", () => {
    expect(
      faults(() => parseConfig({ bootstrap: { command: 'x' }, server: { command: 'y' }, credentials: { full: 'REPLACE_ME' } })),
    ).toEqual([expect.stringMatching(/^credentials\.full: still the template's/)]);
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

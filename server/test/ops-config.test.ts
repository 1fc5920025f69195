/**
 * Configuration (docs/operations.md, Settings) through the real CLI: flags, ORBIT_* environment and
 * a JSON or YAML config file, with precedence flag > environment > file > default; every invalid
 * setting stops the start with exit code 2 and a message naming the setting; the documented table
 * in docs/operations.md is the generated one, and every metric is documented.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SETTING_NAMES, settingsMarkdown } from '../src/config.ts';
import { METRICS } from '../src/ops/metrics.ts';
import { api, freePort, freshDatabase, runOrbit, serveOrbit, STORES } from '@orbit/testing';

let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'orbit-config-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

describe('orbit settings', () => {
  it('MUST take each setting from the flag, else the environment, else the config file, else the default', async () => {
    const yaml = file(
      'precedence.yaml',
      [
        'lease_duration_ms: 1111',
        'heartbeat_interval_ms: 2222',
        'idle_timeout_ms: 3333',
        'metrics: token',
        'metrics_token: "file-token-0123456789"',
        'allowed_origins: [https://a.example, https://b.example]',
        '',
      ].join('\n'),
    );
    const run = await runOrbit(
      ['settings', '--config', yaml, '--idle-timeout-ms', '6666', '--database', 'mysql://orbit:s3cret@127.0.0.1:3306/orbit'],
      {
        ORBIT_HEARTBEAT_INTERVAL_MS: '4444',
        ORBIT_IDLE_TIMEOUT_MS: '5555',
      },
    );
    expect(run.code, run.stderr).toBe(0);
    const shown = JSON.parse(run.stdout);
    expect(shown.lease_duration_ms).toEqual({ value: 1111, source: 'file' });
    expect(shown.heartbeat_interval_ms).toEqual({ value: 4444, source: 'env' });
    expect(shown.idle_timeout_ms).toEqual({ value: 6666, source: 'flag' });
    expect(shown.hello_timeout_ms).toEqual({ value: 5000, source: 'default' });
    expect(shown.allowed_origins.value).toBe('https://a.example,https://b.example');
    // Secrets are never printed.
    expect(shown.metrics_token).toEqual({ value: '[redacted]', source: 'file' });
    expect(shown.database_url.value).toBe('mysql://orbit:***@127.0.0.1:3306/orbit');
    expect(run.stdout).not.toContain('file-token-0123456789');
    expect(run.stdout).not.toContain('s3cret');
    expect(Object.keys(shown).sort()).toEqual(SETTING_NAMES.filter((n) => n !== 'config').sort());
  });

  it('MUST read ORBIT_CONFIG, and prefer --config over it', async () => {
    const a = file('a.json', JSON.stringify({ max_connections: 7 }));
    const b = file('b.json', JSON.stringify({ max_connections: 9 }));
    expect(JSON.parse((await runOrbit(['settings'], { ORBIT_CONFIG: a })).stdout).max_connections.value).toBe(7);
    expect(JSON.parse((await runOrbit(['settings', '--config', b], { ORBIT_CONFIG: a })).stdout).max_connections.value).toBe(9);
  });

  // Representative cases through the real CLI; every other rule is covered in src/config.test.ts.
  const invalid: Array<[string, string[], Record<string, string>, RegExp]> = [
    [
      'an environment value out of range',
      ['serve'],
      { ORBIT_LEASE_DURATION_MS: '5' },
      /ORBIT_LEASE_DURATION_MS must be an integer from 100 to 3600000, got "5"/,
    ],
    [
      'a flag value that is not a number',
      ['serve', '--max-connections', 'many'],
      {},
      /--max-connections must be an integer from 1 to 100000/,
    ],
    ['token metrics without a token', ['serve', '--metrics', 'token'], {}, /metrics is "token" but no metrics_token is set/],
    [
      'an unreadable certificate',
      ['serve', '--tls-cert', '/nonexistent/cert.pem', '--tls-key', '/nonexistent/key.pem'],
      {},
      /--tls-cert: cannot read "\/nonexistent\/cert.pem"/,
    ],
  ];
  for (const [what, args, env, message] of invalid) {
    // Independent processes: run them side by side.
    it.concurrent(`MUST stop with exit code 2 and name the setting on ${what}`, async () => {
      const run = await runOrbit(args, env);
      expect(run.code, run.stderr).toBe(2);
      expect(run.stderr).toMatch(/^orbit: invalid setting: /);
      expect(run.stderr).toMatch(message);
    });
  }

  it('MUST stop with exit code 2 on a bad config file (a bad value, an unknown key, a duplicate key) and on an unknown flag', async () => {
    const bad = file('bad.yaml', 'lease_duration_ms: 50\n');
    const unknown = file('unknown.yaml', 'lease_duration: 500\n');
    const duplicate = file('duplicate.json', '{"max_connections": 1, "max_connections": 2}');
    const [badRun, unknownRun, duplicateRun, unknownFlagRun] = await Promise.all([
      runOrbit(['serve', '--config', bad]),
      runOrbit(['serve', '--config', unknown]),
      runOrbit(['serve', '--config', duplicate]),
      // An unknown flag is a usage error too.
      runOrbit(['serve', '--lease-duration', '500']),
    ]);
    for (const run of [badRun, unknownRun, duplicateRun, unknownFlagRun]) expect(run.code, run.stderr).toBe(2);
    expect(badRun.stderr).toContain(`lease_duration_ms in ${bad} must be an integer from 100 to 3600000, got "50"`);
    expect(unknownRun.stderr).toContain(`unknown setting "lease_duration" in ${unknown}`);
    expect(duplicateRun.stderr).toMatch(/is not valid JSON/);
    expect(unknownFlagRun.stderr).toMatch(/Unknown option '--lease-duration'/);
  });
});

describe.each(STORES)('orbit serve --config on %s', (kind) => {
  it('MUST serve with the listener, database and metrics of a YAML config file', async () => {
    const database = await freshDatabase(kind);
    const port = await freePort();
    const config = file(
      `serve-${kind}.yaml`,
      [`listen: "127.0.0.1:${port}"`, `database_url: "${database.url}"`, 'metrics: open', 'lease_duration_ms: 1234', ''].join('\n'),
    );
    const server = await serveOrbit(['--config', config]);
    try {
      expect(server.url).toBe(`http://127.0.0.1:${port}`);
      expect((await api(server.url, 'GET', '/readyz')).status).toBe(200);
      const metrics = await fetch(`${server.url}/metrics`);
      expect(metrics.status).toBe(200);
      expect(await metrics.text()).toContain('orbit_event_connections 0');
    } finally {
      expect(await server.stop()).toBe(0);
      await database.drop();
    }
  });
});

describe('docs/operations.md', () => {
  const doc = readFileSync(new URL('../../docs/operations.md', import.meta.url), 'utf8');

  it('MUST hold the generated settings table (`orbit settings --markdown`) between its markers', () => {
    const between = /<!-- settings:begin[^>]*-->\n([\s\S]*?)\n<!-- settings:end -->/.exec(doc);
    expect(between, 'settings markers').not.toBeNull();
    expect(between![1]).toBe(settingsMarkdown());
  });

  it('MUST describe every metric with its type', () => {
    for (const [name, def] of Object.entries(METRICS)) expect(doc, name).toContain(`| \`${name}\` | ${def.type} |`);
  });
});

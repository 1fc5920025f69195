import { describe, expect, it } from 'vitest';
import { newToken } from '../crypto.ts';
import { createLogger, prettyLine, scrub } from './log.ts';

function capture(options: Parameters<typeof createLogger>[0] = {}) {
  const lines: string[] = [];
  const { log } = createLogger({ ...options, write: (line) => lines.push(line) });
  return { log, lines };
}

describe('logger', () => {
  it('writes JSON lines with a level name, an ISO time, the message and the fields', () => {
    const { log, lines } = capture();
    log('info', 'request', { request_id: 'a'.repeat(32), status: 200 });
    const entry = JSON.parse(lines[0]!);
    expect(entry).toMatchObject({ level: 'info', msg: 'request', request_id: 'a'.repeat(32), status: 200 });
    expect(entry.time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it('drops entries below the level', () => {
    const { log, lines } = capture({ level: 'warn' });
    log('debug', 'quiet');
    log('info', 'quiet');
    log('warn', 'loud');
    expect(lines.map((l) => JSON.parse(l).msg)).toEqual(['loud']);
    const silent = capture({ level: 'silent' });
    silent.log('fatal', 'x');
    expect(silent.lines).toEqual([]);
  });

  it('redacts secret fields at the top level and nested, and scrubs tokens and Bearer values anywhere', () => {
    const { log, lines } = capture();
    const token = `orbit_${'x'.repeat(43)}`;
    log('error', `failed for Bearer ${token}`, {
      token,
      lease_secret: 'S'.repeat(43),
      digest: 'd'.repeat(64),
      headers: { authorization: `Bearer ${token}` },
      nested: { deeper: { token_digest: 'e'.repeat(64) } },
      error: `bad token ${token}`,
    });
    const line = lines[0]!;
    expect(line).not.toContain('x'.repeat(43));
    expect(line).not.toContain('S'.repeat(43));
    expect(line).not.toContain('d'.repeat(64));
    expect(line).not.toContain('e'.repeat(64));
    const entry = JSON.parse(line);
    expect(entry.token).toBe('[redacted]');
    expect(entry.headers.authorization).toBe('[redacted]');
    expect(entry.nested.deeper.token_digest).toBe('[redacted]');
    expect(scrub('Authorization: Bearer abc.def')).toBe('Authorization: Bearer [redacted]');
  });

  it('masks every token newToken mints, wherever it stands in a line', () => {
    for (let i = 0; i < 200; i++) {
      const token = newToken();
      for (const line of [token, `"${token}"`, `token=${token}&x=1`, `bad token ${token}.`, `(${token})`]) {
        expect(scrub(line), line).not.toContain(token.slice('orbit_'.length));
        expect(scrub(line)).toContain('orbit_[redacted]');
      }
    }
  });

  it('keeps names that only start with orbit_: databases, metrics, and a startup line with them', () => {
    const names = [
      'mysql://root@127.0.0.1:3306/orbit_x',
      'mysql://root@127.0.0.1:3306/orbit_test',
      'mysql://orbit:***@db:3306/orbit_integration_tests_eu_west',
      `mysql://root@127.0.0.1:3306/orbit_${'a'.repeat(44)}`,
      'sqlite:/var/lib/orbit/orbit_production_database_2026.db',
      'orbit_publish_to_deliver_seconds_bucket',
    ];
    for (const name of names) expect(scrub(name)).toBe(name);
    const { log, lines } = capture();
    log('info', 'orbit is serving', { database: names[2] });
    expect(JSON.parse(lines[0]!).database).toBe(names[2]);
  });

  it('formats readable lines for orbit dev', () => {
    const { log, lines } = capture({ format: 'pretty' });
    log('warn', 'write timed out; closing', { session_id: 'b'.repeat(32), detail: 'two words' });
    expect(lines[0]).toMatch(/^\d\d:\d\d:\d\d\.\d{3} WARN {2}write timed out; closing session_id=b{32} detail="two words"\n$/);
    expect(prettyLine('not json')).toBe('not json');
  });
});

import { describe, expect, it } from 'vitest';
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

  it('formats readable lines for orbit dev', () => {
    const { log, lines } = capture({ format: 'pretty' });
    log('warn', 'write timed out; closing', { session_id: 'b'.repeat(32), detail: 'two words' });
    expect(lines[0]).toMatch(/^\d\d:\d\d:\d\d\.\d{3} WARN {2}write timed out; closing session_id=b{32} detail="two words"\n$/);
    expect(prettyLine('not json')).toBe('not json');
  });
});

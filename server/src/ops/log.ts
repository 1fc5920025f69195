/**
 * @module
 * Logging: pino JSON lines for `orbit serve`, one readable line per entry for `orbit dev` (a tiny
 * formatter of our own over pino's output, no transport or worker thread). Callers pass
 * `request_id` and `session_id` as fields.
 *
 * Secrets never reach the output, twice over: known field names (tokens, lease secrets, digests,
 * authorization headers) are redacted by pino's `redact`, and every written line is scrubbed of
 * anything shaped exactly like an Orbit token or a `Bearer` value, in case one hides in a message.
 * Database URLs come redacted already (`redactDatabaseUrl`: the password) and keep their names.
 */
import { pino, type DestinationStream, type Logger } from 'pino';
import type { LogFormat, LogLevel } from '../config.ts';
import { TOKEN_BYTES, TOKEN_PREFIX } from '../crypto.ts';

export type Level = 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal';
export type Log = (level: Level, message: string, fields?: Record<string, unknown>) => void;

/** Field names whose values never appear in a log line, at the top level and two levels down. */
export const SECRET_FIELDS = [
  'token',
  'authorization',
  'lease_secret',
  'secret',
  'digest',
  'token_digest',
  'lease_digest',
  'metrics_token',
  'password',
  'key',
  'cookie',
];

export const REDACT_PATHS = SECRET_FIELDS.flatMap((f) => [f, `*.${f}`, `*.*.${f}`]);

const CENSOR = '[redacted]';

/**
 * An Orbit bearer token exactly as `newToken` mints it: the prefix and the base64url text of its
 * random bytes (43 characters), not followed by another base64url character. Anything looser would
 * also take names that merely start with the prefix (a database `orbit_integration_tests_eu_west`).
 */
const TOKEN = new RegExp(`${TOKEN_PREFIX}[A-Za-z0-9_-]{${Math.ceil((TOKEN_BYTES * 8) / 6)}}(?![A-Za-z0-9_-])`, 'g');

/** Orbit bearer tokens and any `Bearer …` value. */
export function scrub(line: string): string {
  return line.replace(TOKEN, `${TOKEN_PREFIX}${CENSOR}`).replace(/(Bearer\s+)[^\s",]+/gi, `$1${CENSOR}`);
}

const LEVEL_LABEL: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };

/** One pino JSON line as `HH:MM:SS.mmm LEVEL message key=value …` (for `orbit dev`). */
export function prettyLine(json: string): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json;
  }
  const { time, level, msg, pid: _pid, hostname: _hostname, ...fields } = entry;
  const clock = typeof time === 'string' ? time.slice(11, 23) : new Date(Number(time ?? Date.now())).toISOString().slice(11, 23);
  const label = typeof level === 'number' ? (LEVEL_LABEL[level] ?? String(level)) : String(level ?? '').toUpperCase();
  const extra = Object.entries(fields)
    .map(([k, v]) => `${k}=${typeof v === 'string' && !/\s/.test(v) ? v : JSON.stringify(v)}`)
    .join(' ');
  return `${clock} ${label.padEnd(5)} ${String(msg ?? '')}${extra ? ` ${extra}` : ''}\n`;
}

export interface LoggerOptions {
  readonly format?: LogFormat;
  readonly level?: LogLevel;
  /** Where lines go; default stdout. Receives complete lines with their newline. */
  readonly write?: (line: string) => void;
}

export interface OrbitLogger {
  readonly log: Log;
  readonly pino: Logger;
}

export function createLogger(options: LoggerOptions = {}): OrbitLogger {
  const format = options.format ?? 'json';
  const write = options.write ?? ((line: string) => void process.stdout.write(line));
  const destination: DestinationStream = { write: (line: string) => write(format === 'pretty' ? prettyLine(line) : line) };
  const logger = pino(
    {
      level: options.level ?? 'info',
      base: undefined,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      redact: { paths: REDACT_PATHS, censor: CENSOR },
      hooks: { streamWrite: scrub },
    },
    destination,
  );
  return {
    pino: logger,
    log(level, message, fields = {}) {
      logger[level](fields, message);
    },
  };
}

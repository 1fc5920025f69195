/**
 * @module
 * A minimal structured logger: JSON lines for `orbit serve`, readable lines for `orbit dev`.
 * Callers never pass tokens, lease secrets or digests.
 */
export type Level = 'info' | 'warn' | 'error';
export type Log = (level: Level, message: string, fields?: Record<string, unknown>) => void;

export function createLogger(format: 'json' | 'pretty', write: (line: string) => void = (line) => process.stderr.write(line + '\n')): Log {
  return (level, message, fields = {}) => {
    if (format === 'json') {
      write(JSON.stringify({ time: new Date().toISOString(), level, msg: message, ...fields }));
      return;
    }
    const extra = Object.entries(fields)
      .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
      .join(' ');
    write(`${level.toUpperCase().padEnd(5)} ${message}${extra ? ` ${extra}` : ''}`);
  };
}

/**
 * @module
 * The SDK's logger hook: one function, `(level, message, fields) => void`, the shape of the
 * server's `log` option (`createOrbit(settings, { log })`, docs/embedding.md), so one logger serves
 * both. Nothing is logged unless the application passes one (docs/sdk.md, Logging).
 *
 * What reaches it never holds a credential: messages and fields are built by the SDK from ids,
 * URLs (which never carry credentials: the clients refuse a base URL with them), codes and error
 * messages; tokens and lease secrets are never among them.
 */
import { OrbitError } from '@orbit/spec/errors';
import { ConnectionClosedError, OrbitTransportError } from './errors.ts';

/** The levels the SDK logs at: `debug` for every step, `info` for the connection's life, `warn` for what it recovers from, `error` for what it cannot. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

/**
 * Receives one log entry: a short message for people and snake_case fields for machines
 * (`subscription_id`, `session_id`, `close_code`, `delay_ms`, `code`, `error`, ...). The server's
 * `Log` (from `@orbit/server`, or `createLogger().log`) is one, and so is
 * `(level, message, fields) => console[level](message, fields)`.
 */
export type Log = (level: LogLevel, message: string, fields?: Record<string, unknown>) => void;

/** The default: logs nothing. */
const SILENT: Log = () => {};

/** The caller's logger, or the silent one; a logger that throws never breaks the SDK (its exception is dropped). */
export function safeLog(log: Log | undefined): Log {
  if (log === undefined) return SILENT;
  if (typeof log !== 'function') throw new TypeError('log must be a function (level, message, fields) => void');
  return (level, message, fields) => {
    try {
      log(level, message, fields);
    } catch {
      // A logger is an observer: its failure must not change what the SDK does.
    }
  };
}

/** The fields that describe an error: its message, and for an `OrbitError` its code and what the transport or the close said. */
export function errorFields(error: unknown): Record<string, unknown> {
  if (!(error instanceof Error)) return { error: String(error) };
  const fields: Record<string, unknown> = { error: error.message };
  if (error instanceof OrbitError) {
    fields.code = error.code;
    fields.retryable = error.retryable;
    if (error.status !== null) fields.status = error.status;
    if (error.requestId !== undefined) fields.request_id = error.requestId;
  }
  if (error instanceof OrbitTransportError) fields.failure = error.failure;
  if (error instanceof ConnectionClosedError) {
    fields.close_code = error.closeCode;
    if (error.closeReason) fields.close_reason = error.closeReason;
  }
  return fields;
}

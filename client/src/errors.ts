/**
 * @module
 * The SDK's errors. Everything the SDK throws for a failed operation is an `OrbitError` (from
 * `@orbit/spec/errors`) with one of the contract's codes:
 *
 * - an error the server reported (HTTP error envelope, WebSocket `error` frame) is a plain
 *   `OrbitError` with the server's `code`, HTTP `status` (null on the WebSocket) and `requestId`;
 * - a failure of the transport itself (network error, timeout, an answer that breaks the contract)
 *   is an {@link OrbitTransportError}, code `UNAVAILABLE`;
 * - the end of an event connection is an {@link ConnectionClosedError}, whose code is the one the
 *   server gave for closing (for example `EVENT_HISTORY_EXPIRED`), else one read from the close
 *   code (spec/README.md, Close codes), which also decides whether a reconnect may help.
 */
import { ERROR_TABLE, OrbitError, RETRYABLE_CLOSE_CODES, isErrorCode, type ErrorCode } from '@orbit/spec/errors';

export { OrbitError, ERROR_TABLE, ERROR_CODES, isErrorCode, type ErrorCode } from '@orbit/spec/errors';

/** Why a transport failed. */
export type TransportFailure =
  /** The request or connection could not be made or was cut (DNS, refused, reset). */
  | 'network'
  /** No answer within the configured time. */
  | 'timeout'
  /** The answer is not what the contract says (not strict JSON, fails the generated validator, out-of-range uint64, ...). */
  | 'bad_response';

/** A transport failure: code `UNAVAILABLE`; `retryable` says whether the same request may be sent again. */
export class OrbitTransportError extends OrbitError {
  readonly failure: TransportFailure;
  readonly #retryable: boolean;

  constructor(
    failure: TransportFailure,
    message: string,
    options: { status?: number | null; requestId?: string; retryAfterMs?: number; cause?: unknown; retryable?: boolean } = {},
  ) {
    super('UNAVAILABLE', message, {
      status: options.status ?? null,
      ...(options.requestId !== undefined ? { requestId: options.requestId } : {}),
      ...(options.retryAfterMs !== undefined ? { retryAfterMs: options.retryAfterMs } : {}),
      ...(options.cause !== undefined ? { cause: options.cause } : {}),
    });
    this.failure = failure;
    this.#retryable = options.retryable ?? failure !== 'bad_response';
  }

  override get retryable(): boolean {
    return this.#retryable;
  }
}

/**
 * An event connection ended. `code` is the contract code the server gave (the error frame sent
 * before closing, or the close reason, which the server sets to the code), otherwise one derived
 * from the WebSocket close code (see {@link closedError}). `retryable` says whether reconnecting
 * may help.
 */
export class ConnectionClosedError extends OrbitError {
  /** The WebSocket close code (1006 when the connection was cut without a close frame). */
  readonly closeCode: number;
  readonly closeReason: string;
  readonly #retryable: boolean;

  constructor(
    code: ErrorCode,
    message: string,
    closeCode: number,
    closeReason: string,
    options: { cause?: unknown; retryable?: boolean } = {},
  ) {
    super(code, message, { status: null, ...(options.cause !== undefined ? { cause: options.cause } : {}) });
    this.closeCode = closeCode;
    this.closeReason = closeReason;
    this.#retryable = options.retryable ?? ERROR_TABLE[code].retryable;
  }

  override get retryable(): boolean {
    return this.#retryable;
  }
}

/**
 * The WebSocket close codes of `orbit.events.v1` that say "try again" (spec/README.md "Close
 * codes"; the table is `CLOSE_CODES` in `@orbit/spec/errors`).
 */
export { RETRYABLE_CLOSE_CODES };

/** Close codes that say this side broke the protocol or a limit: sending the same again fails again. */
const VIOLATION_CLOSE_CODES: ReadonlySet<number> = new Set([1002, 1003, 1007, 1008, 1009, 1010]);

const CLOSE_MEANINGS: Readonly<Record<number, string>> = {
  1000: 'the server ended the connection (1000)',
  1001: 'the server is going away (1001)',
  1006: 'the connection was cut (1006)',
  1008: 'the server closed the connection for a policy violation (1008)',
  1009: 'a message was too big (1009)',
  1011: 'the server hit an unexpected condition (1011)',
  1012: 'the server is restarting (1012)',
  1013: 'the server is overloaded: try again later (1013)',
};

/**
 * How a connection's end reads as an error: the contract code decides when the server named one
 * (the error frame before the close, else a close reason that is a code); otherwise the close code
 * does. A retryable close code is `UNAVAILABLE`; a policy or protocol violation is
 * `INVALID_ARGUMENT`; any other code (a normal close the client did not ask for, 1005, 4xxx) is
 * `UNAVAILABLE` but not retried, as a server-initiated close is final unless it says otherwise.
 */
export function closedError(closeCode: number, reason: string, frameError: OrbitError | null): ConnectionClosedError {
  if (frameError) return new ConnectionClosedError(frameError.code, frameError.message, closeCode, reason);
  if (isErrorCode(reason)) return new ConnectionClosedError(reason, `the server closed the connection: ${reason}`, closeCode, reason);
  const what = `${CLOSE_MEANINGS[closeCode] ?? `the connection closed (${closeCode})`}${reason ? `: ${reason}` : ''}`;
  if (RETRYABLE_CLOSE_CODES.has(closeCode)) return new ConnectionClosedError('UNAVAILABLE', what, closeCode, reason);
  if (VIOLATION_CLOSE_CODES.has(closeCode)) return new ConnectionClosedError('INVALID_ARGUMENT', what, closeCode, reason);
  return new ConnectionClosedError('UNAVAILABLE', what, closeCode, reason, { retryable: false });
}

/**
 * Codes after which an automatic consumer stops instead of reconnecting: reconnecting cannot fix
 * them (spec/rules.md#s7-11 to #s7-17: the server sends the error and closes).
 */
export const FATAL_CONSUMER_CODES: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'EVENT_HISTORY_EXPIRED',
  'PERMISSION_DENIED',
  'NOT_FOUND',
  'UNAUTHENTICATED',
]);

/**
 * Whether the automatic consumer reconnects after its connection ended with `error`: a closed
 * connection by its `retryable` (the contract code, else the close code); a transport failure
 * (network, timeout, a server frame that broke the contract) unless its code is fatal.
 */
export function reconnectsAfter(error: OrbitError): boolean {
  if (error instanceof ConnectionClosedError) return error.retryable;
  return !FATAL_CONSUMER_CODES.has(error.code);
}

/**
 * What a failed request or connection says about why, for a message: the innermost cause with
 * something to say. Node's `fetch` rejects with a bare `fetch failed` and keeps the reason (`connect
 * ECONNREFUSED 127.0.0.1:8080`, `getaddrinfo ENOTFOUND host`) in `cause`; an `AggregateError` (one
 * failure per address tried) has an empty message and its failures in `errors`.
 */
export function causeText(error: unknown): string {
  for (let current = error, depth = 0; depth < 8; depth++) {
    if (!(current instanceof Error)) return current === undefined ? 'unknown error' : String(current);
    const inner = (current as { cause?: unknown }).cause;
    if (inner instanceof Error) {
      current = inner;
      continue;
    }
    if (current instanceof AggregateError && current.errors.length > 0) {
      const each = [...new Set(current.errors.map((e: unknown) => causeText(e)))];
      return current.message ? `${current.message} (${each.join('; ')})` : each.join('; ');
    }
    return current.message || current.name;
  }
  return 'unknown error';
}

/** Builds the `OrbitError` of an error object received from the server. */
export function serverError(
  error: { code: string; message: string },
  options: { status?: number | null; requestId?: string; retryAfterMs?: number } = {},
): OrbitError {
  const code: ErrorCode = isErrorCode(error.code) ? error.code : 'UNAVAILABLE';
  return new OrbitError(code, error.message, {
    status: options.status === undefined ? null : options.status,
    ...(options.requestId !== undefined ? { requestId: options.requestId } : {}),
    // A wait is advice for a retry: an answer that cannot be retried keeps none.
    ...(options.retryAfterMs !== undefined && ERROR_TABLE[code].retryable ? { retryAfterMs: options.retryAfterMs } : {}),
  });
}

/** A local argument check failed before anything was sent: code `INVALID_ARGUMENT`, no status, no request id. */
export function invalidArgument(message: string): OrbitError {
  return new OrbitError('INVALID_ARGUMENT', message, { status: null });
}

/** Whether the contract says the same request may be retried later. */
export function isRetryable(error: unknown): boolean {
  if (error instanceof OrbitError) return error.retryable;
  return false;
}

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
 *   server gave for closing (for example `EVENT_HISTORY_EXPIRED`) or `UNAVAILABLE`.
 */
import { OrbitError, isErrorCode, type ErrorCode } from '@orbit/spec/errors';

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
    options: { status?: number | null; requestId?: string; cause?: unknown; retryable?: boolean } = {},
  ) {
    super('UNAVAILABLE', message, {
      status: options.status ?? null,
      ...(options.requestId !== undefined ? { requestId: options.requestId } : {}),
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
 * before closing, or the close reason, which the server sets to the code), otherwise
 * `UNAVAILABLE` (network drop, server shutdown 1001, idle timeout, ...).
 */
export class ConnectionClosedError extends OrbitError {
  /** The WebSocket close code (1006 when the connection was cut without a close frame). */
  readonly closeCode: number;
  readonly closeReason: string;

  constructor(code: ErrorCode, message: string, closeCode: number, closeReason: string, cause?: unknown) {
    super(code, message, { status: null, ...(cause !== undefined ? { cause } : {}) });
    this.closeCode = closeCode;
    this.closeReason = closeReason;
  }
}

/**
 * Codes after which an automatic consumer stops instead of reconnecting: reconnecting cannot fix
 * them (seed §7: the server sends the error and closes).
 */
export const FATAL_CONSUMER_CODES: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'EVENT_HISTORY_EXPIRED',
  'PERMISSION_DENIED',
  'NOT_FOUND',
  'UNAUTHENTICATED',
]);

/** Builds the `OrbitError` of an error object received from the server. */
export function serverError(
  error: { code: string; message: string },
  options: { status?: number | null; requestId?: string } = {},
): OrbitError {
  const code: ErrorCode = isErrorCode(error.code) ? error.code : 'UNAVAILABLE';
  return new OrbitError(code, error.message, {
    status: options.status === undefined ? null : options.status,
    ...(options.requestId !== undefined ? { requestId: options.requestId } : {}),
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

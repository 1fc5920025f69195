/**
 * @module
 * The one error type of the contract. Every package (server, SDK, conformance) speaks these codes;
 * the table below is the only place that maps a code to its HTTP status and WebSocket reaction
 * (seed §7).
 */

export const ERROR_CODES = [
  'INVALID_ARGUMENT',
  'UNAUTHENTICATED',
  'PERMISSION_DENIED',
  'NOT_FOUND',
  'STATE_CONFLICT',
  'IDEMPOTENCY_CONFLICT',
  'SUBSCRIPTION_LIMIT',
  'EVENT_HISTORY_EXPIRED',
  'DELIVERY_LEASE_LOST',
  'PROTOCOL_REQUIRED',
  'CAPACITY_EXCEEDED',
  'UNAVAILABLE',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

/** What a WebSocket session does after sending an error frame with this code. */
export type SocketReaction = 'keep-open' | 'close' | 'not-applicable';

interface ErrorRule {
  /** HTTP status; `null` where the code never travels over plain HTTP. */
  readonly status: number | null;
  readonly socket: SocketReaction;
  /** Whether a client may retry the same request (with the same Idempotency-Key) later. */
  readonly retryable: boolean;
}

export const ERROR_TABLE: Readonly<Record<ErrorCode, ErrorRule>> = {
  INVALID_ARGUMENT: { status: 400, socket: 'keep-open', retryable: false },
  UNAUTHENTICATED: { status: 401, socket: 'close', retryable: false },
  PERMISSION_DENIED: { status: 403, socket: 'close', retryable: false },
  NOT_FOUND: { status: 404, socket: 'close', retryable: false },
  STATE_CONFLICT: { status: 409, socket: 'keep-open', retryable: false },
  IDEMPOTENCY_CONFLICT: { status: 409, socket: 'not-applicable', retryable: false },
  SUBSCRIPTION_LIMIT: { status: 409, socket: 'not-applicable', retryable: false },
  EVENT_HISTORY_EXPIRED: { status: 410, socket: 'close', retryable: false },
  DELIVERY_LEASE_LOST: { status: null, socket: 'keep-open', retryable: false },
  PROTOCOL_REQUIRED: { status: 426, socket: 'not-applicable', retryable: false },
  CAPACITY_EXCEEDED: { status: 429, socket: 'not-applicable', retryable: true },
  UNAVAILABLE: { status: 503, socket: 'close', retryable: true },
};

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && (ERROR_CODES as readonly string[]).includes(value);
}

/** An error with one of the contract's codes. Servers raise it; clients receive it. */
export class OrbitError extends Error {
  override readonly name = 'OrbitError';
  readonly code: ErrorCode;
  /** HTTP status when the error came from (or goes to) an HTTP response. */
  readonly status: number | null;
  /** The server's request_id, when known. */
  readonly requestId: string | undefined;

  constructor(code: ErrorCode, message: string, options: { status?: number | null; requestId?: string; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.status = options.status === undefined ? ERROR_TABLE[code].status : options.status;
    this.requestId = options.requestId;
  }

  get retryable(): boolean {
    return ERROR_TABLE[this.code].retryable;
  }
}

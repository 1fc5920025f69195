/**
 * @module
 * The one error type of the contract. Every package (server, SDK, conformance) speaks these codes;
 * the table below is the only place that maps a code to its HTTP status and WebSocket reaction
 * (spec/rules.md#s7-10 to #s7-21).
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

/**
 * The WebSocket close codes an `orbit.events.v1` server uses (RFC 6455 §7.4). `retryable` says
 * whether a client should reconnect (with backoff) after seeing it; spec/README.md "Close codes"
 * says when each is used.
 */
export const CLOSE_CODES = {
  /** The client closed, or the server answered the client's close. */
  normal: { code: 1000, retryable: false },
  /** The server is shutting down: reconnect, to another node if there is one. */
  goingAway: { code: 1001, retryable: true },
  /** The peer broke the protocol, or lost the right to this session (see the error frame). */
  policy: { code: 1008, retryable: false },
  /** A frame over 512 KiB. */
  tooBig: { code: 1009, retryable: false },
  /** The server met an unexpected condition. */
  internalError: { code: 1011, retryable: true },
  /** A temporary failure (UNAVAILABLE): reconnect later; deliveries and proofs stay valid. */
  tryAgainLater: { code: 1013, retryable: true },
} as const;

/** Close codes after which a client reconnects: the table's, plus 1006 (cut without a close) and 1012 (restart). */
export const RETRYABLE_CLOSE_CODES: ReadonlySet<number> = new Set([
  ...Object.values(CLOSE_CODES)
    .filter((c) => c.retryable)
    .map((c) => c.code),
  1006,
  1012,
]);

interface ErrorRule {
  /** HTTP status; `null` where the code never travels over plain HTTP. */
  readonly status: number | null;
  readonly socket: SocketReaction;
  /** The close code that follows the error frame when `socket` is `close`. */
  readonly closeCode?: number;
  /** Whether a client may retry the same request (with the same Idempotency-Key) later. */
  readonly retryable: boolean;
}

export const ERROR_TABLE: Readonly<Record<ErrorCode, ErrorRule>> = {
  INVALID_ARGUMENT: { status: 400, socket: 'keep-open', retryable: false },
  UNAUTHENTICATED: { status: 401, socket: 'close', closeCode: CLOSE_CODES.policy.code, retryable: false },
  PERMISSION_DENIED: { status: 403, socket: 'close', closeCode: CLOSE_CODES.policy.code, retryable: false },
  NOT_FOUND: { status: 404, socket: 'close', closeCode: CLOSE_CODES.policy.code, retryable: false },
  STATE_CONFLICT: { status: 409, socket: 'keep-open', retryable: false },
  IDEMPOTENCY_CONFLICT: { status: 409, socket: 'not-applicable', retryable: false },
  SUBSCRIPTION_LIMIT: { status: 409, socket: 'not-applicable', retryable: false },
  EVENT_HISTORY_EXPIRED: { status: 410, socket: 'close', closeCode: CLOSE_CODES.policy.code, retryable: false },
  DELIVERY_LEASE_LOST: { status: null, socket: 'keep-open', retryable: false },
  PROTOCOL_REQUIRED: { status: 426, socket: 'not-applicable', retryable: false },
  CAPACITY_EXCEEDED: { status: 429, socket: 'not-applicable', retryable: true },
  UNAVAILABLE: { status: 503, socket: 'close', closeCode: CLOSE_CODES.tryAgainLater.code, retryable: true },
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
  /**
   * How long the server asked the caller to wait before trying again (its `Retry-After`, in ms),
   * when a retryable answer carried one: 429 `CAPACITY_EXCEEDED`, 503 `UNAVAILABLE`.
   */
  readonly retryAfterMs: number | undefined;

  constructor(
    code: ErrorCode,
    message: string,
    options: { status?: number | null; requestId?: string; retryAfterMs?: number; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.status = options.status === undefined ? ERROR_TABLE[code].status : options.status;
    this.requestId = options.requestId;
    this.retryAfterMs = options.retryAfterMs;
  }

  get retryable(): boolean {
    return ERROR_TABLE[this.code].retryable;
  }
}

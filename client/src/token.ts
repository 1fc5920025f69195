/**
 * @module
 * Where the bearer token comes from: a fixed string, or a provider function the SDK asks again for
 * every HTTP attempt and every WebSocket connection, so that a rotated credential (spec/README.md,
 * "Authentication is at most 1 s stale" and "Authorization while connected"; docs/operations.md,
 * Credentials) is picked up without building a new client (docs/sdk.md, Token provider).
 */
import { OrbitError } from '@orbit/spec/errors';
import { invalidArgument } from './errors.ts';

/** Returns the current bearer token; may be async (a secret store, a file that an operator updates). */
export type TokenProvider = () => string | Promise<string>;

/** A fixed bearer token, or a provider asked for each HTTP attempt and each event connection. */
export type TokenSource = string | TokenProvider;

/**
 * Visible ASCII only: what an `Authorization` header carries unchanged (RFC 6750's b64token is a
 * subset; an Orbit token is `orbit_` and base64url). It also keeps a token out of the messages of
 * header-validation errors, which quote the offending value.
 */
const TOKEN = /^[\x21-\x7E]+$/;

/** Checks a token source at construction: a valid string, or a function. */
export function checkTokenSource(source: unknown): TokenSource {
  if (typeof source === 'function') return source as TokenProvider;
  if (typeof source !== 'string' || !TOKEN.test(source))
    throw invalidArgument('token must be a non-empty string of visible ASCII characters, or a function that returns one');
  return source;
}

/**
 * The token to send now. A provider that throws (or rejects) is `UNAVAILABLE`, retryable: nothing
 * was sent, and a secret store that is briefly down should delay the call, not end a consumer. A
 * provider that returns something that is not a token is `INVALID_ARGUMENT`: a configuration error
 * that asking again will not fix. `operation` names the call in the message; the token never
 * appears in it. `signal` (the caller's abort or the attempt's time limit) stops the wait.
 */
export async function currentToken(source: TokenSource, operation: string, signal?: AbortSignal): Promise<string> {
  if (typeof source === 'string') return source;
  let value: unknown;
  try {
    value = await untilAborted(Promise.resolve().then(source), signal);
  } catch (cause) {
    if (signal?.aborted) throw signal.reason;
    throw new OrbitError('UNAVAILABLE', `${operation}: the token provider failed: ${(cause as Error)?.message ?? String(cause)}`, {
      status: null,
      cause,
    });
  }
  if (typeof value !== 'string' || !TOKEN.test(value))
    throw invalidArgument(
      `${operation}: the token provider returned ${typeof value === 'string' ? 'a string that is not a token (empty, or not visible ASCII)' : `a ${typeof value}, not a string`}`,
    );
  return value;
}

/** `promise`, or the signal's reason as soon as it aborts. */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

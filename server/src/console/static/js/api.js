// The management API client of the console: bearer token from sessionStorage, the envelope
// `{request_id, data}` / `{request_id, error}`, and errors that keep code, message and request_id.

const TOKEN_KEY = 'orbit.console.token';

/**
 * The API's root: two levels above this file (`<base>/console/js/api.js`), so the console works
 * when Orbit is mounted under a path prefix. Request paths (`/v1/...`) are resolved against it.
 */
const API_ROOT = new URL('../../', import.meta.url);

/** `/v1/subscriptions` -> `<base>/v1/subscriptions` on this origin. */
export function apiUrl(path) {
  return new URL(path.replace(/^\//, ''), API_ROOT).href;
}
const TOKEN_PATTERN = /^[\x21-\x7e]+$/;

export function getToken() {
  return sessionStorage.getItem(TOKEN_KEY);
}

/** Keeps the token for this tab only (sessionStorage): never in a URL, a cookie or a log. */
export function setToken(token) {
  if (!TOKEN_PATTERN.test(token)) throw new Error('A token is visible ASCII characters without spaces.');
  sessionStorage.setItem(TOKEN_KEY, token);
}

export function clearToken() {
  sessionStorage.removeItem(TOKEN_KEY);
}

export class ApiError extends Error {
  constructor({ status, code, message, requestId, retryable }) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
    this.requestId = requestId;
    /** No definitive answer: the same request (with the same Idempotency-Key) may be sent again. */
    this.retryable = retryable;
  }
}

function parseEnvelope(text) {
  try {
    const value = JSON.parse(text);
    return value !== null && typeof value === 'object' ? value : null;
  } catch {
    return null;
  }
}

/**
 * One API request. Resolves with `{status, data, text, requestId}` for a 2xx envelope; `text` is
 * the body exactly as received, for values that must not go through `JSON.parse` (see json-raw.js).
 * Rejects with ApiError otherwise.
 */
export async function apiRequest(method, path, { body, key, signal } = {}) {
  const token = getToken();
  if (!token)
    throw new ApiError({ status: 0, code: 'UNAUTHENTICATED', message: 'No token entered yet.', requestId: null, retryable: false });
  const headers = { authorization: `Bearer ${token}`, accept: 'application/json' };
  if (key !== undefined) headers['idempotency-key'] = key;
  if (body !== undefined) headers['content-type'] = 'application/json';
  let response;
  try {
    response = await fetch(apiUrl(path), {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      cache: 'no-store',
      credentials: 'omit',
      redirect: 'error',
      referrerPolicy: 'no-referrer',
      signal,
    });
  } catch (error) {
    if (error?.name === 'AbortError') throw error;
    throw new ApiError({
      status: 0,
      code: 'NETWORK_ERROR',
      message: 'No answer from the server (the connection failed or was cut).',
      requestId: null,
      retryable: true,
    });
  }
  let text;
  try {
    text = await response.text();
  } catch (error) {
    if (error?.name === 'AbortError') throw error;
    throw new ApiError({
      status: response.status,
      code: 'NETWORK_ERROR',
      message: 'The answer was cut off before it was complete.',
      requestId: response.headers.get('x-request-id'),
      retryable: true,
    });
  }
  const envelope = parseEnvelope(text);
  const requestId = envelope?.request_id ?? response.headers.get('x-request-id');
  if (response.ok && envelope && 'data' in envelope) return { status: response.status, data: envelope.data, text, requestId };
  if (envelope?.error && typeof envelope.error.code === 'string') {
    throw new ApiError({
      status: response.status,
      code: envelope.error.code,
      message: String(envelope.error.message ?? ''),
      requestId,
      retryable: response.status >= 500,
    });
  }
  throw new ApiError({
    status: response.status,
    code: `HTTP_${response.status}`,
    message: 'The answer is not an API envelope.',
    requestId,
    retryable: response.status >= 500 || response.ok,
  });
}

/** `path?name=value&…` with only the parameters that are set. */
export function withQuery(path, params) {
  const query = Object.entries(params)
    .filter(([, value]) => value !== undefined && value !== null && value !== '')
    .map(([name, value]) => `${encodeURIComponent(name)}=${encodeURIComponent(String(value))}`);
  return query.length > 0 ? `${path}?${query.join('&')}` : path;
}

/** Path segment for an id typed by a person: only 32 lower-case hex characters pass. */
export function idSegment(value) {
  if (!/^[0-9a-f]{32}$/.test(value))
    throw new ApiError({
      status: 0,
      code: 'INVALID_ARGUMENT',
      message: `"${value}" is not an id (32 lower-case hexadecimal characters).`,
      requestId: null,
      retryable: false,
    });
  return value;
}

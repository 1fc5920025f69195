/**
 * @module
 * The envelope (spec/rules.md#s1-18): every HTTP answer, and every refusal of a WebSocket upgrade,
 * is `{request_id, data}` or `{request_id, error}`, carries `X-Request-ID` and
 * `Cache-Control: no-store`, and is written with the strict codec's serializer so stored raw JSON
 * goes out byte for byte. An error's HTTP status comes from the one error table (`@orbit/spec/errors`).
 */
import { stringify } from '@orbit/spec/codec';
import { ERROR_TABLE, OrbitError } from '@orbit/spec/errors';

export function envelopeHeaders(requestId: string, extra: Record<string, string> = {}): Record<string, string> {
  return { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', 'x-request-id': requestId, ...extra };
}

export function dataResponse(requestId: string, status: number, data: unknown): Response {
  return new Response(stringify({ request_id: requestId, data }), { status, headers: envelopeHeaders(requestId) });
}

export function errorBody(requestId: string, error: OrbitError): string {
  return stringify({ request_id: requestId, error: { code: error.code, message: error.message } });
}

/** Extra headers a refusal carries: `Retry-After` where waiting helps. */
export function errorHeaders(error: OrbitError): Record<string, string> {
  return error.code === 'CAPACITY_EXCEEDED' || error.code === 'UNAVAILABLE' ? { 'retry-after': '1' } : {};
}

export function errorResponse(requestId: string, error: OrbitError): Response {
  const status = error.status ?? ERROR_TABLE[error.code].status ?? 400;
  return new Response(errorBody(requestId, error), { status, headers: envelopeHeaders(requestId, errorHeaders(error)) });
}

/** Maps anything thrown to a contract error: unknown failures are UNAVAILABLE, never a stack trace. */
export function toOrbitError(error: unknown): OrbitError {
  if (error instanceof OrbitError) return error;
  return new OrbitError('UNAVAILABLE', 'the service is temporarily unavailable; retry with the same Idempotency-Key', { cause: error });
}

/**
 * @module
 * The management API as the tests call it: every response is parsed with the strict codec, checked
 * against the generated validators (errors always as ErrorEnvelope), and must carry
 * `Cache-Control: no-store` and an `X-Request-ID` equal to its `request_id`.
 */
import * as validators from '@orbit/generated';
import { parseStrict } from '@orbit/spec/codec';

export interface ApiResponse {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  readonly json: any;
}

type ValidatorName = keyof typeof validators & `validate${string}`;

/** `expect` names the validator that checks `data` of a successful response. */
export async function api(
  base: string,
  method: string,
  path: string,
  options: {
    token?: string;
    body?: unknown;
    rawBody?: string;
    key?: string;
    headers?: Record<string, string>;
    expect?: ValidatorName;
  } = {},
): Promise<ApiResponse> {
  const headers: Record<string, string> = { ...(options.headers ?? {}) };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (options.key) headers['idempotency-key'] = options.key;
  const body = options.rawBody ?? (options.body === undefined ? undefined : JSON.stringify(options.body));
  if (body !== undefined && !headers['content-type']) headers['content-type'] = 'application/json';
  const response = await fetch(base + path, { method, headers, ...(body !== undefined ? { body } : {}) });
  const text = await response.text();
  const json = text ? parseStrict(text) : undefined;
  const envelope = json as { request_id?: string; data?: unknown; error?: unknown };
  if (response.status >= 400) {
    if (!validators.validateErrorEnvelope(json)) throw new Error(`error response does not match ErrorEnvelope: ${text}`);
  } else if (options.expect) {
    // biome-ignore lint/performance/noDynamicNamespaceImportAccess: a test names its validator; nothing here is bundled
    const validate = validators[options.expect] as (d: unknown) => boolean;
    if (!validate(envelope.data))
      throw new Error(`${method} ${path}: data does not match ${options.expect}: ${text} ${JSON.stringify((validate as any).errors)}`);
  }
  if (response.headers.get('cache-control') !== 'no-store') throw new Error(`${method} ${path}: missing Cache-Control: no-store`);
  if (response.headers.get('x-request-id') !== envelope.request_id)
    throw new Error(`${method} ${path}: X-Request-ID does not match request_id`);
  return { status: response.status, headers: response.headers, text, json };
}

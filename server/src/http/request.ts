/**
 * @module
 * Strict request reading (spec/rules.md#s1-1, #s1-19 to #s1-22): query strings with only known,
 * non-repeated parameters; JSON bodies up to 512 KiB, valid UTF-8, without duplicate keys, checked
 * by the generated validator and the codec's uint64 rule; an `Idempotency-Key` on every write.
 */
import { isCanonicalUint64, parseStrict, StrictJsonError } from '@orbit/spec/codec';
import { OrbitError } from '@orbit/spec/errors';
import { MAX_BODY_BYTES } from '@orbit/spec/protocol';
import { PATTERNS, RAW_JSON_PATHS, UINT64_MEMBERS, type Validator } from '@orbit/generated';
import { contentDigest, withoutMembers } from './digest.ts';

/** How much of an oversized body is read and dropped before the connection is cut. */
const DRAIN_BYTES = 8 * 1024 * 1024;

function invalid(message: string): OrbitError {
  return new OrbitError('INVALID_ARGUMENT', message);
}

/** Parses a raw query string, refusing unknown and repeated parameters. */
export function parseQuery(rawUrl: string, allowed: readonly string[]): Record<string, string> {
  const at = rawUrl.indexOf('?');
  const query = at < 0 ? '' : rawUrl.slice(at + 1);
  const params: Record<string, string> = {};
  if (query === '') return params;
  for (const part of query.split('&')) {
    const eq = part.indexOf('=');
    let name: string;
    let value: string;
    try {
      name = decodeURIComponent((eq < 0 ? part : part.slice(0, eq)).replace(/\+/g, ' '));
      value = eq < 0 ? '' : decodeURIComponent(part.slice(eq + 1).replace(/\+/g, ' '));
    } catch {
      throw invalid('the query string is not valid percent-encoding');
    }
    if (!allowed.includes(name)) {
      throw invalid(allowed.length === 0 ? 'this operation takes no query parameters' : `unknown query parameter "${name}"`);
    }
    if (Object.hasOwn(params, name)) throw invalid(`query parameter "${name}" is repeated`);
    params[name] = value;
  }
  return params;
}

/** Refuses any query string: every operation except the lists takes none. */
export function noQuery(rawUrl: string): void {
  if (new URL(rawUrl).search !== '') throw invalid('this operation takes no query parameters');
}

/** A `limit` parameter: a canonical decimal integer in 1–100, default 20. */
export function parseLimit(value: string | undefined): number {
  if (value === undefined) return 20;
  if (!/^[1-9][0-9]{0,2}$/.test(value) || Number(value) > 100) throw invalid('limit must be an integer from 1 to 100');
  return Number(value);
}

export function parseCursor(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (value === '' || value.length > 512) throw invalid('cursor is invalid');
  return value;
}

/** Splits `{id}` or `{id}:{action}`; a malformed id names no resource. */
export function parseTarget(target: string, actions: readonly string[]): { id: string; action: string | null } {
  const colon = target.indexOf(':');
  const id = colon < 0 ? target : target.slice(0, colon);
  const action = colon < 0 ? null : target.slice(colon + 1);
  if (!PATTERNS.id.test(id) || (action !== null && !actions.includes(action))) throw new OrbitError('NOT_FOUND', 'no such resource');
  return { id, action };
}

export function idempotencyKey(header: string | undefined): string {
  if (header === undefined) throw invalid('the Idempotency-Key header is required on this request');
  if (!PATTERNS.idempotencyKey.test(header)) throw invalid('the Idempotency-Key must be 1–255 visible ASCII characters');
  return header;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

export interface ParsedBody<T> {
  readonly value: T;
  /**
   * SHA-256 of the canonical form of the body without the members it was told are not content:
   * the idempotency content identity. Computed once, when first read: a batch, whose items each
   * have their own, never reads it.
   */
  readonly digest: string;
}

/**
 * Reads, parses and validates a JSON body with the request schema's generated validator. The
 * members the contract keeps as exact JSON text (`RAW_JSON_PATHS` of `schema`) stay `RawJson`;
 * every uint64 member must be in range (what the schema cannot say). `notContent` names the
 * top-level members that the digest leaves out (a publish's `trace_context`: spec/README.md, Trace
 * context), so that a route needs no second digest without them.
 */
export async function readJsonBody<T>(
  request: Request,
  validator: Validator<T>,
  schema?: keyof typeof RAW_JSON_PATHS,
  notContent: readonly string[] = [],
): Promise<ParsedBody<T>> {
  const type = request.headers.get('content-type') ?? '';
  if (!/^application\/json\s*(;\s*charset=utf-8\s*)?$/i.test(type.trim())) throw invalid('Content-Type must be application/json');
  const length = request.headers.get('content-length');
  if (length !== null && Number(length) > MAX_BODY_BYTES) throw invalid(`the body exceeds ${MAX_BODY_BYTES} bytes`);
  // With a length the HTTP parser holds the body to it, so it is read whole in one call (the Node
  // adapter's fast path, without a web stream); a chunked body is read under the limit.
  const bytes = length !== null ? new Uint8Array(await request.arrayBuffer()) : await readLimited(request, MAX_BODY_BYTES);
  // A Request built in process (an embedding host's `app.fetch`) may carry any length header.
  if (bytes.byteLength > MAX_BODY_BYTES) throw invalid(`the body exceeds ${MAX_BODY_BYTES} bytes`);
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    throw invalid('the body is not valid UTF-8');
  }
  let value: unknown;
  try {
    value = parseStrict(text, schema ? { raw: RAW_JSON_PATHS[schema] } : undefined);
  } catch (error) {
    if (error instanceof StrictJsonError) throw invalid(`the body is not strict JSON: ${error.message}`);
    throw error;
  }
  if (!validator(value)) throw invalid(describe(validator.errors));
  for (const [field, v] of Object.entries(value as Record<string, unknown>)) {
    if (UINT64_MEMBERS.has(field) && typeof v === 'string' && !isCanonicalUint64(v)) {
      throw invalid(`${field} must be a canonical uint64 decimal string`);
    }
  }
  let digest: string | undefined;
  return {
    value,
    get digest() {
      digest ??= contentDigest(withoutMembers(value, notContent));
      return digest;
    },
  };
}

/**
 * Reads the body, keeping at most `limit` bytes (a chunked body has no length to check first).
 * Past the limit the rest is read and dropped, up to a bound, so the client gets its 400 instead
 * of a reset connection; a body beyond that bound is cut off.
 */
async function readLimited(request: Request, limit: number): Promise<Uint8Array> {
  if (!request.body) return new Uint8Array(0);
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = request.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size <= limit) chunks.push(value);
    else if (size > DRAIN_BYTES) {
      await reader.cancel().catch(() => undefined);
      break;
    }
  }
  if (size > limit) throw invalid(`the body exceeds ${limit} bytes`);
  return Buffer.concat(chunks);
}

function describe(errors: Validator<unknown>['errors']): string {
  const first = errors?.[0];
  if (!first) return 'the body does not match the schema';
  const where = first.instancePath === '' ? 'body' : first.instancePath;
  const params = first.params as { additionalProperty?: string; unevaluatedProperty?: string } | undefined;
  const extra = params?.additionalProperty ?? params?.unevaluatedProperty;
  return `${where} ${first.message ?? 'is invalid'}${extra ? `: "${extra}"` : ''}`;
}

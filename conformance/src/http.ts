/**
 * @module
 * A raw HTTP client: the request target is sent exactly as given (so repeated or oddly encoded
 * query parameters reach the server untouched), the body is bytes, and the response is kept as
 * bytes and text; JSON is parsed afterwards with the strict codec. Every exchange is recorded as
 * evidence.
 */
import { request as httpRequest, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { parseStrict } from '@orbit/spec/codec';
import { NetworkError } from './errors.ts';
import type { EvidenceLog } from './evidence.ts';
import { memberAt } from './members.ts';

export interface HttpRequest {
  readonly method: string;
  /** Path and query, sent verbatim (e.g. `/v1/subscriptions?queue_id=a&queue_id=a`). */
  readonly target: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string | Uint8Array;
  readonly timeoutMs?: number;
  /**
   * Send the head alone, and the body only if no answer has come within this many milliseconds.
   * A server may refuse a request from its head (a Content-Length over the limit) and close the
   * connection without reading the body. A body still being written then fails with EPIPE or
   * ECONNRESET, and Node drops the answer already waiting in the socket: it destroys a socket on
   * its first write error, before reading what arrived. Given this, such an answer is read and
   * judged and the body is never sent; a server that waits for the body gets it after the wait.
   */
  readonly answerBeforeBodyMs?: number;
}

export class HttpResponse {
  readonly text: string;
  private parsed: { value: unknown } | { error: string } | undefined;

  constructor(
    readonly status: number,
    readonly headers: IncomingHttpHeaders,
    readonly bytes: Buffer,
  ) {
    this.text = bytes.toString('utf8');
  }

  /** A response header (lower-case name); repeated headers are joined with ", ". */
  header(name: string): string | undefined {
    const value = this.headers[name.toLowerCase()];
    return Array.isArray(value) ? value.join(', ') : value;
  }

  /** The body parsed as strict JSON, or undefined when it is not. */
  get json(): unknown {
    const parsed = this.parse();
    return 'value' in parsed ? parsed.value : undefined;
  }

  /** Why the body is not strict JSON, or undefined when it is. */
  get jsonError(): string | undefined {
    const parsed = this.parse();
    return 'error' in parsed ? parsed.error : undefined;
  }

  private parse(): { value: unknown } | { error: string } {
    if (!this.parsed) {
      try {
        this.parsed = { value: parseStrict(this.text) };
      } catch (error) {
        this.parsed = { error: (error as Error).message };
      }
    }
    return this.parsed;
  }

  /** The `error.code` of an error envelope, if the body is one. */
  get errorCode(): string | undefined {
    const code = memberAt(this.json, 'error', 'code');
    return typeof code === 'string' ? code : undefined;
  }

  /** Parses again keeping the values at `paths` as exact JSON text (`RawJson`). */
  parseRaw(paths: ReadonlyArray<ReadonlyArray<string>>): unknown {
    return parseStrict(this.text, { raw: paths });
  }
}

/** The path prefix of a base URL (`http://h:1/orbit` -> `/orbit`), `''` for none. */
export function basePath(baseUrl: string): string {
  return new URL(baseUrl).pathname.replace(/\/+$/, '');
}

/** Sends one request and reads the whole response. Rejects with a `NetworkError` on network errors and on timeout. */
export function sendHttp(baseUrl: string, req: HttpRequest, log?: EvidenceLog): Promise<HttpResponse> {
  const url = new URL(baseUrl);
  const body = req.body === undefined ? undefined : typeof req.body === 'string' ? Buffer.from(req.body, 'utf8') : Buffer.from(req.body);
  const headers: Record<string, string> = { ...(req.headers ?? {}) };
  const lower = Object.keys(headers).map((h) => h.toLowerCase());
  if (body !== undefined && !lower.includes('content-length') && !lower.includes('transfer-encoding'))
    headers['content-length'] = String(body.byteLength);
  const started = Date.now();
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise<HttpResponse>((resolve, reject) => {
    let settled = false;
    let answer: IncomingMessage | undefined;
    const chunks: Buffer[] = [];
    /** Whether the body is still held back, waiting for an answer to the head (`answerBeforeBodyMs`). */
    let holding = false;
    const record = (fields: { status?: number; responseHeaders?: Record<string, string>; responseBody?: string; error?: string }) =>
      log?.add({
        kind: 'http',
        method: req.method,
        target: req.target,
        requestHeaders: log.cleanHeaders(headers),
        ...(body !== undefined ? { requestBody: log.clean(body.toString('utf8')) } : {}),
        ...fields,
        durationMs: Date.now() - started,
      });
    const finish = (res: IncomingMessage) => {
      if (settled) return;
      settled = true;
      const response = new HttpResponse(res.statusCode ?? 0, res.headers, Buffer.concat(chunks));
      if (holding) {
        log?.add({ kind: 'note', text: `the server answered the head; the ${body!.byteLength}-byte body was not sent` });
        clientRequest.destroy();
      }
      record({
        status: response.status,
        responseHeaders: log ? log.cleanHeaders(res.headers) : {},
        responseBody: log ? log.clean(response.text) : '',
      });
      resolve(response);
    };
    const fail = (error: Error) => {
      // An answer that arrived whole is judged: a write error after it is not the server's failure.
      if (answer?.complete) return finish(answer);
      if (settled) return;
      settled = true;
      record({ error: String(error.message) });
      reject(new NetworkError(`${req.method} ${req.target}`, error));
    };
    const clientRequest = send(
      {
        protocol: url.protocol,
        hostname: url.hostname,
        port: url.port,
        method: req.method,
        path: basePath(baseUrl) + req.target,
        headers,
        agent: false,
      },
      (res) => {
        answer = res;
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', fail);
        res.on('end', () => finish(res));
      },
    );
    clientRequest.setTimeout(req.timeoutMs ?? 15_000, () =>
      clientRequest.destroy(new Error(`no response within ${req.timeoutMs ?? 15_000} ms`)),
    );
    clientRequest.on('error', fail);
    if (body !== undefined && req.answerBeforeBodyMs !== undefined) {
      holding = true;
      clientRequest.flushHeaders();
      const timer = setTimeout(() => {
        holding = false;
        clientRequest.end(body);
      }, req.answerBeforeBodyMs);
      clientRequest.once('response', () => clearTimeout(timer));
      clientRequest.once('close', () => clearTimeout(timer));
    } else clientRequest.end(body);
  });
}

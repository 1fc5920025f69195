/**
 * @module
 * `GET /v1/openapi.json`: the server's own OpenAPI document, rendered from the `openapi.yaml` that
 * `@orbit/spec` ships, so what is served is the contract this build implements. Like `/healthz` it
 * needs no credential. The body is the document, not an envelope; `servers` names the path the
 * API is mounted under, relative to the document's origin.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Hono } from 'hono';
import { parse } from 'yaml';
import { envelopeHeaders } from '../wire/envelope.ts';
import { noQuery } from './request.ts';

export const OPENAPI_PATH = '/v1/openapi.json';

/** The document as JSON text, with `servers` set to the mount path. */
export function openApiDocument(basePath: string): string {
  const file = createRequire(import.meta.url).resolve('@orbit/spec/openapi.yaml');
  const document = parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  document.servers = [{ url: basePath === '' ? '/' : basePath, description: 'This server.' }];
  return JSON.stringify(document);
}

export function openApiRoute(app: Hono<{ Variables: { requestId: string } }>, basePath: string): void {
  let body: string | undefined;
  app.get(OPENAPI_PATH, (c) => {
    noQuery(c.req.url);
    body ??= openApiDocument(basePath);
    return new Response(body, {
      status: 200,
      headers: envelopeHeaders(c.get('requestId')),
    });
  });
}

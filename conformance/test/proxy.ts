/**
 * A tiny mutating proxy for testing the suite itself: it forwards HTTP requests and WebSocket
 * connections to a real server and lets a test rewrite requests, responses and frames on the way,
 * producing a deliberately broken "implementation" that the suite must catch.
 */
import { randomBytes } from 'node:crypto';
import { createServer, request, type IncomingHttpHeaders, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import WebSocket, { WebSocketServer } from 'ws';

export interface ProxiedRequest {
  method: string;
  target: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

export interface ProxiedResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** Each hook may change its argument in place. Frame hooks return the text to forward, or null to drop it. */
export interface Mutations {
  request?(req: ProxiedRequest): void;
  /** Also applied to refused WebSocket upgrades. */
  response?(res: ProxiedResponse, req: ProxiedRequest): void;
  clientFrame?(text: string, state: ConnectionState): string | null;
  serverFrame?(text: string, state: ConnectionState): string | null;
}

/** What a frame hook may remember about its connection. */
export interface ConnectionState {
  readonly memory: Map<string, unknown>;
}

export interface RunningProxy {
  readonly url: string;
  close(): Promise<void>;
}

const HOP_BY_HOP = [
  'connection',
  'keep-alive',
  'transfer-encoding',
  'upgrade',
  'content-length',
  'sec-websocket-key',
  'sec-websocket-version',
  'sec-websocket-extensions',
  'sec-websocket-protocol',
];

function forwardHeaders(headers: IncomingHttpHeaders): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(headers)) if (v !== undefined && !HOP_BY_HOP.includes(k)) out[k] = v;
  return out;
}

function readAll(stream: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', () => resolve(Buffer.concat(chunks)));
    stream.on('error', reject);
  });
}

function rawResponse(res: ProxiedResponse): string {
  const headers = { ...forwardHeaders(res.headers), 'content-length': String(res.body.byteLength), connection: 'close' };
  const head = Object.entries(headers)
    .flatMap(([k, v]) => (Array.isArray(v) ? v.map((x) => `${k}: ${x}`) : [`${k}: ${v}`]))
    .join('\r\n');
  return `HTTP/1.1 ${res.status} Proxied\r\n${head}\r\n\r\n`;
}

export async function startProxy(targetUrl: string, mutations: Mutations = {}): Promise<RunningProxy> {
  const target = new URL(targetUrl);
  const sockets = new Set<Duplex>();
  const server: Server = createServer(async (req, res) => {
    const body = await readAll(req);
    const proxied: ProxiedRequest = { method: req.method ?? 'GET', target: req.url ?? '/', headers: { ...req.headers }, body };
    mutations.request?.(proxied);
    const upstream = request(
      {
        hostname: target.hostname,
        port: target.port,
        method: proxied.method,
        path: proxied.target,
        headers: {
          ...forwardHeaders(proxied.headers),
          ...(proxied.body.byteLength || proxied.method !== 'GET' ? { 'content-length': String(proxied.body.byteLength) } : {}),
        },
        agent: false,
      },
      async (up) => {
        const response: ProxiedResponse = { status: up.statusCode ?? 502, headers: { ...up.headers }, body: await readAll(up) };
        mutations.response?.(response, proxied);
        res.writeHead(response.status, { ...forwardHeaders(response.headers), 'content-length': String(response.body.byteLength) });
        res.end(response.body);
      },
    );
    upstream.on('error', () => {
      res.writeHead(502);
      res.end();
    });
    upstream.end(proxied.body);
  });

  const wss = new WebSocketServer({
    noServer: true,
    perMessageDeflate: false,
    maxPayload: 4 * 1024 * 1024,
    handleProtocols: (offered, req) =>
      (req as IncomingMessage & { selected?: string }).selected ?? (offered.values().next().value as string | undefined) ?? false,
  });
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    const offered = String(req.headers['sec-websocket-protocol'] ?? '')
      .split(',')
      .map((p) => p.trim())
      .filter(Boolean);
    const proxied: ProxiedRequest = { method: 'GET', target: req.url ?? '/', headers: { ...req.headers }, body: Buffer.alloc(0) };
    mutations.request?.(proxied);
    const upstream = new WebSocket(`ws://${target.host}${proxied.target}`, offered, {
      headers: forwardHeaders(proxied.headers) as Record<string, string>,
      perMessageDeflate: false,
      maxPayload: 4 * 1024 * 1024,
    });
    const state: ConnectionState = { memory: new Map() };
    upstream.on('unexpected-response', async (_r, up) => {
      const response: ProxiedResponse = { status: up.statusCode ?? 502, headers: { ...up.headers }, body: await readAll(up) };
      mutations.response?.(response, proxied);
      socket.end(rawResponse(response) + response.body.toString('utf8'));
    });
    upstream.on('error', () => socket.destroy());
    upstream.on('open', () => {
      (req as IncomingMessage & { selected?: string }).selected = upstream.protocol;
      wss.handleUpgrade(req, socket, head, (client) => {
        client.on('message', (data: Buffer, isBinary) => {
          const text = isBinary ? data : mutations.clientFrame ? mutations.clientFrame(data.toString('utf8'), state) : data;
          if (text !== null && upstream.readyState === WebSocket.OPEN) upstream.send(text, { binary: isBinary });
        });
        upstream.on('message', (data: Buffer, isBinary) => {
          const text = isBinary ? data : mutations.serverFrame ? mutations.serverFrame(data.toString('utf8'), state) : data;
          if (text !== null && client.readyState === WebSocket.OPEN) client.send(text, { binary: isBinary });
        });
        const closeWith = (ws: WebSocket, code: number, reason: Buffer) => {
          if (ws.readyState !== WebSocket.OPEN) return;
          if (code === 1005 || code === 1006 || code < 1000) ws.terminate();
          else ws.close(code, reason);
        };
        client.on('close', (code, reason) => closeWith(upstream, code, reason));
        upstream.on('close', (code, reason) => closeWith(client, code, reason));
        client.on('error', () => upstream.terminate());
      });
    });
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    async close() {
      for (const c of wss.clients) c.terminate();
      for (const s of sockets) s.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export function randomId(): string {
  return randomBytes(16).toString('hex');
}

/**
 * Test harness: fresh databases on both stores, in-process servers on free loopback ports, and an
 * HTTP helper that checks every response against the generated validators.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import mysql from 'mysql2/promise';
import { parseStrict } from '@orbit/spec/codec';
import * as validators from '@orbit/generated';
import { loadSettings } from '../src/config.ts';
import { startServer, type RunningServer } from '../src/server.ts';
import type { BootstrapResult } from '../src/store/principal.ts';

export const STORES = ['sqlite', 'mysql'] as const;
export type StoreKind = (typeof STORES)[number];

export const MYSQL_ROOT = process.env.ORBIT_TEST_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306';

export interface TestDatabase {
  readonly url: string;
  drop(): Promise<void>;
}

/**
 * A new, empty database: a temp SQLite file, or a uniquely named MySQL database (`prefix_<hex>`
 * on the server at `mysqlRoot`). The benchmark uses it too, with its own prefix and server.
 */
export async function freshDatabase(kind: StoreKind, options: { prefix?: string; mysqlRoot?: string } = {}): Promise<TestDatabase> {
  const prefix = options.prefix ?? 'orbit_t';
  const root = options.mysqlRoot ?? MYSQL_ROOT;
  if (kind === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), `${prefix}-`));
    return { url: `sqlite:${join(dir, 'orbit.db')}`, drop: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  const name = `${prefix}_${randomBytes(6).toString('hex')}`;
  return {
    url: `${root}/${name}`,
    async drop() {
      const conn = await mysql.createConnection({ uri: root });
      try {
        await conn.query(`DROP DATABASE IF EXISTS \`${name}\``);
      } finally {
        await conn.end();
      }
    },
  };
}

export interface TestServer extends RunningServer {
  readonly database: TestDatabase;
  bootstrap(
    options?: Partial<{ namespace: string; application: string; queues: string[]; permissions: string[] }>,
  ): Promise<BootstrapResult>;
  stop(): Promise<void>;
}

export const ALL_PERMISSIONS = ['events:manage', 'events:read', 'events:consume', 'results:publish'];

/** Starts a server on 127.0.0.1 with a free port and a fresh database; `env` shortens timings. */
export async function startTestServer(kind: StoreKind, env: Record<string, string> = {}, database?: TestDatabase): Promise<TestServer> {
  const db = database ?? (await freshDatabase(kind));
  const settings = loadSettings({ ...env }, { listen: '127.0.0.1:0', databaseUrl: db.url });
  const running = await startServer(settings);
  return {
    ...running,
    database: db,
    bootstrap(options = {}) {
      return running.orbit.store.bootstrap({
        namespace: options.namespace ?? 'ns',
        application: options.application ?? 'app',
        queues: options.queues ?? ['q'],
        permissions: options.permissions ?? ALL_PERMISSIONS,
      });
    },
    async stop() {
      await running.close();
      if (!database) await db.drop();
    },
  };
}

export interface ApiResponse {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  readonly json: any;
}

type ValidatorName = keyof typeof validators & `validate${string}`;

/** Which validator checks `data` of a successful response; errors are always checked as ErrorEnvelope. */
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
    const validate = validators[options.expect] as (d: unknown) => boolean;
    if (!validate(envelope.data))
      throw new Error(`${method} ${path}: data does not match ${options.expect}: ${text} ${JSON.stringify((validate as any).errors)}`);
  }
  if (response.headers.get('cache-control') !== 'no-store') throw new Error(`${method} ${path}: missing Cache-Control: no-store`);
  if (response.headers.get('x-request-id') !== envelope.request_id)
    throw new Error(`${method} ${path}: X-Request-ID does not match request_id`);
  return { status: response.status, headers: response.headers, text, json };
}

/** Waits until `check` returns a truthy value, polling; fails after `timeoutMs`. */
export async function eventually<T>(
  check: () => Promise<T | undefined | null | false> | T | undefined | null | false,
  timeoutMs = 10_000,
  what = 'condition',
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/**
 * Orbit embedded in a host Hono app under `/orbit` (server/examples/embed-in-hono.ts, the recipe
 * of docs/embedding.md), as a real process: the host's routes, its 404 and its own WebSocket
 * endpoint keep working beside Orbit, Orbit's envelope covers only its prefix, the console and the
 * OpenAPI document work under the prefix, and the conformance suite passes against
 * `http://127.0.0.1:PORT/orbit`. A server that is Orbit's alone still refuses other upgrade paths.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { parse } from 'yaml';
import { ALL_CASES, parseKnownFailing } from '../../conformance/src/index.ts';
import { runningServerConfig, SERVER_ENV } from '../../conformance/test/target.ts';
import { cleanEnv, freePort, freshDatabase, ORBIT_BIN, startTestServer, STORES, type TestDatabase } from '@orbit/testing';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const RECIPE = fileURLToPath(new URL('../examples/embed-in-hono.ts', import.meta.url));
const KNOWN_FAILING = join(REPO, 'conformance/test/fixtures/orbit-known-failing.txt');

/** Runs `node ARGS` to completion and collects its output. */
function run(args: string[], timeoutMs: number): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { cwd: REPO, env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

/** The status and body with which a server refuses an upgrade (or 101 when it accepts). */
function refusedUpgrade(url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, 'orbit.events.v1');
    ws.once('unexpected-response', (_request, response) => {
      let body = '';
      response.on('data', (c: Buffer) => (body += c.toString()));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
    });
    ws.once('open', () => {
      ws.close();
      resolve({ status: 101, body: '' });
    });
    ws.once('error', (error) => (error.message.includes('Unexpected server response') ? undefined : reject(error)));
  });
}

/** The host's WebSocket endpoint answers one message, or the upgrade fails with its status. */
function echoOnce(url: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url);
    ws.once('open', () => ws.send('ping'));
    ws.once('message', (data) => {
      resolve(String(data));
      ws.close();
    });
    ws.once('unexpected-response', (_request, response) => reject(new Error(`upgrade answered ${response.statusCode}`)));
    ws.once('error', reject);
  });
}

describe.each(STORES)('Orbit under /orbit in a host Hono app (%s)', (kind) => {
  let database: TestDatabase;
  let host: ChildProcess;
  let origin: string;
  let output = '';

  beforeAll(async () => {
    database = await freshDatabase(kind, { prefix: 'orbit_embed' });
    const port = await freePort();
    origin = `http://127.0.0.1:${port}`;
    host = spawn(process.execPath, ['--import', 'tsx', RECIPE], {
      cwd: REPO,
      env: { ...cleanEnv(), ...SERVER_ENV, PORT: String(port), ORBIT_DATABASE_URL: database.url },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    host.stdout!.on('data', (c: Buffer) => (output += c.toString()));
    host.stderr!.on('data', (c: Buffer) => (output += c.toString()));
    const deadline = Date.now() + 30_000;
    for (;;) {
      if (host.exitCode !== null) throw new Error(`the host exited with ${host.exitCode}:\n${output}`);
      const ready = await fetch(`${origin}/orbit/healthz`).then(
        (r) => r.ok,
        () => false,
      );
      if (ready) break;
      if (Date.now() > deadline) throw new Error(`the host did not answer within 30 s:\n${output}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  });

  afterAll(async () => {
    if (host && host.exitCode === null) {
      const exited = new Promise((resolve) => host.once('exit', resolve));
      host.kill('SIGTERM');
      await exited;
    }
    await database?.drop();
  });

  it("keeps the host's routes and the host's own 404", async () => {
    const hello = await fetch(`${origin}/api/hello`);
    expect(await hello.json()).toEqual({ hello: 'from the host' });
    const missing = await fetch(`${origin}/v1/subscriptions`);
    expect(missing.status).toBe(404);
    expect(await missing.text()).toBe('host: not found\n');
  });

  it('answers unknown routes under the prefix with the NOT_FOUND envelope', async () => {
    for (const path of ['/orbit/v1/nothing-here', '/orbit']) {
      const res = await fetch(`${origin}${path}`);
      expect(res.status, path).toBe(404);
      const body = (await res.json()) as { request_id: string; error: { code: string } };
      expect(body.error.code, path).toBe('NOT_FOUND');
      expect(res.headers.get('x-request-id'), path).toBe(body.request_id);
    }
  });

  it("leaves the host's WebSocket endpoint to the host", async () => {
    expect(await echoOnce(`ws://127.0.0.1:${new URL(origin).port}/ws`)).toBe('echo: ping');
  });

  it('serves its OpenAPI document with the prefix as its server', async () => {
    const res = await fetch(`${origin}/orbit/v1/openapi.json`);
    expect(res.status).toBe(200);
    const document = (await res.json()) as { openapi: string; servers: { url: string }[]; paths: Record<string, unknown> };
    expect(document.openapi).toBe('3.1.0');
    expect(document.servers.map((s) => s.url)).toEqual(['/orbit']);
    const contract = parse(readFileSync(join(REPO, 'spec/openapi.yaml'), 'utf8')) as { paths: unknown; components: unknown };
    expect(document.paths).toEqual(contract.paths);
    expect((document as unknown as { components: unknown }).components).toEqual(contract.components);
  });

  it('serves the console under the prefix, every asset it links included', async () => {
    const page = await (await fetch(`${origin}/orbit/console`)).text();
    const links = [...page.matchAll(/(?:href|src)="(\/[^"]+)"/g)].map((m) => m[1]!);
    expect(links.length).toBeGreaterThan(2);
    for (const link of links) {
      expect(link.startsWith('/orbit/console/'), link).toBe(true);
      expect((await fetch(`${origin}${link}`)).status, link).toBe(200);
    }
  });

  it('passes the conformance suite against http://127.0.0.1:PORT/orbit', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'orbit-embed-conformance-'));
    try {
      const config = runningServerConfig(`${origin}/orbit`, `node ${JSON.stringify(ORBIT_BIN)}`, database.url);
      writeFileSync(join(dir, 'conformance.json'), JSON.stringify(config));
      const cli = join(REPO, 'conformance/bin/orbit-conformance.mjs');
      const { code, output: report } = await run(
        [cli, '--profile', 'orbit', '--config', join(dir, 'conformance.json'), '--known-failing', KNOWN_FAILING],
        600_000,
      );
      expect(code, report).toBe(0);
      const known = parseKnownFailing(readFileSync(KNOWN_FAILING, 'utf8')).length;
      const info = ALL_CASES.filter((c) => c.level === 'MAY').length;
      expect(report.trimEnd().split('\n').at(-1)).toBe(`${ALL_CASES.length - known - info} passed, ${known} failed, ${info} info`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 620_000);
});

describe.each(STORES)('a server that is Orbit alone (%s)', (kind) => {
  it('answers an upgrade for any other path with the NOT_FOUND envelope', async () => {
    const server = await startTestServer(kind);
    try {
      const { status, body } = await refusedUpgrade(`${server.url.replace(/^http/, 'ws')}/v1/events/elsewhere`);
      expect(status).toBe(404);
      expect(JSON.parse(body).error.code).toBe('NOT_FOUND');
    } finally {
      await server.stop();
    }
  });
});

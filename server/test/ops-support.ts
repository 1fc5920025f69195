/**
 * Helpers of the operations suites (`ops-*.test.ts`): API shortcuts, `orbit` CLI processes with
 * arbitrary arguments, and a self-signed certificate made at test time.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import { api } from './harness.ts';

export const TASK = '66666666666666666666666666666666';
export const ORBIT_BIN = fileURLToPath(new URL('../bin/orbit.mjs', import.meta.url));

export async function publish(base: string, token: string, queueId: string, n = 1, type = 'task.succeeded'): Promise<void> {
  for (let i = 0; i < n; i++) {
    const r = await api(base, 'POST', `/v1/queues/${queueId}/results`, { token, key: `p-${Math.random()}`, body: { type, task_id: TASK, task_revision: String(i + 1) } });
    expect(r.status).toBe(201);
  }
}

export async function subscribe(base: string, token: string, queueId: string, extra: Record<string, unknown> = {}): Promise<any> {
  const r = await api(base, 'POST', '/v1/subscriptions', {
    token,
    key: `s-${Math.random()}`,
    body: { name: `s${Math.random().toString(36).slice(2, 10)}`, queue_id: queueId, ...extra },
    expect: 'validateSubscriptionResult',
  });
  expect(r.status, r.text).toBe(201);
  return r.json.data.subscription;
}

export async function configure(base: string, token: string, id: string, enabled: boolean): Promise<void> {
  const current = await api(base, 'GET', `/v1/subscriptions/${id}`, { token });
  const r = await api(base, 'POST', `/v1/subscriptions/${id}:configure`, { token, key: `c-${Math.random()}`, body: { expected_revision: current.json.data.revision, enabled, reason: 'test' } });
  expect(r.status).toBe(200);
}

export async function deliveries(base: string, token: string, subscriptionId: string): Promise<any[]> {
  const r = await api(base, 'GET', `/v1/subscriptions/${subscriptionId}/deliveries?limit=100`, { token, expect: 'validateDeliveryList' });
  expect(r.status).toBe(200);
  return r.json.data.items;
}

export interface CliRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `orbit ARGS` to completion (for commands that exit, or fail to start). */
export function runOrbit(args: string[], env: Record<string, string> = {}, timeoutMs = 15_000): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [ORBIT_BIN, ...args], { env: { ...cleanEnv(), ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`orbit ${args.join(' ')} did not exit: ${stdout} ${stderr}`));
    }, timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** The parent's environment without ORBIT_* settings, so a developer's shell cannot change a test. */
export function cleanEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('ORBIT_') || k === 'ORBIT_TEST_MYSQL_URL'));
}

export interface OrbitProcess {
  readonly url: string;
  readonly child: ChildProcess;
  readonly output: string[];
  text(): string;
  exited: Promise<number | null>;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Starts `orbit serve ARGS` and resolves with the URL of its "orbit is serving" line (http or https). */
export async function serveOrbit(args: string[], env: Record<string, string> = {}, timeoutMs = 20_000): Promise<OrbitProcess> {
  const child = spawn(process.execPath, [ORBIT_BIN, 'serve', ...args], { env: { ...cleanEnv(), ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const output: string[] = [];
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start: ${output.join('')}`)), timeoutMs);
    const onData = (chunk: Buffer) => {
      output.push(chunk.toString());
      const match = /"url":"(https?:\/\/127\.0\.0\.1:\d+)"/.exec(output.join(''));
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}: ${output.join('')}`));
    });
  });
  return {
    url,
    child,
    output,
    text: () => output.join(''),
    exited,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

/** A self-signed P-256 certificate for 127.0.0.1 in a new temp dir. */
export function selfSignedCertificate(): { dir: string; cert: string; key: string } {
  const dir = mkdtempSync(join(tmpdir(), 'orbit-tls-'));
  const cert = join(dir, 'cert.pem');
  const key = join(dir, 'key.pem');
  execFileSync(
    'openssl',
    ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', key, '-out', cert],
    { stdio: 'ignore' },
  );
  return { dir, cert, key };
}

/** A free loopback port (bound, read, released). */
export async function freePort(): Promise<number> {
  const { createServer } = await import('node:net');
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as { port: number }).port;
      server.close(() => resolve(port));
    });
  });
}

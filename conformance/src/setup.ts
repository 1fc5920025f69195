/**
 * @module
 * Turns a configuration into a runnable target. In spawn mode it starts `server.command` (with
 * `{port}` and `{tmpdir}` substituted), waits for `GET /healthz`, and runs `bootstrap.command`
 * once per role to create the credentials; otherwise it only checks that the server answers.
 * `stop()` ends the server it started (its own process group) and removes the temp directory.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseStrict } from '@orbit/spec/codec';
import type { Credential, Role, SuiteConfig } from './config.ts';
import { ConfigError, ROLES } from './config.ts';
import type { RunEnvironment } from './context.ts';
import { sendHttp } from './http.ts';
import { runCommand, substitute } from './shell.ts';

/** Which namespace, application and permissions each role gets from `bootstrap.command`. */
export const BOOTSTRAP_PLAN: Readonly<
  Record<Role, { readonly otherNamespace: boolean; readonly application: string; readonly permissions: string }>
> = {
  full: { otherNamespace: false, application: 'conformance-app', permissions: 'events:manage,events:read,events:consume' },
  sameNamespace: { otherNamespace: false, application: 'conformance-app-2', permissions: 'events:manage,events:read,events:consume' },
  readOnly: { otherNamespace: false, application: 'conformance-app', permissions: 'events:read' },
  consumeOnly: { otherNamespace: false, application: 'conformance-app', permissions: 'events:consume' },
  noEvents: { otherNamespace: false, application: 'conformance-app', permissions: 'results:publish' },
  otherNamespace: { otherNamespace: true, application: 'conformance-app', permissions: 'events:manage,events:read,events:consume' },
  publisher: { otherNamespace: false, application: 'conformance-publisher', permissions: 'results:publish' },
};

export interface PreparedTarget {
  readonly env: RunEnvironment;
  stop(): Promise<void>;
}

export class SetupError extends Error {
  override readonly name = 'SetupError';
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

async function healthy(baseUrl: string): Promise<boolean> {
  try {
    const res = await sendHttp(baseUrl, { method: 'GET', target: '/healthz', timeoutMs: 2_000 });
    return res.status === 200;
  } catch {
    return false;
  }
}

function startServer(command: string, cwd: string, env: Record<string, string>): { child: ChildProcess; output: () => string } {
  const child = spawn('sh', ['-c', command], { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let output = '';
  const keep = (c: Buffer) => {
    output = (output + c.toString('utf8')).slice(-16_384);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  return { child, output: () => output };
}

async function stopServer(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const signal = (s: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, s); // the process group we created with detached: true
    } catch {
      // already gone
    }
  };
  signal('SIGTERM');
  const timer = setTimeout(() => signal('SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
}

function parseBootstrap(stdout: string, role: Role): { token: string; credential_id?: string; queue_ids?: Record<string, string> } {
  const line = stdout.trim().split('\n').filter(Boolean).pop() ?? '';
  let value: any;
  try {
    value = parseStrict(line);
  } catch (error) {
    throw new SetupError(`bootstrap for role ${role} did not print JSON: ${(error as Error).message}: ${stdout.slice(0, 300)}`);
  }
  if (typeof value?.token !== 'string') throw new SetupError(`bootstrap for role ${role} printed no token: ${line.slice(0, 300)}`);
  return value;
}

export async function prepareTarget(
  config: SuiteConfig,
  options: { seed?: number; numRuns?: number; progress?: (line: string) => void } = {},
): Promise<PreparedTarget> {
  const progress = options.progress ?? (() => {});
  const dir = mkdtempSync(join(tmpdir(), 'orbit-conformance-'));
  const vars: Record<string, string> = { tmpdir: dir };
  if (config.server || config.baseUrl.includes('{port}')) vars.port = String(await freePort());
  const baseUrl = substitute(config.baseUrl, vars);
  let server: { child: ChildProcess; output: () => string } | undefined;
  const stop = async () => {
    if (server) await stopServer(server.child);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    if (config.server) {
      const command = substitute(config.server.command, vars);
      progress(`starting the server: ${command}`);
      server = startServer(command, config.cwd, {
        ...config.server.env,
        ORBIT_CONFORMANCE_PORT: vars.port!,
        ORBIT_CONFORMANCE_TMPDIR: dir,
      });
      const deadline = Date.now() + config.server.startupTimeoutMs;
      while (!(await healthy(baseUrl))) {
        if (server.child.exitCode !== null)
          throw new SetupError(`the server exited with ${server.child.exitCode} before answering GET /healthz:\n${server.output()}`);
        if (Date.now() > deadline)
          throw new SetupError(
            `GET ${baseUrl}/healthz did not answer 200 within ${config.server.startupTimeoutMs} ms:\n${server.output()}`,
          );
        await new Promise((r) => setTimeout(r, 100));
      }
    } else if (!(await healthy(baseUrl))) {
      throw new SetupError(`GET ${baseUrl}/healthz does not answer 200; is the server running?`);
    }

    const credentials: Partial<Record<Role, Credential>> = { ...config.credentials };
    const queues = { ...config.queues };
    if (config.bootstrap) {
      for (const role of Object.keys(ROLES) as Role[]) {
        if (credentials[role]) continue;
        const plan = BOOTSTRAP_PLAN[role];
        const namespace = plan.otherNamespace ? config.bootstrap.otherNamespace : config.bootstrap.namespace;
        const command = substitute(config.bootstrap.command, {
          ...vars,
          role,
          namespace,
          application: plan.application,
          permissions: plan.permissions,
        });
        const result = await runCommand(command, {
          cwd: config.cwd,
          env: {
            ORBIT_CONFORMANCE_ROLE: role,
            ORBIT_CONFORMANCE_NAMESPACE: namespace,
            ORBIT_CONFORMANCE_APPLICATION: plan.application,
            ORBIT_CONFORMANCE_PERMISSIONS: plan.permissions,
          },
        });
        if (result.code !== 0)
          throw new SetupError(`bootstrap for role ${role} failed (exit ${result.code}): ${command}\n${result.stderr}${result.stdout}`);
        const out = parseBootstrap(result.stdout, role);
        credentials[role] = { token: out.token, ...(out.credential_id ? { credentialId: out.credential_id } : {}) };
        const ids = Object.values(out.queue_ids ?? {});
        if (role === 'full') {
          queues.primary ??= ids[0];
          if (ids[1]) queues.secondary ??= ids[1];
        }
        if (role === 'otherNamespace' && ids[0]) queues.otherNamespace ??= ids[0];
      }
      progress(`bootstrapped ${Object.keys(ROLES).length} roles`);
    }
    if (!credentials.full) throw new ConfigError('credentials.full is required');
    if (!queues.primary) throw new ConfigError('queues.primary is required (the bootstrap printed no queue_ids)');
    if (config.publish.method === 'http' && !credentials.publisher)
      throw new ConfigError('publish.method "http" needs credentials.publisher');

    const env: RunEnvironment = {
      config: { ...config, baseUrl, credentials, queues },
      vars,
      seed: options.seed ?? Math.floor(Math.random() * 0x7fffffff),
      numRuns: options.numRuns ?? config.numRuns,
      runTag: randomBytes(3).toString('hex'),
    };
    return { env, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

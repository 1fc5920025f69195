/**
 * @module
 * Turns a configuration into a runnable target. In spawn mode it starts `server.command` (with
 * `{port}` and `{tmpdir}` substituted), waits for `GET /healthz` to answer 200, and runs
 * `bootstrap.command` once per role to create the credentials; otherwise it checks that the
 * server answers, waiting up to `waitReadyMs` for one that is still starting. `stop()` ends the
 * server it started (its own process group) and removes the temp directory; so does a SIGINT or
 * SIGTERM to the CLI before then (interrupt.ts). The suite itself needs nothing of `/healthz` but
 * a 200: what the body says is Orbit's business, not the seed's.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseStrict } from '@orbit/spec/codec';
import { type Bootstrapped, type BootstrapOutput, bootstrapRoles } from './bootstrap.ts';
import type { Role, SuiteConfig } from './config.ts';
import { ConfigError, ROLES } from './config.ts';
import type { RunEnvironment } from './context.ts';
import { endOnInterrupt } from './interrupt.ts';
import { type ProcessGroup, startGroup } from './process-group.ts';
import { type ServerWatch, waitReady } from './probe.ts';
import { runCommand, substitute } from './shell.ts';

export interface PreparedTarget {
  readonly env: RunEnvironment;
  /** The server process, in spawn mode (for the runner's dead-server guard). */
  readonly server?: ServerWatch;
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

type Spawned = ServerWatch & ProcessGroup;

/** The time a server gets to shut down on SIGTERM before its group gets SIGKILL. */
const SERVER_GRACE_MS = 5_000;

function startServer(command: string, cwd: string, env: Record<string, string>): Spawned {
  const group = startGroup(
    'sh',
    ['-c', command],
    { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] },
    SERVER_GRACE_MS,
  );
  const { child } = group;
  let output = '';
  const keep = (c: Buffer) => {
    output = (output + c.toString('utf8')).slice(-16_384);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  return {
    ...group,
    exited: () =>
      child.exitCode !== null ? `exit code ${child.exitCode}` : child.signalCode !== null ? `signal ${child.signalCode}` : null,
    outputTail: () => output.split('\n').slice(-40).join('\n'),
  };
}

function parseBootstrap(stdout: string, role: Role): BootstrapOutput {
  const line = stdout.trim().split('\n').filter(Boolean).pop() ?? '';
  let value: unknown;
  try {
    value = parseStrict(line);
  } catch (error) {
    throw new SetupError(`bootstrap for role ${role} did not print JSON: ${(error as Error).message}: ${stdout.slice(0, 300)}`);
  }
  const out = value as Partial<BootstrapOutput> | null;
  if (typeof out?.token !== 'string') throw new SetupError(`bootstrap for role ${role} printed no token: ${line.slice(0, 300)}`);
  return out as BootstrapOutput;
}

export async function prepareTarget(
  config: SuiteConfig,
  options: { seed?: number; numRuns?: number; waitReadyMs?: number; progress?: (line: string) => void } = {},
): Promise<PreparedTarget> {
  const progress = options.progress ?? (() => {});
  const dir = mkdtempSync(join(tmpdir(), 'orbit-conformance-'));
  const vars: Record<string, string> = { tmpdir: dir };
  if (config.server || config.baseUrl.includes('{port}')) vars.port = String(await freePort());
  const baseUrl = substitute(config.baseUrl, vars);
  let server: Spawned | undefined;
  // The server first: it may write into the directory until it has exited.
  const stop = endOnInterrupt(async () => {
    await server?.end();
    rmSync(dir, { recursive: true, force: true });
  });
  try {
    if (config.server) {
      const command = substitute(config.server.command, vars);
      progress(`starting the server: ${command}`);
      server = startServer(command, config.cwd, {
        ...config.server.env,
        ORBIT_CONFORMANCE_PORT: vars.port!,
        ORBIT_CONFORMANCE_TMPDIR: dir,
      });
      const problem = await waitReady(baseUrl, config.server.startupTimeoutMs, server);
      if (problem)
        throw new SetupError(
          `GET ${baseUrl}/healthz did not answer 200 within ${config.server.startupTimeoutMs} ms (${problem}):\n${server.outputTail()}`,
        );
    } else {
      const waitMs = options.waitReadyMs ?? 0;
      const problem = await waitReady(baseUrl, waitMs);
      if (problem)
        throw new SetupError(
          `GET ${baseUrl}/healthz does not answer 200 (${problem})${waitMs > 0 ? ` after waiting ${waitMs} ms` : ''}; is the server ` +
            `running? (--wait-ready SECONDS waits for one that is starting)`,
        );
    }

    let { credentials, queues }: Bootstrapped = config;
    const bootstrap = config.bootstrap;
    if (bootstrap) {
      ({ credentials, queues } = await bootstrapRoles(
        async ({ role, namespace, application, permissions }) => {
          const command = substitute(bootstrap.command, {
            ...vars,
            role,
            namespace,
            application,
            permissions: permissions.join(','),
          });
          const result = await runCommand(command, {
            cwd: config.cwd,
            env: {
              ORBIT_CONFORMANCE_ROLE: role,
              ORBIT_CONFORMANCE_NAMESPACE: namespace,
              ORBIT_CONFORMANCE_APPLICATION: application,
              ORBIT_CONFORMANCE_PERMISSIONS: permissions.join(','),
            },
          });
          if (result.code !== 0)
            throw new SetupError(`bootstrap for role ${role} failed (exit ${result.code}): ${command}\n${result.stderr}${result.stdout}`);
          return parseBootstrap(result.stdout, role);
        },
        { namespace: bootstrap.namespace, otherNamespace: bootstrap.otherNamespace, have: { credentials, queues } },
      ));
      progress(`bootstrapped ${Object.keys(ROLES).length} roles`);
    }
    const absent = (Object.keys(ROLES) as Role[]).filter((role) => !credentials[role]);
    if (absent.length > 0)
      progress(`no ${absent.map((r) => `credentials.${r}`).join(', ')} in the configuration: the cases that need them are skipped`);
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
    return { env, ...(server ? { server } : {}), stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

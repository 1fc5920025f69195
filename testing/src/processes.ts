/**
 * @module
 * Real `orbit` processes for tests: `orbit serve` on a loopback port it reports in its first log
 * line (several nodes, kills, restarts, TLS), and one-shot CLI commands.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';

/** The `orbit` command of the server package, found through its manifest's `bin` (what `npx orbit` runs). */
export const ORBIT_BIN = ((): string => {
  const manifest = createRequire(import.meta.url).resolve('@orbit/server/package.json');
  const { bin } = JSON.parse(readFileSync(manifest, 'utf8')) as { bin: { orbit: string } };
  return join(dirname(manifest), bin.orbit);
})();

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

/**
 * Runs a program to its end, or until `until` is true of its stdout so far, when it gets SIGTERM
 * (a consumer that a user stops); then its exit. Rejects when it has not ended after `timeoutMs`
 * (it is killed). The doc snippets' runs: client/test/docs-snippets.test.ts and consumer/.
 */
export function runUntil(
  command: string,
  args: readonly string[],
  options: { env: NodeJS.ProcessEnv; cwd?: string; until?: (stdout: string) => boolean; timeoutMs?: number },
): Promise<CliRun> {
  const { env, cwd, until, timeoutMs = 60_000 } = options;
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env, ...(cwd === undefined ? {} : { cwd }), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let signalled = false;
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${[command, ...args].join(' ')} did not finish within ${timeoutMs} ms:\n${stdout}\n${stderr}`));
    }, timeoutMs);
    child.stdout.on('data', (c: Buffer) => {
      stdout += c.toString();
      if (until && !signalled && until(stdout)) {
        signalled = true;
        child.kill('SIGTERM');
      }
    });
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('close', (code) => {
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

/**
 * Starts `orbit serve ARGS` and resolves with the URL of its "orbit is serving" line (http or
 * https). `launcher` is what Node runs before `serve`: the CLI by default, or node flags and
 * another entry point (the benchmark's GC-instrumented launcher). `command` may be `dev` instead
 * (with `--log-format json`, so that the line is found).
 */
export async function serveOrbit(
  args: string[],
  env: Record<string, string> = {},
  timeoutMs = 20_000,
  launcher: readonly string[] = [ORBIT_BIN],
  command: 'serve' | 'dev' = 'serve',
  namespace?: string,
): Promise<OrbitProcess> {
  const argv = [process.execPath, ...launcher, command, ...args];
  // In a network namespace (testing/src/netns.ts), through `ip netns exec`, which execs the node.
  const [file, ...rest] = namespace === undefined ? argv : ['ip', 'netns', 'exec', namespace, ...argv];
  const child = spawn(file!, rest, {
    env: { ...cleanEnv(), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start: ${output.join('')}`)), timeoutMs);
    const onData = (chunk: Buffer) => {
      output.push(chunk.toString());
      const match = /"url":"(https?:\/\/[0-9.]+:\d+)"/.exec(output.join(''));
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

export type ServerProcess = OrbitProcess;

/**
 * `orbit serve` on a database; `listen` defaults to a free port chosen by the kernel; `namespace`
 * runs it in that network namespace (testing/src/netns.ts).
 */
export function spawnServer(
  databaseUrl: string,
  env: Record<string, string> = {},
  timeoutMs = 20_000,
  listen = '127.0.0.1:0',
  namespace?: string,
): Promise<ServerProcess> {
  return serveOrbit(['--listen', listen, '--database', databaseUrl], env, timeoutMs, [ORBIT_BIN], 'serve', namespace);
}

/** A free loopback port (bound, read, released). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as { port: number }).port;
      server.close(() => resolve(port));
    });
  });
}

/**
 * @module
 * Debian's haproxy running the repository's configurations (docs/operations.md): `orbit.cfg` in
 * front of Orbit nodes, and `galera-writer.cfg` (with `galera-check.sh`) between Orbit and a
 * Galera cluster. The topology tests and the benchmark start it from here, on a free port.
 * It imports no workspace package: the cluster suite's global setup loads it where their sources
 * do not resolve (server/test/cluster/setup.ts).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import mysql from 'mysql2/promise';
import { freePort } from './processes.ts';

/** Where Debian's haproxy package puts it (`npm run test:cluster` installs it when missing). */
export const HAPROXY = '/usr/sbin/haproxy';
const deploy = (file: string) => fileURLToPath(new URL(`../../deploy/haproxy/${file}`, import.meta.url));

/** Why haproxy cannot run here, with the command that fixes it; null when it can. */
export function haproxyMissing(): string | null {
  return existsSync(HAPROXY) ? null : `${HAPROXY} is missing; install it with: apt-get install -y haproxy`;
}

export interface HaproxyProcess {
  /** `http://HOST:PORT` for the Orbit balancer, `mysql://root@HOST:PORT` for the writer proxy. */
  readonly url: string;
  readonly process: ChildProcess;
  /** What haproxy logged (its health-check transitions among them). */
  readonly log: string[];
  stop(): void;
}

/**
 * A configuration edited from the repository's file: `edit` gets its text and returns the text to
 * run (a test that compares one setting against the file as it is). In a temporary folder of its own.
 */
function rendered(config: string, edit: (text: string) => string): { file: string; remove(): void } {
  const text = readFileSync(deploy(config), 'utf8');
  const edited = edit(text);
  if (edited === text) throw new Error(`the edit changed nothing in ${config}`);
  const folder = mkdtempSync(join(tmpdir(), 'orbit-haproxy-'));
  const file = join(folder, config);
  writeFileSync(file, edited);
  return { file, remove: () => rmSync(folder, { recursive: true, force: true }) };
}

async function start(
  config: string,
  env: Record<string, string>,
  url: string,
  answers: () => Promise<boolean>,
  edit?: (text: string) => string,
): Promise<HaproxyProcess> {
  const missing = haproxyMissing();
  if (missing) throw new Error(missing);
  const log: string[] = [];
  const copy = edit ? rendered(config, edit) : null;
  const child = spawn(HAPROXY, ['-db', '-f', copy?.file ?? deploy(config)], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (chunk: Buffer) => log.push(chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => log.push(chunk.toString()));
  const stop = () => {
    child.kill('SIGKILL');
    copy?.remove();
  };
  const proxy = { url, process: child, log, stop };
  for (let i = 0; i < 100; i++) {
    if (await answers().catch(() => false)) return proxy;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  proxy.stop();
  throw new Error(`haproxy (${config}) did not answer within 10 s: ${log.join('').slice(-1000)}`);
}

/**
 * `orbit.cfg` in front of three Orbit nodes (`host:port` each); resolves once `/readyz` answers 200
 * through it. `edit` runs a copy of the file changed by it instead of the file itself.
 */
export async function startOrbitBalancer(nodes: readonly string[], edit?: (text: string) => string): Promise<HaproxyProcess> {
  const listen = `127.0.0.1:${await freePort()}`;
  const url = `http://${listen}`;
  const env = { ORBIT_LB_LISTEN: listen, ORBIT_NODE_1: nodes[0]!, ORBIT_NODE_2: nodes[1]!, ORBIT_NODE_3: nodes[2]! };
  return start('orbit.cfg', env, url, async () => (await fetch(`${url}/readyz`)).status === 200, edit);
}

/**
 * `galera-writer.cfg` in front of three Galera nodes (`host:port` each); resolves once a connection
 * opens through it. `bind` is the address it listens on (0.0.0.0: reachable from network namespaces).
 */
export async function startWriterProxy(nodes: readonly string[], bind = '127.0.0.1'): Promise<HaproxyProcess> {
  const port = await freePort();
  const listen = `${bind}:${port}`;
  const url = `mysql://root@127.0.0.1:${port}`;
  const env = {
    GALERA_LB_LISTEN: listen,
    GALERA_NODE_1: nodes[0]!,
    GALERA_NODE_2: nodes[1]!,
    GALERA_NODE_3: nodes[2]!,
    GALERA_CHECK: deploy('galera-check.sh'),
  };
  return start('galera-writer.cfg', env, url, async () => {
    const conn = await mysql.createConnection({ uri: url });
    await conn.end();
    return true;
  });
}

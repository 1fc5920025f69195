/**
 * Global setup of the Galera project: installs what the suite runs besides MariaDB when it is
 * missing (the Galera provider, rsync, haproxy), then boots a three-node cluster with `scripts/galera.sh start`
 * (about 30–60 s here) on loopback ports it picks itself, so that two runs on one machine do not
 * collide, and stops it afterwards. With `GALERA_PORT` set (a developer iterating against a cluster
 * of their own), that cluster is used when it is running and Synced, and left running.
 */
import { spawnSync } from 'node:child_process';
import { createServer } from 'node:net';
// The modules themselves, not @orbit/testing's index (see server/test/cluster/setup.ts).
import { ensureDebianPackage, ensureGaleraPackages } from '../../../testing/src/debian.ts';
import { HAPROXY } from '../../../testing/src/haproxy.ts';
import { GALERA_SCRIPT } from './cluster.ts';

function script(command: string): { ok: boolean; output: string } {
  const run = spawnSync('bash', [GALERA_SCRIPT, command], { encoding: 'utf8', timeout: 240_000 });
  return { ok: run.status === 0, output: `${run.stdout}${run.stderr}` };
}

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * Twelve free consecutive ports below Linux's ephemeral range (32768 up), for the nodes' SQL,
 * group, IST and SST ports (three each; scripts/galera.sh numbers them from the first of each).
 */
export async function freePorts(): Promise<Record<string, string>> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const base = 20_000 + 12 * Math.floor(Math.random() * 1000);
    const free = await Promise.all(Array.from({ length: 12 }, (_, i) => portFree(base + i)));
    if (free.every(Boolean))
      return { GALERA_PORT: `${base}`, GALERA_GROUP_PORT: `${base + 3}`, GALERA_IST_PORT: `${base + 6}`, GALERA_SST_PORT: `${base + 9}` };
  }
  throw new Error('found no 12 free consecutive loopback ports for the Galera cluster');
}

export default async function setup(): Promise<() => void> {
  // What the suite runs besides MariaDB, installed when missing as the deployment suite does: a
  // fresh machine may lack any of them, and `.ci/run` runs this suite first.
  ensureGaleraPackages();
  ensureDebianPackage(HAPROXY, 'haproxy', 'one-writer.test.ts sends Orbit to one writer through deploy/haproxy/galera-writer.cfg');
  if (process.env.GALERA_PORT && script('status').ok) return () => {};
  // The test files' workers inherit these, and with them scripts/galera.sh and cluster.ts.
  if (!process.env.GALERA_PORT) Object.assign(process.env, await freePorts());
  // A record left by a run that died on these ports: stop what it recorded (only those PIDs) first.
  script('stop');
  const started = script('start');
  if (!started.ok) throw new Error(`could not start the Galera cluster:\n${started.output}`);
  return () => {
    const stopped = script('stop');
    if (!stopped.ok) console.error(stopped.output);
  };
}

/**
 * Global setup of the Galera project: boots the three-node cluster with `scripts/galera.sh start`
 * (about 30–60 s here) unless one is already running and Synced, and stops it afterwards if it
 * started it. A cluster that was already up (a developer iterating) is left running.
 */
import { spawnSync } from 'node:child_process';
import { GALERA_SCRIPT } from './cluster.ts';

function script(command: string): { ok: boolean; output: string } {
  const run = spawnSync('bash', [GALERA_SCRIPT, command], { encoding: 'utf8', timeout: 240_000 });
  return { ok: run.status === 0, output: `${run.stdout}${run.stderr}` };
}

export default function setup(): () => void {
  if (script('status').ok) return () => {};
  // A record left by a run that died: stop what it recorded (only those PIDs) before starting anew.
  script('stop');
  const started = script('start');
  if (!started.ok) throw new Error(`could not start the Galera cluster:\n${started.output}`);
  return () => {
    const stopped = script('stop');
    if (!stopped.ok) console.error(stopped.output);
  };
}

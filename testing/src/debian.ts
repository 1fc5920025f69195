/**
 * @module
 * A Debian package a suite needs, installed when it is missing (the deployment suite's global
 * setup; `npm test` does the same for its own in scripts/test.mjs).
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

/**
 * Makes sure `binary` exists: installs `pkg` with apt-get when this process is root, and otherwise
 * throws with the command that installs it. `why` says which test needs it.
 */
export function ensureDebianPackage(binary: string, pkg: string, why: string): void {
  if (existsSync(binary)) return;
  const install = `apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends ${pkg}`;
  if (process.getuid?.() !== 0 || !existsSync('/usr/bin/apt-get'))
    throw new Error(`${binary} is missing (${why}); run: sudo sh -c '${install}'`);
  console.log(`installing ${pkg} (${why})`);
  const run = spawnSync('sh', ['-c', install], { stdio: 'inherit', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
  if (run.status !== 0 || !existsSync(binary)) throw new Error(`${binary} is still missing after: ${install}`);
}

/** What a cluster of `scripts/galera.sh` runs besides MariaDB: the Galera provider, and rsync for a joining node. */
export function ensureGaleraPackages(): void {
  ensureDebianPackage('/usr/lib/galera/libgalera_smm.so', 'galera-4', 'the suite runs a Galera cluster (scripts/galera.sh)');
  ensureDebianPackage('/usr/bin/rsync', 'rsync', 'a Galera node joins its cluster by rsync (scripts/galera.sh)');
}

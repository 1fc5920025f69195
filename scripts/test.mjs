#!/usr/bin/env node
// `npm test`, in the order the tree depends on itself: first what the suites need (MariaDB on
// 127.0.0.1:3306, Debian's Chromium for the console test, python3-websockets for the client
// conformance test's Python adapter), brought up here or refused at once with
// the one command that fixes it (the load-balancer and partition tests are in `npm run test:cluster`);
// then format and lint (Biome); the layering rules
// (.dependency-cruiser.cjs: no cycles, arrows down the tree); generate --check (generated/,
// the AsyncAPI document and the migrations match spec/ and the tables) and the OpenAPI lint; the
// build of every package (tsc -b); the type-check of the whole tree; every vitest project (unit
// and property tests, then the real-server suites on SQLite and MariaDB and the consumer test of
// the packed packages). Extra arguments go to vitest.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { connect } from 'node:net';

const CHROMIUM = '/usr/bin/chromium';
const MARIADBD = '/usr/sbin/mariadbd';
const START_MARIADB = `start-stop-daemon --start --oknodo --background --exec ${MARIADBD} -- --user=mysql`;
const INSTALL_CHROMIUM = 'apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium';
const isRoot = process.getuid?.() === 0;

function run(command, args, options = {}) {
  const result = spawnSync(command, args, { stdio: 'inherit', shell: false, ...options });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

function fail(what, fix) {
  console.error(`npm test: ${what}. Fix it with:\n\n  ${fix}\n`);
  process.exit(1);
}

function mariadbAnswers() {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port: 3306 });
    const done = (up) => {
      socket.destroy();
      resolve(up);
    };
    socket.setTimeout(2_000, () => done(false));
    socket.once('data', () => done(true)); // the server's handshake packet
    socket.once('error', () => done(false));
  });
}

async function ensureMariadb() {
  if (await mariadbAnswers()) return;
  if (!isRoot || !existsSync(MARIADBD)) fail('MariaDB does not answer on 127.0.0.1:3306', START_MARIADB);
  console.log('npm test: starting MariaDB');
  run('sh', ['-c', START_MARIADB]);
  for (let i = 0; i < 60; i++) {
    if (await mariadbAnswers()) return;
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  }
  fail('MariaDB was started but does not answer on 127.0.0.1:3306 after 60 s', START_MARIADB);
}

/** A Debian package a suite needs (`binary` is what it runs), installed here when missing. */
function ensurePackage(binary, install, why) {
  if (existsSync(binary)) return;
  if (!isRoot || !existsSync('/usr/bin/apt-get')) fail(`${binary} is missing (${why})`, `sudo sh -c '${install}'`);
  console.log(`npm test: installing ${binary} (${why})`);
  run('sh', ['-c', install], { env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
  if (!existsSync(binary)) fail(`${binary} is still missing after the install`, install);
}

await ensureMariadb();
// The console test drives Debian's Chromium with playwright-core (no browser download).
ensurePackage(CHROMIUM, INSTALL_CHROMIUM, 'the console test needs it');
ensurePackage(
  '/usr/lib/python3/dist-packages/websockets/__init__.py',
  'apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3-websockets',
  'the client conformance test runs the Python adapter',
);

const env = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' };
run('npx', ['biome', 'ci', '--reporter=summary', '.']);
run('npm', ['run', '--silent', 'deps']);
run('npx', ['tsx', '--conditions=@orbit/source', 'scripts/generate.ts', '--check']);
run('npx', ['redocly', 'lint', 'spec/openapi.yaml'], { env });
run(process.execPath, ['scripts/build.mjs']);
run('npx', ['tsc', '-p', 'tsconfig.json', '--noEmit']);
run('npx', ['vitest', 'run', ...process.argv.slice(2)]);

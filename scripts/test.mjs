#!/usr/bin/env node
// `npm test`: first what the suites need (MariaDB on 127.0.0.1:3306, Debian's Chromium for the
// console test, python3-websockets for the client conformance test's Python adapter), brought up
// here or refused at once with the one command that fixes it (the load-balancer and partition
// tests are in `npm run test:cluster`); then every task of turbo.json through turbo:
// format and lint (Biome), the layering rules (.dependency-cruiser.cjs), generate --check
// (generated/, the AsyncAPI document and the migrations match spec/ and the tables), the OpenAPI
// lint, the build of every package (tsc -b), the type-check of the whole tree, and the vitest
// suites of each workspace, of scripts/ and of consumer/ (the packed packages). turbo replays a
// task whose declared inputs did not change from its local cache (.turbo/cache); README.md, "The
// test cache", says what each task's inputs are and why. Extra arguments go to `turbo run`
// (`npm test -- --force` runs every task again; .ci/run turns the cache off).
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { connect } from 'node:net';
import { fileURLToPath } from 'node:url';
import { stripVTControlCharacters } from 'node:util';

const CHROMIUM = '/usr/bin/chromium';
const MARIADBD = '/usr/sbin/mariadbd';
const START_MARIADB = `start-stop-daemon --start --oknodo --background --exec ${MARIADBD} -- --user=mysql`;
const INSTALL_CHROMIUM = 'apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium';
const PYTHON_WEBSOCKETS = '/usr/lib/python3/dist-packages/websockets/__init__.py';
const INSTALL_PYTHON_WEBSOCKETS =
  'apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3-websockets';
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
ensurePackage(PYTHON_WEBSOCKETS, INSTALL_PYTHON_WEBSOCKETS, 'the client conformance test runs the Python adapter');

/** The first line with a version number that `command` prints, or `missing` (for the test tasks' hash). */
function versionOf(command, args) {
  const result = spawnSync(command, args, { encoding: 'utf8' });
  return (
    `${result.stdout ?? ''}${result.stderr ?? ''}`
      .split('\n')
      .find((line) => /\d+\.\d+/.test(line))
      ?.trim() ?? 'missing'
  );
}

/** The server version MariaDB announces in its handshake packet (after the 4-byte header and the protocol byte). */
function mariadbVersion() {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port: 3306 });
    socket.setTimeout(2_000, () => socket.destroy());
    socket.once('data', (packet) => {
      socket.destroy();
      resolve(packet.subarray(5, packet.indexOf(0, 5)).toString('latin1'));
    });
    socket.once('close', () => resolve('unknown'));
  });
}

// The real parts the test tasks exercise but turbo cannot see as files: their versions go into
// the hash of every test task (turbo.json declares ORBIT_* for them), so that a new Node, MariaDB,
// Chromium or python3-websockets runs the suites again instead of replaying a result they never saw.
const tools = [
  `node ${process.version}`,
  `mariadb ${await mariadbVersion()}`,
  versionOf(CHROMIUM, ['--version']),
  `python3-websockets ${versionOf('python3', ['-c', 'import websockets; print(websockets.__version__)'])}`,
];

const env = {
  ...process.env,
  ORBIT_TEST_TOOLS: tools.join('; '),
  REDOCLY_TELEMETRY: 'off',
  REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true',
  TURBO_TELEMETRY_DISABLED: '1',
};
const TASKS = ['lint', 'deps', 'generate:check', 'lint:openapi', 'build', 'typecheck', 'test', 'test:scripts', 'test:consumer'];
// One task at a time: the machines here have two cores, and each vitest task already runs two
// files at once. `--continue=dependencies-successful`: a failing task does not stop the others,
// so that one run reports every failure, as a single vitest run did.
const turboArgs = ['run', ...TASKS, '--concurrency=1', '--continue=dependencies-successful', ...process.argv.slice(2)];
const child = spawn(process.execPath, [fileURLToPath(new URL('../node_modules/turbo/bin/turbo', import.meta.url)), ...turboArgs], {
  env,
  stdio: ['ignore', 'pipe', 'inherit'],
});

// The tasks' own closing lines (`tests: N passed, N failed`, replayed too on a cache hit) are
// added up into one closing line for the whole run, which CI systems that do not know turbo read.
let passed = 0;
let failed = 0;
let skipped = 0;
let pending = '';
child.stdout.setEncoding('utf8');
child.stdout.on('data', (chunk) => {
  process.stdout.write(chunk);
  const lines = (pending + chunk).split('\n');
  pending = lines.pop() ?? '';
  for (const line of lines) {
    const counts = /tests: (\d+) passed, (\d+) failed(?:, (\d+) skipped)?\s*$/.exec(stripVTControlCharacters(line));
    if (!counts) continue;
    passed += Number(counts[1]);
    failed += Number(counts[2]);
    skipped += Number(counts[3] ?? 0);
  }
});
const status = await new Promise((resolve) => child.on('close', (code) => resolve(code ?? 1)));
process.stdout.write(`\ntests: ${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}\n`);
process.exit(status);

/**
 * The packages as a user gets them. Once per run: build, `npm pack` every publishable workspace,
 * install the tarballs into a fresh project outside the repository (third-party dependencies from
 * the registry, nothing from the workspace), then, from that project only:
 *
 * - every tarball passes publint and arethetypeswrong, ships its LICENSE and README, and no test;
 * - `@orbit/spec` installs and loads alone, without its optional peer `@opentelemetry/api`, which
 *   only its tracing entry point needs;
 * - plain `node` imports `@orbit/client`, whose management client talks to `npx orbit serve`;
 * - a CommonJS program loads it with `require()` on the Node versions that load ES modules that way
 *   by default (what README.md says), and with `await import()` on every version;
 * - `npx orbit serve` answers `/readyz`, and `npx orbit-conformance` passes against it, also on the
 *   configuration that `npx orbit conformance-config` writes;
 * - a strict `tsc` project (NodeNext, strict, skipLibCheck false) compiles a consumer with an
 *   Inbox and the Hono embedding recipe, and both run;
 * - the installed CLIs explain themselves (`--help`, `--version`), refuse a MySQL URL that names a
 *   missing database, and `./node_modules/.bin/orbit serve` (docs/operations.md) ends on SIGTERM;
 * - every snippet of the docs compiles under `exactOptionalPropertyTypes` and runs twice in a row
 *   (the plans are in consumer/doc-snippets.ts);
 * - with the OpenTelemetry SDK the application brings (an in-memory exporter per process), a
 *   publish in one process and its delivery and ACK in another are one linked trace.
 *
 * No process here loads a TypeScript loader: the environment drops the repository's
 * `@orbit/source` condition, and the project has no tsx.
 */
import { spawn, spawnSync, type ChildProcess, type SpawnSyncReturns } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { runningServerConfig, SERVER_ENV } from '../conformance/test/target.ts';
import { freePort, missingMysqlDatabase, mysqlDatabaseExists, runUntil, subscribe } from '@orbit/testing';
import { compiledSnippet, copySnippets, SNIPPET_PLANS, snippetPrograms, type SnippetContext } from './doc-snippets.ts';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const WORKSPACES = ['spec', 'generated', 'server', 'client', 'conformance'] as const;
const KNOWN_FAILING = join(REPO, 'conformance/test/fixtures/orbit-known-failing.txt');

interface Packed {
  readonly name: string;
  readonly filename: string;
  readonly files: readonly { path: string }[];
}

/** The environment of a user's shell: none of the repository's settings, of npm's or of Orbit's. */
function userEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => k !== 'NODE_OPTIONS' && !k.startsWith('ORBIT_') && !k.toLowerCase().startsWith('npm_')),
  );
  return { ...env, ...extra };
}

function sh(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = userEnv(), timeout = 300_000): SpawnSyncReturns<string> {
  const result = spawnSync(command, args, { cwd, env, encoding: 'utf8', timeout, maxBuffer: 64 * 1024 * 1024 });
  if (result.error) throw result.error;
  return result;
}

function ok(result: SpawnSyncReturns<string>, what: string): string {
  if (result.status !== 0) throw new Error(`${what} exited with ${result.status}:\n${result.stdout}\n${result.stderr}`);
  return result.stdout;
}

/** A long-running command in its own process group, so that `npx` and what it started stop together. */
function start(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): { child: ChildProcess; output: () => string } {
  const child = spawn(command, args, { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
  return { child, output: () => output };
}

async function stop(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  process.kill(-child.pid, 'SIGTERM');
  const timer = setTimeout(() => child.pid !== undefined && process.kill(-child.pid, 'SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

async function waitFor(url: string, child: { child: ChildProcess; output: () => string }, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.child.exitCode !== null) throw new Error(`exited with ${child.child.exitCode} before ${url} answered:\n${child.output()}`);
    if (
      await fetch(url).then(
        (r) => r.status === 200,
        () => false,
      )
    )
      return;
    if (Date.now() > deadline) throw new Error(`${url} did not answer 200 within ${timeoutMs} ms:\n${child.output()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const lockedVersion = (name: string): string =>
  (JSON.parse(readFileSync(join(REPO, 'package-lock.json'), 'utf8')).packages[`node_modules/${name}`] as { version: string }).version;

describe('the published packages, installed into a fresh project', () => {
  let dir: string;
  let project: string;
  let packed: Packed[];
  let server: { child: ChildProcess; output: () => string } | undefined;
  let recipe: { child: ChildProcess; output: () => string } | undefined;
  let orbitUrl: string;
  let database: string;
  let boot: { token: string; queue_ids: Record<string, string> };

  const npx = (args: string[], env = userEnv()) => sh('npx', ['--no-install', ...args], project, env);

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'orbit-consumer-'));
    ok(sh(process.execPath, ['scripts/build.mjs', '--clean'], REPO), 'npm run build -- --clean');
    const packs = join(dir, 'packs');
    mkdirSync(packs);
    packed = JSON.parse(
      ok(sh('npm', ['pack', '--json', '--pack-destination', packs, ...WORKSPACES.flatMap((w) => ['--workspace', w])], REPO), 'npm pack'),
    );
    const tarball = (name: string) => `file:${join(packs, packed.find((p) => p.name === name)!.filename)}`;

    project = join(dir, 'project');
    mkdirSync(project);
    const orbit = Object.fromEntries(WORKSPACES.map((w) => [`@orbit/${w}`, tarball(`@orbit/${w}`)]));
    writeFileSync(
      join(project, 'package.json'),
      JSON.stringify({
        name: 'orbit-consumer',
        private: true,
        type: 'module',
        dependencies: {
          ...orbit,
          // The client's optional peers and the types a TypeScript user adds.
          'better-sqlite3': `^${lockedVersion('better-sqlite3')}`,
          '@types/better-sqlite3': `^${lockedVersion('@types/better-sqlite3')}`,
          '@types/node': `^${lockedVersion('@types/node').split('.')[0]}.0.0`,
          // The OpenTelemetry SDK an application brings (docs/sdk.md, Tracing).
          '@opentelemetry/sdk-trace-base': lockedVersion('@opentelemetry/sdk-trace-base'),
          '@opentelemetry/context-async-hooks': lockedVersion('@opentelemetry/context-async-hooks'),
        },
        // Every @orbit/* dependency of a package is the tarball, never a registry package.
        overrides: orbit,
      }),
    );
    for (const file of ['plain.mjs', 'required.cjs', 'typed.ts', 'traced.mjs', 'tsconfig.json', 'tsconfig.recipe.json'])
      copyFileSync(join(REPO, 'consumer/fixture', file), join(project, file));
    copyFileSync(join(REPO, 'server/examples/embed-in-hono.ts'), join(project, 'embed-in-hono.ts'));
    ok(sh('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', '--ignore-scripts'], project), 'npm install');
    // better-sqlite3's install script compiles SQLite (minutes on two cores). The repository's
    // `npm ci` already built the same version for the same Node: reuse that addon; any other
    // version is built here.
    const addon = 'node_modules/better-sqlite3/build/Release';
    const installed = JSON.parse(readFileSync(join(project, 'node_modules/better-sqlite3/package.json'), 'utf8')).version;
    if (installed === lockedVersion('better-sqlite3') && existsSync(join(REPO, addon)))
      cpSync(join(REPO, addon), join(project, addon), { recursive: true });
    else ok(sh('npm', ['rebuild', 'better-sqlite3'], project, userEnv(), 600_000), 'npm rebuild better-sqlite3');

    const port = await freePort();
    orbitUrl = `http://127.0.0.1:${port}`;
    database = `sqlite:${join(dir, 'orbit.db')}`;
    server = start(
      'npx',
      ['--no-install', 'orbit', 'serve', '--listen', `127.0.0.1:${port}`, '--database', database],
      project,
      userEnv(SERVER_ENV),
    );
    await waitFor(`${orbitUrl}/readyz`, server);
    const bootstrap = npx([
      'orbit',
      'bootstrap',
      '--namespace',
      'consumer',
      '--application',
      'consumer-app',
      '--queue',
      'consumer-queue',
      '--event-access',
      '--publish-access',
      '--json',
      '--database',
      database,
    ]);
    boot = JSON.parse(ok(bootstrap, 'orbit bootstrap'));
  }, 600_000);

  afterAll(async () => {
    await stop(recipe?.child);
    await stop(server?.child);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('packs every publishable workspace with its LICENSE and README, without tests or build state', () => {
    expect(packed.map((p) => p.name).sort()).toEqual(WORKSPACES.map((w) => `@orbit/${w}`).sort());
    const license = readFileSync(join(REPO, 'LICENSE'), 'utf8');
    for (const pack of packed) {
      const files = pack.files.map((f) => f.path);
      expect(files, pack.name).toEqual(expect.arrayContaining(['LICENSE', 'README.md', 'package.json']));
      expect(
        files.filter((f) => /(^|\/)(test|tests|fixtures)\/|\.test\.ts$|\.tsbuildinfo$|tsconfig/.test(f)),
        pack.name,
      ).toEqual([]);
      const dir = pack.name.replace('@orbit/', '');
      expect(readFileSync(join(REPO, dir, 'LICENSE'), 'utf8'), `${dir}/LICENSE`).toBe(license);
      const manifest = JSON.parse(readFileSync(join(REPO, dir, 'package.json'), 'utf8'));
      expect(manifest.private, pack.name).toBeUndefined();
      expect(manifest.license, pack.name).toBe('Apache-2.0');
    }
  });

  it('passes publint (strict) and arethetypeswrong on every tarball', () => {
    for (const pack of packed) {
      const tarball = join(dir, 'packs', pack.filename);
      const publint = sh(process.execPath, [join(REPO, 'node_modules/publint/src/cli.js'), 'run', '--strict', tarball], REPO);
      expect(publint.status, `publint ${pack.name}:\n${publint.stdout}${publint.stderr}`).toBe(0);
      // attw checks how JavaScript and its types resolve; a YAML document is neither.
      const manifest = JSON.parse(readFileSync(join(REPO, pack.name.replace('@orbit/', ''), 'package.json'), 'utf8'));
      const documents = Object.keys(manifest.exports).filter((entry) => entry.endsWith('.yaml'));
      const exclude = documents.length > 0 ? ['--exclude-entrypoints', ...documents] : [];
      const attw = sh(
        process.execPath,
        [join(REPO, 'node_modules/@arethetypeswrong/cli/dist/index.js'), '--profile', 'esm-only', '--format', 'ascii', tarball, ...exclude],
        REPO,
      );
      expect(attw.status, `attw ${pack.name}:\n${attw.stdout}${attw.stderr}`).toBe(0);
    }
  });

  it('installed the @orbit packages from the tarballs only, and no TypeScript loader', () => {
    const lock = JSON.parse(readFileSync(join(project, 'package-lock.json'), 'utf8')).packages as Record<string, { resolved?: string }>;
    const orbitEntries = Object.entries(lock).filter(([path]) => /node_modules\/@orbit\//.test(path));
    expect(orbitEntries.map(([path]) => path).sort()).toEqual(WORKSPACES.map((w) => `node_modules/@orbit/${w}`).sort());
    for (const [path, entry] of orbitEntries) expect(entry.resolved, path).toMatch(/^file:/);
    expect(existsSync(join(project, 'node_modules/tsx')), 'tsx installed').toBe(false);
  });

  it('installs @orbit/spec alone, without @opentelemetry/api, and loads every entry point but tracing', () => {
    const alone = join(dir, 'spec-alone');
    mkdirSync(alone);
    const spec = packed.find((p) => p.name === '@orbit/spec')!;
    writeFileSync(
      join(alone, 'package.json'),
      JSON.stringify({
        name: 'spec-alone',
        private: true,
        type: 'module',
        dependencies: { '@orbit/spec': `file:${join(dir, 'packs', spec.filename)}` },
      }),
    );
    ok(sh('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', '--ignore-scripts'], alone), 'npm install @orbit/spec');
    expect(existsSync(join(alone, 'node_modules/@opentelemetry/api')), '@opentelemetry/api installed').toBe(false);
    const program = [
      "const loaded = await Promise.all(['codec', 'errors', 'protocol'].map((entry) => import(`@orbit/spec/${entry}`)));",
      "const tracing = await import('@orbit/spec/tracing').then(() => 'loaded', (error) => error.message);",
      'console.log(JSON.stringify({ loaded: loaded.length, tracing }));',
    ].join('\n');
    const out = JSON.parse(ok(sh(process.execPath, ['--input-type=module', '-e', program], alone), 'node (spec alone)'));
    expect(out.loaded).toBe(3);
    expect(existsSync(join(alone, 'node_modules/@orbit/spec/dist/tracing.js')), 'dist/tracing.js').toBe(true);
    expect(out.tracing).toMatch(/Cannot find package '@opentelemetry\/api'/);
  });

  it('npx orbit serve answers /readyz and serves its OpenAPI document', async () => {
    const res = await fetch(`${orbitUrl}/readyz`);
    expect(res.status).toBe(200);
    expect(((await res.json()) as { data: unknown }).data).toEqual({ status: 'ready' });
    const document = (await (await fetch(`${orbitUrl}/v1/openapi.json`)).json()) as { openapi: string; servers: { url: string }[] };
    expect(document.openapi).toBe('3.1.0');
    expect(document.servers.map((s) => s.url)).toEqual(['/']);
    // The JSON rendering that @orbit/spec ships is the same document.
    const shipped = JSON.parse(readFileSync(join(project, 'node_modules/@orbit/spec/dist/openapi.json'), 'utf8'));
    expect({ ...shipped, servers: [] }).toEqual({ ...document, servers: [] });
  });

  it('plain node imports @orbit/client, and its management client talks to the server', () => {
    const run = sh(
      process.execPath,
      ['plain.mjs'],
      project,
      userEnv({ ORBIT_URL: orbitUrl, ORBIT_TOKEN: boot.token, ORBIT_QUEUE_ID: boot.queue_ids['consumer-queue']! }),
    );
    const out = JSON.parse(ok(run, 'node plain.mjs'));
    expect(out.health).toEqual({ status: 'ok' });
    expect(out.id).toMatch(/^[0-9a-f]{32}$/);
    expect(out.enabled).toBe(true);
  });

  it('a CommonJS program require()s @orbit/client on Node 20.19+, 22.12+ and 23+, and import()s it on every version', () => {
    const [major, minor] = process.versions.node.split('.').map(Number) as [number, number];
    // The releases that load ES modules with require() by default, without a flag (README.md).
    const requireLoadsEsm = major >= 23 || (major === 22 && minor >= 12) || (major === 20 && minor >= 19);
    const run = sh(
      process.execPath,
      ['required.cjs'],
      project,
      userEnv({ ORBIT_URL: orbitUrl, ORBIT_TOKEN: boot.token, ORBIT_QUEUE_ID: boot.queue_ids['consumer-queue']! }),
    );
    const out = JSON.parse(ok(run, 'node required.cjs'));
    expect({ health: out.health, listed: out.listed }).toEqual({ health: { status: 'ok' }, listed: true });
    if (requireLoadsEsm) expect(out.required).toEqual({ same: true, health: { status: 'ok' }, inbox: 'function' });
    else expect(out).toMatchObject({ required: null, refusal: 'ERR_REQUIRE_ESM' });
  });

  it('a strict tsc project compiles a consumer with an Inbox, and the embedding recipe; the consumer runs', () => {
    for (const config of ['tsconfig.json', 'tsconfig.recipe.json']) {
      const tsc = sh(process.execPath, [join(REPO, 'node_modules/typescript/bin/tsc'), '-p', config], project);
      expect(tsc.status, `tsc -p ${config}:\n${tsc.stdout}${tsc.stderr}`).toBe(0);
    }
    const run = sh(
      process.execPath,
      ['out/typed.js'],
      project,
      userEnv({
        ORBIT_URL: orbitUrl,
        ORBIT_TOKEN: boot.token,
        ORBIT_QUEUE_ID: boot.queue_ids['consumer-queue']!,
        INBOX_PATH: join(dir, 'inbox.db'),
      }),
      60_000,
    );
    const out = JSON.parse(ok(run, 'node out/typed.js'));
    expect(out.acked).toBe(1);
    expect(out.rows).toEqual([{ task_id: out.taskId, result: '{"n":1}' }]);
  });

  it('a publish, its delivery and its ACK in two processes are one trace, read from in-memory exporters', () => {
    const env = userEnv({
      ORBIT_URL: orbitUrl,
      ORBIT_TOKEN: boot.token,
      ORBIT_QUEUE_ID: boot.queue_ids['consumer-queue']!,
      INBOX_DIR: dir,
    });
    const traced = (args: string[]) =>
      JSON.parse(ok(sh(process.execPath, ['traced.mjs', ...args], project, env, 60_000), `node traced.mjs ${args[0]}`));
    type Span = { name: string; traceId: string; spanId: string; parentSpanId: string | null; attributes: Record<string, unknown> };
    const { subscriptionId } = traced(['subscribe']);
    const producer = traced(['publish']) as { event: { id: string; trace_context?: { traceparent: string } }; spans: Span[] };
    const consumer = traced(['consume', subscriptionId, producer.event.id]) as { delivered: typeof producer.event; spans: Span[] };
    const request = producer.spans.find((s) => s.name === 'app.request')!;
    const publish = producer.spans.find((s) => s.name === 'orbit.publish')!;
    expect(publish.parentSpanId).toBe(request.spanId);
    expect(producer.event.trace_context?.traceparent).toBe(`00-${request.traceId}-${publish.spanId}-01`);
    expect(consumer.delivered.trace_context).toEqual(producer.event.trace_context);
    const processSpan = consumer.spans.find((s) => s.name === 'orbit.process' && s.attributes['orbit.event.id'] === producer.event.id)!;
    const ack = consumer.spans.find((s) => s.name === 'orbit.ack' && s.attributes['orbit.event.id'] === producer.event.id)!;
    expect(processSpan).toMatchObject({ traceId: request.traceId, parentSpanId: publish.spanId });
    expect(ack).toMatchObject({ traceId: request.traceId, parentSpanId: processSpan.spanId });
    expect(ack.attributes['orbit.delivery.id']).toBe(processSpan.attributes['orbit.delivery.id']);
  });

  it('npx orbit-conformance passes against npx orbit serve', () => {
    const config = runningServerConfig(orbitUrl, 'npx --no-install orbit', database);
    writeFileSync(join(project, 'conformance.json'), JSON.stringify(config));
    const run = npx(['orbit-conformance', '--config', 'conformance.json', '--known-failing', KNOWN_FAILING]);
    expect(run.status, run.stdout + run.stderr).toBe(0);
    // The default profile, seed: the rules of the normative text; its MAY cases report what they observed.
    expect(run.stdout.trimEnd().split('\n').at(-1)).toMatch(/^\d+ passed, 0 failed, \d+ info$/);
  }, 600_000);

  it('npx orbit conformance-config, run twice, writes a configuration that npx orbit-conformance runs on unedited', () => {
    // The server's settings reach the command the way they reach `orbit serve`: the environment.
    const write = () =>
      npx(
        ['orbit', 'conformance-config', '--database', database, '--url', orbitUrl, '--out', 'orbit-conformance.yaml'],
        userEnv(SERVER_ENV),
      );
    ok(write(), 'orbit conformance-config');
    expect(ok(write(), 'orbit conformance-config, again')).toContain('revoked the 7 of the configuration it replaced');
    // A part that needs every role and the body-limit case; bounded, since the test above runs the whole profile.
    const run = npx([
      'orbit-conformance',
      '--config',
      'orbit-conformance.yaml',
      '--only',
      'envelope.*,subscriptions.*,upgrade.*,json.body-over-limit-rejected',
    ]);
    expect(run.status, run.stdout + run.stderr).toBe(0);
    // No `N skipped`: no case lacked a credential or a feature.
    expect(run.stdout.trimEnd().split('\n').at(-1)).toMatch(/^\d+ passed, 0 failed(, \d+ info)?$/);
  }, 300_000);

  it('the Hono embedding recipe runs: the host keeps its routes and WebSocket, Orbit answers under /orbit', async () => {
    const port = await freePort();
    const origin = `http://127.0.0.1:${port}`;
    recipe = start(process.execPath, ['out/embed-in-hono.js'], project, userEnv({ PORT: String(port), ORBIT_DATABASE_URL: database }));
    await waitFor(`${origin}/orbit/readyz`, recipe);
    expect(await (await fetch(`${origin}/api/hello`)).json()).toEqual({ hello: 'from the host' });
    const missing = await fetch(`${origin}/orbit/v1/nothing`);
    expect(((await missing.json()) as { error: { code: string } }).error.code).toBe('NOT_FOUND');
    const echoed = await new Promise<string>((resolve, reject) => {
      const ws = new WebSocket(`ws://127.0.0.1:${port}/ws`);
      ws.once('open', () => ws.send('hi'));
      ws.once('message', (data) => {
        resolve(String(data));
        ws.close();
      });
      ws.once('error', reject);
    });
    expect(echoed).toBe('echo: hi');
    const orbitUpgrade = await new Promise<number>((resolve) => {
      const ws = new WebSocket(`ws://127.0.0.1:${port}/orbit/v1/events/connect`, 'orbit.events.v1');
      ws.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      ws.once('open', () => resolve(101));
      ws.once('error', () => resolve(-1));
    });
    expect(orbitUpgrade, "Orbit's own upgrade path refuses a request without a token").toBe(401);
  });

  it('the installed CLIs answer --help and --version, and a MySQL typo is an error that creates nothing', async () => {
    const version = (name: string) => JSON.parse(readFileSync(join(project, 'node_modules', name, 'package.json'), 'utf8')).version;
    expect(ok(npx(['orbit', '--version']), 'orbit --version').trim()).toBe(version('@orbit/server'));
    expect(ok(npx(['orbit-conformance', '--version']), 'orbit-conformance --version').trim()).toBe(
      `orbit-conformance ${version('@orbit/conformance')}`,
    );
    for (const command of ['serve', 'migrate', 'bootstrap', 'conformance-config'])
      expect(ok(npx(['orbit', command, '--help']), `orbit ${command} --help`)).toMatch(new RegExp(`^usage: orbit ${command}\\b`, 'm'));
    expect(ok(npx(['orbit-conformance', '--help']), 'orbit-conformance --help')).toContain('--config');

    const missing = missingMysqlDatabase('orbit_consumer_typo');
    const serve = npx(['orbit', 'serve', '--listen', '127.0.0.1:0', '--database', missing.url]);
    expect(serve.status, serve.stderr).toBe(1);
    expect(serve.stderr).toContain(`orbit: --database: the MySQL database "${missing.name}" does not exist on 127.0.0.1:3306`);
    expect(await mysqlDatabaseExists(missing.name)).toBe(false);
  });

  it('./node_modules/.bin/orbit serve, the documented production start, ends on SIGTERM and closes its port', async () => {
    const port = await freePort();
    const node = start(
      join(project, 'node_modules/.bin/orbit'),
      ['serve', '--listen', `127.0.0.1:${port}`, '--database', `sqlite:${join(dir, 'sigterm.db')}`],
      project,
      userEnv(),
    );
    await waitFor(`http://127.0.0.1:${port}/readyz`, node);
    const exited = new Promise<number | null>((resolve) => node.child.once('exit', (code) => resolve(code)));
    // The signal goes to the server's own PID, as a process manager sends it; not to a group.
    node.child.kill('SIGTERM');
    expect(await exited, node.output()).toBe(0);
    const refused = await fetch(`http://127.0.0.1:${port}/healthz`).then(
      () => false,
      () => true,
    );
    expect(refused, 'the port still answers after the server exited').toBe(true);
  });

  // --- The code of the docs, run twice from the project (consumer/doc-snippets.ts) -------------
  describe('every snippet of the docs', () => {
    it('has a plan, and every plan a snippet', () => {
      expect(snippetPrograms().filter((file) => !SNIPPET_PLANS[file])).toEqual([]);
      expect(Object.keys(SNIPPET_PLANS).filter((file) => !snippetPrograms().includes(file))).toEqual([]);
    });

    it('ships in the packages where the docs cite it: the client examples and snippets, the embedding recipe', () => {
      const files = (name: string) => packed.find((p) => p.name === name)!.files.map((f) => f.path);
      const clientSnippets = snippetPrograms().filter((file) => file.startsWith('client/examples/'));
      expect(files('@orbit/client')).toEqual(
        expect.arrayContaining([
          'examples/manage-subscriptions.ts',
          'examples/consume-results.ts',
          ...clientSnippets.map((f) => f.slice('client/'.length)),
        ]),
      );
      expect(files('@orbit/server')).toContain('examples/embed-in-hono.ts');
    });

    it('compiles under a strict tsconfig with exactOptionalPropertyTypes', () => {
      copySnippets(REPO, project);
      const tsc = sh(process.execPath, [join(REPO, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.snippets.json'], project);
      expect(tsc.status, `tsc -p tsconfig.snippets.json:\n${tsc.stdout}${tsc.stderr}`).toBe(0);
    });

    it.each(snippetPrograms())(
      '%s runs twice in a row',
      async (file) => {
        const plan = SNIPPET_PLANS[file]!;
        const snippetDir = join(dir, 'snippets', file.replaceAll('/', '_'));
        mkdirSync(snippetDir, { recursive: true });
        const queueId = boot.queue_ids['consumer-queue']!;
        const ctx: SnippetContext = {
          url: orbitUrl,
          token: boot.token,
          queueId,
          project,
          database,
          dir: snippetDir,
          subscription: async () => (await subscribe(orbitUrl, boot.token, queueId)).id as string,
          port: freePort,
        };
        const env = userEnv(await plan.env(ctx));
        let first = '';
        for (const run of [1, 2] as const) {
          await plan.before?.(ctx);
          const during = plan.during && setInterval(() => void plan.during!(ctx).catch(() => {}), 300);
          const result = await runUntil(process.execPath, [join(project, compiledSnippet(file))], {
            cwd: snippetDir,
            env,
            ...(plan.until ? { until: plan.until } : {}),
            timeoutMs: plan.timeoutMs ?? 60_000,
          }).finally(() => clearInterval(during));
          expect(result.code, `run ${run} of ${file}:\n${result.stdout}\n${result.stderr}`).toBe(0);
          plan.check(result.stdout, run, first);
          first ||= result.stdout;
        }
      },
      600_000,
    );
  });
});

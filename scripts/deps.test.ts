/**
 * Every layering rule of .dependency-cruiser.cjs can fail. `npm run deps` is run, with the same
 * config and the same folders, over a small tree of fixture files that breaks each rule once
 * (and makes a few of the imports each rule allows); the test asserts that exactly the breaking
 * imports are reported, each under its rule. A rule whose pattern stopped matching (a renamed
 * folder, an npm package resolved somewhere the pattern does not look, a folder dropped from the
 * script) would leave its violation unreported here.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { IConfiguration, ICruiseResult } from 'dependency-cruiser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const CONFIG = join(REPO, '.dependency-cruiser.cjs');
const DEPCRUISE = join(REPO, 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs');
const config: IConfiguration = createRequire(import.meta.url)(CONFIG);

/** The arguments of `npm run deps` after the config: the folders it cruises. */
function cruisedFolders(): string[] {
  const script: string = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')).scripts.deps;
  const [command, flag, file, ...folders] = script.split(/\s+/);
  expect([command, flag, file]).toEqual(['depcruise', '--config', '.dependency-cruiser.cjs']);
  return folders;
}

/** The fixture tree: path → source. Each file says which rule it breaks, or that it breaks none. */
const FILES: Record<string, string> = {
  'tsconfig.json': JSON.stringify({
    compilerOptions: { module: 'ESNext', moduleResolution: 'Bundler', allowImportingTsExtensions: true, noEmit: true },
  }),
  // Stand-ins for the npm packages the rules name, so that they resolve into node_modules as in the repository.
  'node_modules/ws/package.json': JSON.stringify({ name: 'ws', main: 'index.js' }),
  'node_modules/ws/index.js': 'module.exports = {};\n',
  'node_modules/hono/package.json': JSON.stringify({ name: 'hono', exports: { '.': { import: './dist/index.js' } } }),
  'node_modules/hono/dist/index.js': 'export const Hono = class {};\n',
  'node_modules/@opentelemetry/api/package.json': JSON.stringify({ name: '@opentelemetry/api', main: 'index.js' }),
  'node_modules/@opentelemetry/api/index.js': 'module.exports = {};\n',
  // A workspace package, linked into node_modules as npm does, whose exports point at its sources.
  'server/package.json': JSON.stringify({
    name: '@orbit/server',
    type: 'module',
    exports: { '.': { '@orbit/source': './src/index.ts', default: './dist/index.js' } },
  }),

  'spec/errors.ts': 'export const CODE = 1;\n',
  'spec/up.ts': "import '../generated/index.ts'; // breaks spec-is-the-ground-floor\n",
  'spec/tracing.ts': "import '@opentelemetry/api';\nexport const TRACED = 1;\n",
  'spec/codec.ts':
    "import '@opentelemetry/api';\nimport { TRACED } from './tracing.ts'; // breaks spec-opentelemetry-only-in-tracing twice\n" +
    'export const CODEC = TRACED;\n',
  'generated/index.ts': "import { CODE } from '../spec/errors.ts';\nexport const VALIDATED = CODE;\n",
  'generated/up.ts': "import '../client/src/index.ts'; // breaks generated-imports-only-spec\n",

  'server/src/index.ts': "export { VALIDATED } from '../../generated/index.ts';\n",
  'server/src/domain/rules.ts': "import { CODE } from '../../../spec/errors.ts';\nexport const decide = () => CODE;\n",
  'server/src/domain/io.ts':
    "import { connect } from 'node:net';\nimport 'ws';\nexport const dial = connect; // breaks domain-no-io twice\n",
  'server/src/domain/up.ts':
    "import type { Store } from '../store/store.ts'; // breaks domain-no-outer-layers (type-only counts)\nexport type S = Store;\n",
  'server/src/store/store.ts': "import { decide } from '../domain/rules.ts';\nexport interface Store { decide: typeof decide }\n",
  'server/src/store/claims.ts': "import type { Store } from './store.ts';\nexport type Claims = Store;\n",
  'server/src/store/up.ts': "import '../engine/turn.ts'; // breaks store-not-engine\n",
  'server/src/engine/turn.ts':
    "import { decide } from '../domain/rules.ts';\nimport type { Claims } from '../store/claims.ts';\n" +
    'export const turn = (claims: Claims) => [decide, claims];\n',
  'server/src/engine/up.ts': "import '../events/gateway.ts'; // breaks engine-calls-nothing-above\n",
  'server/src/wire/json.ts': "import { decide } from '../domain/rules.ts';\nexport const render = decide;\n",
  'server/src/wire/up.ts': "import 'hono';\nimport '../events/gateway.ts'; // breaks wire-no-transport twice\n",
  'server/src/http/app.ts':
    "import { Hono } from 'hono';\nimport type { Store } from '../store/store.ts';\nimport { render } from '../wire/json.ts';\n" +
    'export const app = (store: Store) => [new Hono(), render, store];\n',
  'server/src/http/up.ts': "import '../events/gateway.ts'; // breaks http-not-events\n",
  'server/src/events/gateway.ts':
    "import 'ws';\nimport type { Store } from '../store/store.ts';\nimport { render } from '../wire/json.ts';\n" +
    "import type { Claims } from '../store/claims.ts'; // breaks transport-store-facade-only\n" +
    "import { turn } from '../engine/turn.ts';\n" +
    'export const gateway = (store: Store, claims: Claims) => [render, store, claims, turn];\n',
  'server/src/events/up.ts': "import '../http/app.ts'; // breaks events-not-http\n",

  'client/src/index.ts':
    "import '../../generated/index.ts';\nimport '@orbit/server'; // breaks client-not-server, through the workspace link\n",
  'conformance/src/index.ts': "import '../../spec/errors.ts';\nimport '../../server/src/index.ts'; // breaks conformance-not-server\n",
  'testing/src/index.ts': "import '@orbit/server';\n",
  'bench/a.ts': "import { b } from './b.ts'; // breaks no-circular with b.ts (one report per cycle)\nexport const a = () => b;\n",
  'bench/b.ts': "import { a } from './a.ts';\nexport const b = () => a;\n",
  'scripts/generate.ts': "import '../spec/errors.ts';\nimport '../generated/index.ts';\n",
  'consumer/consumer.test.ts': "import '../client/src/index.ts';\n",
};

const EXPECTED = [
  'domain-no-io: server/src/domain/io.ts → net',
  'domain-no-io: server/src/domain/io.ts → node_modules/ws/index.js',
  'domain-no-outer-layers: server/src/domain/up.ts → server/src/store/store.ts',
  'spec-is-the-ground-floor: spec/up.ts → generated/index.ts',
  'spec-opentelemetry-only-in-tracing: spec/codec.ts → node_modules/@opentelemetry/api/index.js',
  'spec-opentelemetry-only-in-tracing: spec/codec.ts → spec/tracing.ts',
  'generated-imports-only-spec: generated/up.ts → client/src/index.ts',
  'client-not-server: client/src/index.ts → server/src/index.ts',
  'conformance-not-server: conformance/src/index.ts → server/src/index.ts',
  'http-not-events: server/src/http/up.ts → server/src/events/gateway.ts',
  'events-not-http: server/src/events/up.ts → server/src/http/app.ts',
  'transport-store-facade-only: server/src/events/gateway.ts → server/src/store/claims.ts',
  'wire-no-transport: server/src/wire/up.ts → node_modules/hono/dist/index.js',
  'wire-no-transport: server/src/wire/up.ts → server/src/events/gateway.ts',
  'no-circular: bench/a.ts → bench/b.ts',
  'engine-calls-nothing-above: server/src/engine/up.ts → server/src/events/gateway.ts',
  'store-not-engine: server/src/store/up.ts → server/src/engine/turn.ts',
];

let root: string;
let result: ICruiseResult;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'orbit-deps-'));
  for (const [path, source] of Object.entries(FILES)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), source);
  }
  mkdirSync(join(root, 'node_modules/@orbit'));
  symlinkSync('../../server', join(root, 'node_modules/@orbit/server'), 'dir');
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [DEPCRUISE, '--config', CONFIG, '--output-type', 'json', ...cruisedFolders()],
    { cwd: root, maxBuffer: 64 * 1024 * 1024 },
  );
  result = JSON.parse(stdout);
}, 60_000);

afterAll(() => {
  if (root) rmSync(root, { recursive: true, force: true });
});

describe('the layering rules', () => {
  it('report exactly the fixture imports that break them, each under its rule', () => {
    const reported = result.summary.violations.map((v) => `${v.rule.name}: ${v.from} → ${v.to}`);
    expect(reported.sort()).toEqual([...EXPECTED].sort());
  });

  it('are each broken by the fixture, so none of them goes untested', () => {
    const names = (config.forbidden ?? []).map((rule) => rule.name);
    expect(new Set(names).size).toBe(names.length);
    expect(new Set(EXPECTED.map((line) => line.split(':')[0]))).toEqual(new Set(names));
  });

  it('resolve the workspaces through their @orbit/source export condition', () => {
    const testing = result.modules.find((m) => m.source === 'testing/src/index.ts');
    expect(testing?.dependencies.map((d) => d.resolved)).toEqual(['server/src/index.ts']);
  });

  it('are all errors, so that `npm run deps` exits non-zero on any of them', () => {
    expect(new Set((config.forbidden ?? []).map((rule) => rule.severity))).toEqual(new Set(['error']));
  });
});

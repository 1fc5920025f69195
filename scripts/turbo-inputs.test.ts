/**
 * A test task replayed from turbo's cache is only as honest as its declared inputs (turbo.json;
 * README.md, "The test cache"). This test asks turbo itself (`turbo run --dry=json`) which files
 * each test task hashes, follows every test file of the task's folder through what it imports,
 * spawns by path or reads by `new URL(..., import.meta.url)` (workspace packages through their
 * `@orbit/source` export, as the tests resolve them), and fails on any file reached that the task
 * does not hash: a conformance test that starts to run the SDK, a client test that reads a new
 * folder. Paths built in other ways (`join(REPO, ...)`) are not followed, so this is a floor
 * under the declarations, which stay broader than what it finds.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const TURBO = join(REPO, 'node_modules/turbo/bin/turbo');

interface DryTask {
  taskId: string;
  task: string;
  directory: string;
  command: string;
  inputs: Record<string, string>;
}

const TEST_TASKS = ['test', 'test:scripts', 'test:consumer'];

/** Each test task of `npm test` that runs a command: its folder and the repo-relative files it hashes. */
function testTasks(): Map<string, { folder: string; inputs: Set<string> }> {
  const out = execFileSync(process.execPath, [TURBO, 'run', ...TEST_TASKS, '--dry=json'], {
    cwd: REPO,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
    env: { ...process.env, TURBO_TELEMETRY_DISABLED: '1' },
  });
  const tasks = new Map<string, { folder: string; inputs: Set<string> }>();
  for (const task of (JSON.parse(out) as { tasks: DryTask[] }).tasks) {
    if (task.command === '<NONEXISTENT>' || !TEST_TASKS.includes(task.task)) continue;
    const base = join(REPO, task.directory);
    const inputs = new Set(Object.keys(task.inputs).map((file) => relative(REPO, resolve(base, file))));
    // The root's test tasks run one folder each, named by their script (`test-folder.mjs FOLDER`).
    const folder = task.directory === '' || task.directory === '.' ? (task.command.split(/\s+/).at(-1) ?? '') : task.directory;
    tasks.set(task.taskId, { folder, inputs });
  }
  return tasks;
}

/** The files under `dir` (repo-relative), without the folders that are never sources. */
function filesUnder(dir: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(join(REPO, dir), { withFileTypes: true })) {
    if (['node_modules', 'dist', '.turbo'].includes(entry.name)) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) found.push(...filesUnder(path));
    else found.push(path);
  }
  return found;
}

/** Where `@orbit/NAME[/SUB]` resolves in the sources: the `@orbit/source` condition of the package's export. */
function workspaceFile(specifier: string): string | undefined {
  const [, name, sub] = /^@orbit\/([^/]+)(\/.*)?$/.exec(specifier) ?? [];
  if (!name || !existsSync(join(REPO, name, 'package.json'))) return undefined;
  const exports = JSON.parse(readFileSync(join(REPO, name, 'package.json'), 'utf8')).exports ?? {};
  const entry = exports[sub ? `.${sub}` : '.'];
  const target = typeof entry === 'string' ? entry : (entry?.['@orbit/source'] ?? entry?.default);
  return typeof target === 'string' ? join(name, target) : undefined;
}

const REFERENCES = [
  /\bfrom\s+'([^']+)'/g,
  /\bimport\(\s*'([^']+)'\s*\)/g,
  /\bimport\s+'([^']+)'/g,
  /new URL\(\s*'([^']+)',\s*import\.meta\.url\s*\)/g,
];

/** The repo-relative files that `file` imports or names by a path relative to itself (a folder: all its files). */
function references(file: string): string[] {
  const text = readFileSync(join(REPO, file), 'utf8');
  const found: string[] = [];
  for (const pattern of REFERENCES) {
    for (const [, specifier] of text.matchAll(pattern)) {
      if (!specifier) continue;
      const target = specifier.startsWith('.') ? relative(REPO, resolve(REPO, dirname(file), specifier)) : workspaceFile(specifier);
      // A launcher's fallback to `dist/` (outside the repository) is a build output, never an input.
      if (!target || target.startsWith('..') || /^[^/]+\/dist\//.test(target) || !existsSync(join(REPO, target))) continue;
      found.push(...(statSync(join(REPO, target)).isDirectory() ? filesUnder(target) : [target]));
    }
  }
  return found;
}

/**
 * The test helper that names the SDK's example consumer by path, and the only functions that run
 * it. A folder none of whose files calls them never runs the SDK through it (conformance/: the
 * suite checks a server over the network), so the check does not follow that path for it; the
 * last test below holds the claim.
 */
const EXAMPLE_CONSUMER_HELPER = 'testing/src/consumers.ts';
const RUNS_EXAMPLE_CONSUMER = /\b(spawnExampleConsumer|handledByExample|publishUntilAnswered)\b/;
const runsExampleConsumer = (folder: string): boolean =>
  filesUnder(folder).some((file) => file.endsWith('.ts') && RUNS_EXAMPLE_CONSUMER.test(readFileSync(join(REPO, file), 'utf8')));

/** Every file reached from the test files of `folder` through `references`, following modules only. */
function reached(folder: string): Set<string> {
  const seen = new Set<string>();
  const queue = testFilesOf(folder);
  const followHelper = runsExampleConsumer(folder);
  while (queue.length > 0) {
    const file = queue.pop() as string;
    if (seen.has(file)) continue;
    seen.add(file);
    if (file === EXAMPLE_CONSUMER_HELPER && !followHelper) continue;
    if (/\.(ts|mts|mjs|js)$/.test(file) && !file.endsWith('.d.ts')) queue.push(...references(file));
  }
  return seen;
}

/** Suites with configs of their own (vitest.galera.config.ts, vitest.cluster.config.ts), not run by `npm test`. */
const OWN_CONFIG = ['server/test/galera/', 'server/test/cluster/', 'server/test/haproxy.test.ts', 'server/test/partition.test.ts'];

/** The test files of a folder that `npm test` runs (vitest.config.ts leaves the suites above out). */
function testFilesOf(folder: string): string[] {
  return filesUnder(folder).filter((file) => file.endsWith('.test.ts') && !OWN_CONFIG.some((path) => file.startsWith(path)));
}

const tasks = testTasks();

describe('turbo.json test inputs', () => {
  it('has one test task for every top-level folder with test files', () => {
    const withTests = readdirSync(REPO, { withFileTypes: true })
      .filter((entry) => entry.isDirectory() && !['node_modules', '.git', '.turbo'].includes(entry.name))
      .map((entry) => entry.name)
      .filter((folder) => testFilesOf(folder).length > 0);
    expect([...tasks.values()].map((task) => task.folder).sort()).toEqual(withTests.sort());
  });

  for (const [taskId, { folder, inputs }] of tasks) {
    it(`${taskId} hashes every file that its tests reach`, () => {
      expect(testFilesOf(folder).length).toBeGreaterThan(0);
      const missing = [...reached(folder)].filter((file) => !inputs.has(file)).sort();
      expect(missing).toEqual([]);
    });
  }

  it('finds what a narrower task would miss (the check can fail)', () => {
    const spec = tasks.get('@orbit/spec#test');
    expect(spec).toBeDefined();
    const missing = [...reached('client')].filter((file) => !spec?.inputs.has(file));
    expect(missing).toEqual(expect.arrayContaining(['client/src/index.ts', 'docs/sdk.md', 'testing/src/index.ts']));
  });

  it('follows the example consumer where a folder runs it, and conformance/ runs it nowhere', () => {
    expect(runsExampleConsumer('server')).toBe(true);
    expect(reached('server').has('client/examples/consume-results.ts')).toBe(true);
    expect(runsExampleConsumer('conformance')).toBe(false);
  });
});

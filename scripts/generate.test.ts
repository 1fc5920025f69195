/**
 * scripts/generate.ts: deterministic output, `--check` drift detection, and output that follows the
 * spec. Everything that writes works in a temporary copy; the real generated/ is only read.
 */
import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, readFile, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GENERATED_FILES, HEADER, diffOutput, generate, writeOutput, type GeneratedOutput } from './generate.ts';

const run = promisify(execFile);
const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const realSpec = path.join(repoRoot, 'spec');
const realOut = path.join(repoRoot, 'generated');
const tsx = path.join(repoRoot, 'node_modules', '.bin', 'tsx');
const script = path.join(repoRoot, 'scripts', 'generate.ts');

let work: string;
let specCopy: string;
let outCopy: string;
let fromRealSpec: GeneratedOutput;

/** Runs the CLI as `npm run generate -- ...` would, returning the exit code and the output. */
async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(tsx, [script, ...args], { cwd: repoRoot });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? -1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}

async function copySpec(into: string): Promise<string> {
  const dir = path.join(into, 'spec');
  for (const file of ['events.schema.json', 'openapi.yaml']) await cp(path.join(realSpec, file), path.join(dir, file));
  return dir;
}

beforeAll(async () => {
  work = await mkdtemp(path.join(tmpdir(), 'orbit-generate-'));
  specCopy = await copySpec(work);
  outCopy = path.join(work, 'generated');
  fromRealSpec = await generate(realSpec);
  await writeOutput(outCopy, fromRealSpec);
}, 60_000);

afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true });
});

describe('generate', () => {
  it('is deterministic: a second run yields identical bytes', async () => {
    const again = await generate(realSpec);
    for (const name of GENERATED_FILES) expect(again[name], name).toBe(fromRealSpec[name]);
  }, 60_000);

  it('does not depend on where the spec lives', async () => {
    const fromCopy = await generate(specCopy);
    for (const name of GENERATED_FILES) expect(fromCopy[name], name).toBe(fromRealSpec[name]);
  }, 60_000);

  it('matches the committed generated/ (run `npm run generate` after changing spec/)', async () => {
    expect(await diffOutput(realOut, fromRealSpec)).toEqual([]);
  });

  it('starts every file with the header and contains no timestamp', () => {
    for (const name of GENERATED_FILES) {
      const text = fromRealSpec[name];
      // Markdown carries the same words in an HTML comment, YAML in a # comment.
      const header = name.endsWith('.md')
        ? `<!-- ${HEADER.replace(/^\/\/ /, '')} -->`
        : name.endsWith('.yaml')
          ? HEADER.replace(/^\/\//, '#')
          : HEADER;
      expect(text.startsWith(`${header}\n`), name).toBe(true);
      expect(text.endsWith('\n'), name).toBe(true);
      expect(text, name).not.toContain(new Date().toISOString().slice(0, 10));
    }
  });

  it('emits ESM validators whose ajv runtime comes from the ajv package, without require()', () => {
    const js = fromRealSpec['validators.js'];
    expect(js).not.toContain('require(');
    expect(js).not.toContain('module.exports');
    for (const match of js.matchAll(/^import .* from "([^"]+)";$/gm)) expect(match[1]).toMatch(/^ajv\/dist\/runtime\/\w+\.js$/);
  });

  it('declares one type per $def and one validator per $def, frame direction and component schema', async () => {
    const events = JSON.parse(await readFile(path.join(realSpec, 'events.schema.json'), 'utf8')) as {
      $defs: Record<string, unknown>;
    };
    const dts = fromRealSpec['validators.d.ts'];
    const js = fromRealSpec['validators.js'];
    for (const def of Object.keys(events.$defs)) {
      const typeName = def.charAt(0).toUpperCase() + def.slice(1);
      expect(fromRealSpec['events.ts']).toMatch(new RegExp(`^export (type|interface) ${typeName}\\b`, 'm'));
      expect(dts).toContain(`export declare const validate${typeName}: Validator<${typeName}>;`);
      expect(js).toContain(`export const validate${typeName} = `);
    }
    for (const name of ['ClientFrame', 'ServerFrame', 'HelloFrame', 'CreateSubscriptionRequest', 'SubscriptionResult']) {
      expect(dts).toContain(`export declare const validate${name}:`);
    }
    expect(fromRealSpec['index.ts']).toContain('export * from "./validators.js";');
  });
});

describe('generate --check', () => {
  it('passes on the committed generated/', async () => {
    const result = await cli('--check');
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
  }, 60_000);

  it('passes on an untouched copy and fails, naming the file, after a generated file is edited', async () => {
    expect((await cli('--check', '--spec', specCopy, '--out', outCopy)).code).toBe(0);

    const target = path.join(outCopy, 'validators.d.ts');
    const original = await readFile(target, 'utf8');
    await writeFile(target, `${original}// a hand edit\n`);
    const edited = await cli('--check', '--spec', specCopy, '--out', outCopy);
    expect(edited.code).toBe(1);
    expect(edited.stderr).toContain('validators.d.ts');
    expect(edited.stderr).not.toContain('events.ts');

    await unlink(path.join(outCopy, 'events.ts'));
    const missing = await cli('--check', '--spec', specCopy, '--out', outCopy);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('events.ts');

    const regenerated = await cli('--spec', specCopy, '--out', outCopy);
    expect(regenerated.code).toBe(0);
    expect(await readFile(target, 'utf8')).toBe(original);
    expect((await cli('--check', '--spec', specCopy, '--out', outCopy)).code).toBe(0);
  }, 120_000);

  it('fails on an unknown argument without writing anything', async () => {
    const result = await cli('--frobnicate');
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('unknown argument');
  }, 60_000);
});

describe('a change to the spec changes the output', () => {
  it('events.schema.json: the hello capacity maximum reaches the validators, not the types', async () => {
    const dir = await copySpec(await mkdtemp(path.join(work, 'events-')));
    const file = path.join(dir, 'events.schema.json');
    const schema = JSON.parse(await readFile(file, 'utf8'));
    expect(schema.$defs.HelloFrame.properties.body.properties.capacity.maximum).toBe(32);
    schema.$defs.HelloFrame.properties.body.properties.capacity.maximum = 16;
    await writeFile(file, `${JSON.stringify(schema, null, 2)}\n`);

    const changed = await generate(dir);
    expect(changed['validators.js']).not.toBe(fromRealSpec['validators.js']);
    expect(changed['events.ts']).toBe(fromRealSpec['events.ts']);

    // Load the regenerated validators where the ajv runtime resolves (node_modules/.cache is
    // ignored by git) and check the new limit.
    const cache = path.join(repoRoot, 'node_modules', '.cache');
    await mkdir(cache, { recursive: true });
    const loadDir = await mkdtemp(path.join(cache, 'orbit-generate-test-'));
    try {
      await writeFile(path.join(loadDir, 'validators.js'), changed['validators.js']);
      const loaded = (await import(pathToFileURL(path.join(loadDir, 'validators.js')).href)) as {
        validateHelloFrame: (data: unknown) => boolean;
      };
      const hello = (capacity: number) => ({
        protocol_version: '1',
        type: 'events.hello',
        message_id: 'a'.repeat(32),
        body: { subscription_id: '2'.repeat(32), capacity },
      });
      expect(loaded.validateHelloFrame(hello(16))).toBe(true);
      expect(loaded.validateHelloFrame(hello(17))).toBe(false);
    } finally {
      await rm(loadDir, { recursive: true, force: true });
    }

    await writeOutput(path.join(dir, '..', 'generated'), fromRealSpec);
    const check = await cli('--check', '--spec', dir, '--out', path.join(dir, '..', 'generated'));
    expect(check.code).toBe(1);
    expect(check.stderr).toContain('validators.js');
  }, 120_000);

  it('openapi.yaml: a new optional field reaches the OpenAPI types and the validators', async () => {
    const dir = await copySpec(await mkdtemp(path.join(work, 'openapi-')));
    const file = path.join(dir, 'openapi.yaml');
    const text = await readFile(file, 'utf8');
    const anchor = '    Health:\n      description: Liveness body.\n      type: object\n      properties:\n';
    expect(text).toContain(anchor);
    await writeFile(file, text.replace(anchor, `${anchor}        version:\n          type: string\n`));

    const changed = await generate(dir);
    expect(changed['openapi.ts']).not.toBe(fromRealSpec['openapi.ts']);
    expect(changed['openapi.ts']).toMatch(/Health: \{[^}]*version\?: string;/);
    expect(changed['validators.js']).not.toBe(fromRealSpec['validators.js']);
    expect(changed['events.ts']).toBe(fromRealSpec['events.ts']);
  }, 60_000);

  it('refuses a spec that drops a $def other code depends on', async () => {
    const dir = await copySpec(await mkdtemp(path.join(work, 'missing-')));
    const file = path.join(dir, 'events.schema.json');
    const schema = JSON.parse(await readFile(file, 'utf8'));
    delete schema.$defs.LeaseSecret;
    await writeFile(file, JSON.stringify(schema));
    await expect(generate(dir)).rejects.toThrow(/LeaseSecret/);
  });
});

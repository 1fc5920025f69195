/**
 * The suite's modules import one another in one direction: no cycle among the files of
 * conformance/src, type-only imports included (a type cycle is still a design cycle), and nothing
 * from server/. The repository-wide dependency rules will cover this too; this test keeps the
 * suite honest on its own.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = dirname(fileURLToPath(import.meta.url));

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return name.endsWith('.ts') && !name.endsWith('.test.ts') ? [path] : [];
  });
}

const IMPORT = /^\s*(?:import|export)\b[^'"]*?from\s+['"]([^'"]+)['"]/gm;

function imports(file: string): string[] {
  return [...readFileSync(file, 'utf8').matchAll(IMPORT)].map((m) => m[1]!);
}

describe('the imports of conformance/src', () => {
  const files = sources(SRC);
  const graph = new Map(
    files.map(
      (f) =>
        [
          f,
          imports(f)
            .filter((s) => s.startsWith('.'))
            .map((s) => resolve(dirname(f), s)),
        ] as const,
    ),
  );

  it('form no cycle', () => {
    const cycles: string[] = [];
    const state = new Map<string, 'visiting' | 'done'>();
    const walk = (file: string, path: string[]): void => {
      if (state.get(file) === 'done') return;
      if (state.get(file) === 'visiting') {
        cycles.push([...path.slice(path.indexOf(file)), file].map((f) => relative(SRC, f)).join(' -> '));
        return;
      }
      state.set(file, 'visiting');
      for (const next of graph.get(file) ?? []) walk(next, [...path, file]);
      state.set(file, 'done');
    };
    for (const file of files) walk(file, []);
    expect(cycles).toEqual([]);
  });

  it('import nothing from server/', () => {
    const offenders = files.filter((f) => imports(f).some((s) => s.includes('server/') || s.startsWith('@orbit/server')));
    expect(offenders.map((f) => relative(SRC, f))).toEqual([]);
  });

  it('resolve every relative import to a file of the suite', () => {
    for (const [file, targets] of graph) for (const t of targets) expect(files, `${relative(SRC, file)} imports ${t}`).toContain(t);
  });
});

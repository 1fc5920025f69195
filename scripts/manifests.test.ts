/**
 * The manifests of the published packages (and of the private testing workspace, whose every
 * module counts as shipped) are honest: every package a shipped module imports is
 * declared (a workspace package at the workspace's exact version, a third-party one with a caret
 * range, a database driver of an Inbox entry as an optional peer), and nothing is declared that no
 * shipped module imports (type-only packages aside). The install in the consumer test cannot show
 * this, because npm hoists what another package brought along.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const WORKSPACES = ['spec', 'generated', 'server', 'client', 'conformance', 'testing'] as const;
/** Packages that only supply types of a declared package's public declarations. */
const TYPES_ONLY = /^@types\//;

interface Manifest {
  name: string;
  version: string;
  private?: boolean;
  files?: string[];
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
}

const manifest = (dir: string): Manifest => JSON.parse(readFileSync(join(REPO, dir, 'package.json'), 'utf8'));

/**
 * The TypeScript and JavaScript modules a package ships (its `files`, tests and test helpers
 * excluded); a private workspace is never packed, so all of its `src/`.
 */
function shippedModules(dir: string): string[] {
  const pkg = manifest(dir);
  const files = pkg.private ? ['src'] : (pkg.files ?? []);
  const excluded = files.filter((f) => f.startsWith('!')).map((f) => f.slice(1));
  const isExcluded = (path: string) =>
    excluded.some((pattern) =>
      pattern.includes('*') ? new RegExp(`^${pattern.replace(/\*\*\/\*/g, '.*')}$`).test(path) : path === pattern,
    );
  const out: string[] = [];
  const walk = (relative: string): void => {
    const absolute = join(REPO, dir, relative);
    if (statSync(absolute).isDirectory()) {
      for (const entry of readdirSync(absolute)) walk(relative === '' ? entry : `${relative}/${entry}`);
    } else if (/\.(ts|js|mjs)$/.test(relative) && !relative.endsWith('.d.ts') && !isExcluded(relative)) out.push(relative);
  };
  for (const entry of files.filter((f) => !f.startsWith('!') && f !== 'dist')) {
    try {
      walk(entry);
    } catch {
      // a listed file that is not there (README.md of a package without code) holds no imports
    }
  }
  return out;
}

/** The packages imported (statically or dynamically, values or types) by the modules. */
function importedPackages(dir: string, modules: string[]): Set<string> {
  const found = new Set<string>();
  for (const module of modules) {
    const text = readFileSync(join(REPO, dir, module), 'utf8');
    for (const match of text.matchAll(/(?:from\s+|import\s*\(\s*|import\s+)['"]([^'".][^'"]*)['"]/g)) {
      const specifier = match[1]!;
      if (specifier.startsWith('node:') || builtinModules.includes(specifier)) continue;
      const parts = specifier.split('/');
      found.add(specifier.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0]!);
    }
  }
  return found;
}

describe.each(WORKSPACES)('the manifest of @orbit/%s', (dir) => {
  const pkg = manifest(dir);
  const modules = shippedModules(dir);
  const imported = importedPackages(dir, modules);
  const declared = { ...(pkg.dependencies ?? {}), ...(pkg.peerDependencies ?? {}) };

  it('MUST declare every package its shipped modules import', () => {
    // The bin launchers import tsx only inside the repository (a branch an installed package never takes).
    const needed = [...imported].filter((name) => name !== 'tsx' && name !== pkg.name);
    expect(needed.filter((name) => !(name in declared))).toEqual([]);
  });

  it('MUST NOT declare a runtime dependency that no shipped module imports', () => {
    expect(Object.keys(declared).filter((name) => !TYPES_ONLY.test(name) && !imported.has(name))).toEqual([]);
  });

  it('MUST pin workspace packages to their version and give third-party ones a caret range', () => {
    for (const [name, range] of Object.entries(pkg.dependencies ?? {})) {
      if (name.startsWith('@orbit/')) expect(range, name).toBe(manifest(name.slice('@orbit/'.length)).version);
      else expect(range, name).toMatch(/^\^\d+\.\d+\.\d+$/);
    }
    for (const name of Object.keys(pkg.peerDependencies ?? {})) expect(pkg.peerDependenciesMeta?.[name]?.optional, name).toBe(true);
  });
});

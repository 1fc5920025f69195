/**
 * @module
 * Code in the documentation is compiled code. A fenced block preceded by
 *
 *   <!-- snippet: client/examples/snippets/management.ts -->
 *
 * holds the `// #region docs` ... `// #endregion docs` parts of that file (dedented, separated by
 * a blank line), or the whole file when it has no region. The files are type-checked with the
 * tree and run by tests; this script copies them into the pages:
 *
 *   npm run docs:snippets              rewrite the pages
 *   npm run generate -- --check        (among its checks) fail when a page differs
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runAsScript } from './script-main.ts';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** The pages whose code blocks are spliced from files. */
export const SNIPPET_PAGES = [
  'docs/sdk.md',
  'docs/embedding.md',
  'docs/operations.md',
  'client/README.md',
  'conformance/README.md',
] as const;

const MARKER = /^<!-- snippet: (\S+) -->\n(`{3,})(\w*)\n(?:[\s\S]*?\n)??\2\n/gm;

function dedent(lines: string[]): string[] {
  const indents = lines.filter((l) => l.trim() !== '').map((l) => /^ */.exec(l)![0].length);
  const cut = indents.length === 0 ? 0 : Math.min(...indents);
  return lines.map((l) => l.slice(cut));
}

/** The documented parts of a source file. */
export function snippetOf(source: string, file: string): string {
  const lines = source.replace(/\n$/, '').split('\n');
  const parts: string[][] = [];
  let current: string[] | null = null;
  for (const line of lines) {
    if (/^\/\/ #region docs\b/.test(line.trim())) {
      if (current) throw new Error(`${file}: a region opens inside another`);
      current = [];
    } else if (line.trim() === '// #endregion docs') {
      if (!current) throw new Error(`${file}: #endregion without #region`);
      parts.push(dedent(current));
      current = null;
    } else current?.push(line);
  }
  if (current) throw new Error(`${file}: a region is not closed`);
  if (parts.length === 0) return `${lines.join('\n')}\n`;
  return `${parts.map((p) => p.join('\n')).join('\n\n')}\n`;
}

/** The page with every marked block replaced by its file's snippet. */
export function renderPage(page: string, read: (file: string) => string): string {
  return page.replace(MARKER, (_all, file: string, fence: string, lang: string) => {
    return `<!-- snippet: ${file} -->\n${fence}${lang}\n${snippetOf(read(file), file)}${fence}\n`;
  });
}

const readRepoFile = (file: string): string => readFileSync(path.join(repoRoot, file), 'utf8');

/** Every file whose code the pages show, once each, in page order (consumer/ runs the programs among them). */
export function snippetFiles(): string[] {
  const files = SNIPPET_PAGES.flatMap((page) => [...readRepoFile(page).matchAll(MARKER)].map((m) => m[1]!));
  return [...new Set(files)];
}

/** The pages that differ from their snippets (printed). */
export function checkPages(): string[] {
  const differing = SNIPPET_PAGES.filter((page) => renderPage(readRepoFile(page), readRepoFile) !== readRepoFile(page));
  if (differing.length === 0) console.log('docs/ code blocks are up to date with their snippet files');
  else console.error(`code blocks differ from their snippet files in ${differing.join(', ')}: run \`npm run docs:snippets\``);
  return differing;
}

async function main(argv: string[]): Promise<number> {
  if (argv.includes('--check')) return checkPages().length === 0 ? 0 : 1;
  for (const page of SNIPPET_PAGES) writeFileSync(path.join(repoRoot, page), renderPage(readRepoFile(page), readRepoFile));
  console.log(`wrote ${SNIPPET_PAGES.join(', ')}`);
  return 0;
}

runAsScript(import.meta.url, main);

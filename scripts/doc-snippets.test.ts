/**
 * The code blocks of docs/ are their snippet files: the pages are up to date, and an edit on
 * either side shows as a difference.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { renderPage, SNIPPET_PAGES, snippetOf } from './doc-snippets.ts';

const read = (file: string) => readFileSync(new URL(`../${file}`, import.meta.url), 'utf8');

describe('scripts/doc-snippets.ts', () => {
  it.each(SNIPPET_PAGES)('%s MUST show its snippet files as they are', (page) => {
    const text = read(page);
    expect(text).toContain('<!-- snippet: ');
    expect(renderPage(text, read)).toBe(text);
  });

  it('MUST take the regions of a file, dedented, or the whole file without one', () => {
    const source = [
      'const hidden = 1;',
      '// #region docs',
      '  const a = 1;',
      '// #endregion docs',
      '// #region docs',
      'b();',
      '// #endregion docs',
      '',
    ].join('\n');
    expect(snippetOf(source, 'x.ts')).toBe('const a = 1;\n\nb();\n');
    expect(snippetOf('whole();\n', 'y.ts')).toBe('whole();\n');
    expect(() => snippetOf('// #region docs\nopen();\n', 'z.ts')).toThrow(/not closed/);
  });

  it('MUST replace a stale block, empty or not, and leave the rest of the page alone', () => {
    const page =
      'before\n<!-- snippet: a.ts -->\n```ts\nstale();\n```\nmiddle\n<!-- snippet: a.ts -->\n```ts\n```\nafter\n```ts\nother();\n```\n';
    expect(renderPage(page, () => 'fresh();\n')).toBe(
      'before\n<!-- snippet: a.ts -->\n```ts\nfresh();\n```\nmiddle\n<!-- snippet: a.ts -->\n```ts\nfresh();\n```\nafter\n```ts\nother();\n```\n',
    );
  });
});

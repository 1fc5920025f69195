/**
 * Comments and descriptions cite what a reader of the repository has: a rule of spec/rules.md by
 * its anchor (`spec/rules.md#s5-11`; in Markdown the link `[§5.11](../spec/rules.md#s5-11)`) or a
 * section of a document in the repository by its heading ("spec/README.md, Idempotency"). Never a
 * bare section number of the seed, the product's design notes or an issue number, which the reader
 * does not have, and never an anchor that spec/rules.md does not define. Comments are read with
 * the TypeScript parser; so are string literals of non-test modules (settings, metrics and CLI
 * descriptions are shown to users), while the strings of tests (their names) are held only to the
 * rules against the product's design notes and issue numbers. Markdown, schemas and other text files are read
 * whole. spec/rules.md, which defines the ids, is the one file not scanned.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const RULES_FILE = 'spec/rules.md';
/**
 * The trees whose comments and descriptions a reader sees, tests included (conformance/src pins its
 * own citations: every case carries the rules it checks).
 */
const TREES = [
  'server/src',
  'server/test',
  'client/src',
  'client/test',
  'client/examples',
  'conformance/test',
  'consumer',
  'spec',
  'scripts',
  'bench',
  'testing',
  'docs',
  'README.md',
  'redocly.yaml',
];
const SKIPPED_DIRS = new Set(['node_modules', 'dist', 'images']);
const BINARY = /\.(png|jpe?g|gif|ico|woff2?|ttf)$/;
const CODE = /\.(ts|mts|js|mjs)$/;
const TEST = /(\.test\.ts$|\/test\/)/;

/** The forbidden words, spelled so that the samples below do not flag this file itself. */
const SECTION = '\u00a7';
const DESIGN_NOTES = ['bri', 'ef'].join('');
const ISSUE = 'issue';

interface Rule {
  readonly name: string;
  readonly pattern: RegExp;
}

/** Patterns of citations a reader cannot follow. */
const FORBIDDEN: readonly Rule[] = [
  { name: 'the seed by section number (cite spec/rules.md#sN-M)', pattern: new RegExp(`\\bseed\\s*${SECTION}`, 'gi') },
  { name: `a bare ${SECTION}N (cite spec/rules.md#sN-M)`, pattern: new RegExp(SECTION, 'g') },
  {
    name: `the product ${DESIGN_NOTES} (cite spec/rules.md#sN-M or a spec/README.md section)`,
    pattern: new RegExp(`\\b${DESIGN_NOTES}\\b`, 'gi'),
  },
  { name: 'an issue number (cite the rule or the section it asked for)', pattern: /\bissues?\s+#?\d+/gi },
];
const TEST_STRING_RULES = new Set([FORBIDDEN[2], FORBIDDEN[3]]);

/** Section signs that cite a text the reader has: an RFC, or a Markdown link to the rule itself. */
const RFC_SECTION = new RegExp(`\\bRFC\\s*\\d+,?\\s*${SECTION}\\s*[\\d.]+`, 'g');
const RULE_LINK = new RegExp(`\\[${SECTION}(\\d+)\\.(\\d+)\\]\\(([^)\\s]*rules\\.md)#s(\\d+)-(\\d+)\\)`, 'g');
const ANCHOR = /#(s\d+-\d+)\b/g;
/** `spec/README.md, Idempotency`: a document of the repository, then the heading of one of its sections. */
const SECTION_CITATION = /(?<![\w./-])((?:[\w-]+\/)*[\w-]+\.md), ([`\w][^;)]{0,80})/g;

interface Violation {
  readonly line: number;
  readonly rule: string;
  readonly text: string;
}

/** The `<a id="sN-M">` anchors of spec/rules.md. */
function ruleIds(text: string): Set<string> {
  return new Set([...text.matchAll(/<a id="(s\d+-\d+)"><\/a>/g)].map((m) => m[1] as string));
}

const headingCache = new Map<string, string[] | null>();
/** The headings of a Markdown file of the repository, normalized; null when there is no such file. */
function headingsOf(path: string): string[] | null {
  if (!headingCache.has(path)) {
    const absolute = join(REPO, path);
    headingCache.set(
      path,
      existsSync(absolute)
        ? [...readFileSync(absolute, 'utf8').matchAll(/^#{1,6}\s+(.+)$/gm)].map((m) => normalizeHeading(m[1] as string))
        : null,
    );
  }
  return headingCache.get(path) ?? null;
}

function normalizeHeading(text: string): string {
  return text.replace(/`/g, '').replace(/\s+/g, ' ').trim().toLowerCase();
}

/** The text of a comment without its markers, one line per source line. */
function commentText(raw: string): string {
  return raw
    .replace(/^\/\*\*?|\*\/$/g, '')
    .replace(/^\/\//, '')
    .replace(/\n[ \t]*(?:\*(?!\/)|\/\/|#)?[ \t]?/g, '\n');
}

/** The line of `text` that holds `index`. */
function lineOf(text: string, index: number): string {
  const start = text.lastIndexOf('\n', index - 1) + 1;
  const end = text.indexOf('\n', index);
  return text.slice(start, end === -1 ? undefined : end);
}

/** Checks one piece of text (a comment, a string, a whole file) that starts on `firstLine`. */
function checkText(text: string, firstLine: number, ids: ReadonlySet<string>, rules: readonly Rule[] = FORBIDDEN): Violation[] {
  const out: Violation[] = [];
  const lineAt = (index: number) => firstLine + (text.slice(0, index).match(/\n/g)?.length ?? 0);
  const report = (index: number, rule: string, found: string) => out.push({ line: lineAt(index), rule, text: found.trim() });

  let rest = text.replace(RFC_SECTION, (m) => ' '.repeat(m.length));
  rest = rest.replace(RULE_LINK, (m, section, sentence, _path, anchorSection, anchorSentence, index: number) => {
    if (section !== anchorSection || sentence !== anchorSentence) report(index, 'a link whose text is not its rule', m);
    return ' '.repeat(m.length);
  });
  for (const rule of rules) {
    // Each span is reported once, by the first rule that names it ("seed" and its section sign together).
    rest = rest.replace(rule.pattern, (m: string, index: number) => {
      report(index, rule.name, lineOf(text, index));
      return ' '.repeat(m.length);
    });
  }
  if (rules !== FORBIDDEN) return out;
  for (const m of text.matchAll(ANCHOR)) {
    if (!ids.has(m[1] as string)) report(m.index, `an anchor that ${RULES_FILE} does not define`, m[0]);
  }
  for (const m of text.matchAll(SECTION_CITATION)) {
    const [, path, after] = m as unknown as [string, string, string];
    const known = headingsOf(path);
    if (known === null) continue;
    const cited = normalizeHeading(after);
    if (known.some((h) => cited.startsWith(h))) continue;
    // "see docs/operations.md, which ..." is prose; a capitalized or quoted name claims a heading.
    if (/^[A-Z`]/.test(after)) report(m.index, `a section that ${path} does not have`, m[0]);
  }
  return out;
}

/** Comments of a module and its string literals, each with its first line. */
function codePieces(path: string, text: string): { strings: [string, number][]; comments: [string, number][] } {
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true, path.endsWith('.ts') ? ts.ScriptKind.TS : ts.ScriptKind.JS);
  const strings: [string, number][] = [];
  const comments = new Map<number, [string, number]>();
  const line = (pos: number) => source.getLineAndCharacterOfPosition(pos).line + 1;
  const addComments = (ranges: readonly ts.CommentRange[] | undefined) => {
    for (const r of ranges ?? []) comments.set(r.pos, [commentText(text.slice(r.pos, r.end)), line(r.pos)]);
  };
  const visit = (node: ts.Node): void => {
    addComments(ts.getLeadingCommentRanges(text, node.getFullStart()));
    addComments(ts.getTrailingCommentRanges(text, node.getEnd()));
    if (ts.isStringLiteralLike(node) || ts.isTemplateLiteralToken(node)) strings.push([node.text, line(node.getStart())]);
    for (const child of node.getChildren(source)) visit(child);
  };
  visit(source);
  return { strings, comments: [...comments.values()] };
}

/** Every violation of one file of the repository. */
function checkFile(path: string, ids: ReadonlySet<string>): string[] {
  const text = readFileSync(join(REPO, path), 'utf8');
  const found: Violation[] = [];
  if (CODE.test(path)) {
    const { strings, comments } = codePieces(path, text);
    for (const [comment, line] of comments) found.push(...checkText(comment, line, ids));
    const stringRules = TEST.test(path) ? FORBIDDEN.filter((r) => TEST_STRING_RULES.has(r)) : FORBIDDEN;
    for (const [string, line] of strings) found.push(...checkText(string, line, ids, stringRules));
  } else {
    found.push(...checkText(text, 1, ids));
  }
  return found.map((v) => `${path}:${v.line}: ${v.rule}: ${v.text}`);
}

function filesUnder(path: string): string[] {
  const absolute = join(REPO, path);
  if (!statSync(absolute).isDirectory()) return [path];
  return readdirSync(absolute).flatMap((name) => (SKIPPED_DIRS.has(name) ? [] : filesUnder(join(path, name))));
}

const ids = ruleIds(readFileSync(join(REPO, RULES_FILE), 'utf8'));

describe('citations', () => {
  it('spec/rules.md defines the anchors this check relies on', () => {
    expect(ids.size).toBeGreaterThan(100);
    expect(ids.has('s5-11')).toBe(true);
  });

  it('the scanner flags each kind of citation a reader cannot follow', () => {
    const check = (text: string) => checkText(text, 1, ids).map((v) => v.rule);
    expect(check(`capacity is checked in a transaction (seed ${SECTION}5, ${SECTION}7)`)).toEqual([FORBIDDEN[0]?.name, FORBIDDEN[1]?.name]);
    expect(check(`ordered newest first (${SECTION}3)`)).toEqual([FORBIDDEN[1]?.name]);
    expect(check(`opaque cursors (${DESIGN_NOTES} decision 8)`)).toEqual([FORBIDDEN[2]?.name]);
    expect(check(`the lease sweep (${ISSUE} 8)`)).toEqual([FORBIDDEN[3]?.name]);
    expect(check('a capacity of 1-32 (spec/rules.md#s5-99)')).toEqual(['an anchor that spec/rules.md does not define']);
    expect(check('kept for a day (spec/README.md, Idempotence)')).toEqual(['a section that spec/README.md does not have']);
    expect(check(`[${SECTION}5.12](../spec/rules.md#s5-11)`)).toEqual(['a link whose text is not its rule']);
    expect(checkText(`line one\nline two (${ISSUE} 9)`, 10, ids)[0]?.line).toBe(11);
  });

  it('the scanner accepts citations a reader can follow', () => {
    const accepted = [
      'capacity 1-32 (spec/rules.md#s5-11, #s5-12; spec/README.md, Idempotency)',
      "the retire rules (spec/rules.md#s9-2 to #s9-3; spec/README.md, A\ndelivery's life)",
      `an upgrade without the subprotocol (RFC 9110 ${SECTION}15.5.22)`,
      `capacity is decided by the database ([${SECTION}5.11](rules.md#s5-11))`,
      'see docs/operations.md, which lists the settings',
      'a brisk reply to issues raised by the claim pool',
    ];
    for (const text of accepted) expect(checkText(text, 1, ids), text).toEqual([]);
  });

  it('reads comments and strings with the parser, and holds test names only to the design-notes rule', () => {
    const sample = [
      `const pattern = /'/; // the seed ${SECTION}5 rule`,
      `const help = 'Lease of one delivery (seed ${SECTION}6: 30 s).';`,
      `it('MUST pass the ${DESIGN_NOTES} check', () => {}); // a trailing comment`,
      `it('frames of ${SECTION}7 validate', () => {});`,
    ].join('\n');
    const { strings, comments } = codePieces('sample.test.ts', sample);
    expect(comments.map(([, line]) => line)).toEqual([1, 3]);
    expect(strings.map(([text]) => text)).toContain(`frames of ${SECTION}7 validate`);
    const testRules = FORBIDDEN.filter((r) => TEST_STRING_RULES.has(r));
    expect(strings.flatMap(([text, line]) => checkText(text, line, ids, testRules)).map((v) => v.line)).toEqual([3]);
    expect(strings.flatMap(([text, line]) => checkText(text, line, ids)).map((v) => v.line)).toEqual([2, 3, 4]);
  });

  it('every comment and description of the scanned trees cites what the reader has', () => {
    const files = TREES.flatMap(filesUnder).filter((path) => path !== RULES_FILE && !BINARY.test(path));
    expect(files.length).toBeGreaterThan(100);
    expect(files).toContain(relative(REPO, fileURLToPath(import.meta.url)));
    expect(TREES.filter((tree) => !files.some((path) => path === tree || path.startsWith(`${tree}/`)))).toEqual([]);
    expect(files.flatMap((path) => checkFile(path, ids))).toEqual([]);
  });
});

/**
 * No source file over 400 lines without a reason: a longer one states why in its header (its
 * first comment block) on a line that starts "Longer than 400 lines:". Past that size a file
 * usually holds more than one concern, and the reader who opens it should learn at once whether
 * that was chosen (one table, one state machine, one catalogue) or only happened.
 *
 * Covered: the TypeScript and JavaScript modules (tests included) and the shell scripts of the
 * folders below; generated/ is exempt (scripts/generate.ts writes it, nobody reads it as prose).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const FOLDERS = [
  'spec',
  'server/src',
  'server/test',
  'client/src',
  'client/test',
  'conformance/src',
  'conformance/test',
  'testing',
  'bench',
  'scripts',
];
const SOURCE = /\.(ts|mts|cts|js|mjs|cjs|sh)$/;
const SKIPPED = new Set(['node_modules', 'dist']);
const LIMIT = 400;
const REASON = 'Longer than 400 lines:';

function sourceFiles(folder: string): string[] {
  return readdirSync(join(REPO, folder), { withFileTypes: true }).flatMap((entry) => {
    const path = `${folder}/${entry.name}`;
    if (entry.isDirectory()) return SKIPPED.has(entry.name) ? [] : sourceFiles(path);
    return SOURCE.test(entry.name) ? [path] : [];
  });
}

function lineCount(text: string): number {
  return text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
}

/**
 * The lines of a file's first comment block, without their comment markers: a block comment up to
 * its end, or a run of `//` lines (`#` lines in a shell script), after an optional `#!` line and
 * blank lines.
 */
function headerLines(text: string): string[] {
  const lines = text.split('\n');
  let i = lines[0]?.startsWith('#!') ? 1 : 0;
  while (i < lines.length && lines[i]?.trim() === '') i++;
  const first = lines[i]?.trim() ?? '';
  const block: string[] = [];
  if (first.startsWith('/*')) {
    for (; i < lines.length; i++) {
      const line = lines[i] ?? '';
      block.push(line);
      if (line.includes('*/')) break;
    }
  } else {
    const marker = first.startsWith('//') ? '//' : first.startsWith('#') ? '#' : null;
    for (; marker !== null && i < lines.length && lines[i]?.trim().startsWith(marker); i++) block.push(lines[i] ?? '');
  }
  return block.map((line) =>
    line
      .replace(/\*\/.*$/, '')
      .replace(/^\s*(\/\*+|\*+|\/\/+|#+)\s?/, '')
      .trim(),
  );
}

const statesReason = (text: string): boolean => headerLines(text).some((line) => line.startsWith(REASON));

describe('the header reader', () => {
  it('finds the reason in a /** */ header, after a shebang', () => {
    expect(statesReason(`#!/usr/bin/env node\n/**\n * @module\n * What it does.\n *\n * ${REASON} one table.\n */\nx();\n`)).toBe(true);
  });

  it('finds the reason in a run of // lines and of # lines', () => {
    expect(statesReason(`// What it does.\n// ${REASON} one table.\nx();\n`)).toBe(true);
    expect(statesReason(`#!/bin/sh\n# What it does.\n# ${REASON} one script.\nx\n`)).toBe(true);
  });

  it('does not take the reason from a later comment, from mid-line or from a header without it', () => {
    expect(statesReason(`/** What it does. */\n/** ${REASON} one table. */\n`)).toBe(false);
    expect(statesReason(`// What it does.\n\n// ${REASON} one table.\n`)).toBe(false);
    expect(statesReason(`/**\n * What it does. ${REASON} one table.\n */\n`)).toBe(false);
    expect(statesReason(`import x from 'x';\n// ${REASON} one table.\n`)).toBe(false);
    expect(statesReason(`/**\n * What it does.\n */\n`)).toBe(false);
  });
});

const files = FOLDERS.flatMap(sourceFiles);
const long = files
  .map((path) => ({ path, text: readFileSync(join(REPO, path), 'utf8') }))
  .map(({ path, text }) => ({ path, lines: lineCount(text), text }))
  .filter(({ lines }) => lines > LIMIT);

describe(`source files over ${LIMIT} lines`, () => {
  it('are looked for in every folder (tests and shell scripts included)', () => {
    expect(files).toEqual(
      expect.arrayContaining([
        'scripts/generate.ts',
        'scripts/manifests.test.ts',
        'scripts/galera.sh',
        'conformance/test/fixture-server/state.ts',
      ]),
    );
    for (const folder of FOLDERS) expect(files.some((path) => path.startsWith(`${folder}/`))).toBe(true);
  });

  it.each(long)(`$path ($lines lines) says why in its header ("${REASON} …")`, ({ text }) => {
    expect(statesReason(text)).toBe(true);
  });
});

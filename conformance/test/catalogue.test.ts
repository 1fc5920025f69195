/**
 * The catalogue is pinned: case-ids.json lists every case, server mode's and client mode's (id,
 * level, area, profile, cited rules, title) and CASES.md renders it with the seed-coverage map; src/seed-rules.ts is generated from
 * spec/rules.md. A renamed, removed or reworded case, or an edited rule, shows up as a diff of
 * those committed files (regenerate with `npm run -w conformance catalogue`).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { biomeFormat } from '../scripts/biome-format.ts';
import { AREAS } from '../src/case.ts';
import { ALL_CASES } from '../src/cases/index.ts';
import { CLIENT_CASES } from '../src/client/index.ts';
import { type CatalogueEntry, catalogueEntries, renderCatalogueMarkdown, seedCoverage } from '../src/catalogue.ts';
import { SEED_RULES } from '../src/seed-rules.ts';
import { parseSeedRules, renderSeedRulesModule } from '../src/seed-rules-source.ts';

/**
 * Citations of documents a reader of the repository does not have: the product's design notes, an
 * issue number, a section of the seed (spelled so that neither this suite nor scripts/citations.test.ts
 * flags the pattern itself).
 */
const DESIGN_NOTES = ['bri', 'ef'].join('');
const UNREADABLE_CITATION = new RegExp(String.raw`\b(${DESIGN_NOTES}|issue) \d|\b${DESIGN_NOTES} decision|seed §\d`, 'i');

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');
const pinned = JSON.parse(read('case-ids.json')) as CatalogueEntry[];

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? (name === 'node_modules' ? [] : files(path)) : [path];
  });
}

describe('the case catalogue', () => {
  it('matches the pinned ids and their meaning (case-ids.json), server and client cases', () => {
    expect(catalogueEntries([...ALL_CASES, ...CLIENT_CASES])).toEqual(pinned);
  });

  it('never drops a pinned id, of server mode or of client mode', () => {
    const ids = new Set([...ALL_CASES, ...CLIENT_CASES].map((c) => c.id));
    expect(pinned.filter((e) => !ids.has(e.id)).map((e) => e.id)).toEqual([]);
    expect(pinned.filter((e) => e.area === 'client').length).toBe(CLIENT_CASES.length);
  });

  it('has unique client.kebab-case client ids with a title that starts with the level, citing rules that exist', () => {
    const readme = read('../spec/README.md');
    expect(new Set(CLIENT_CASES.map((c) => c.id)).size).toBe(CLIENT_CASES.length);
    for (const c of CLIENT_CASES) {
      expect(c.id).toMatch(/^client\.[a-z0-9]+(-[a-z0-9]+)*$/);
      expect(c.title.startsWith(`${c.level} `)).toBe(true);
      for (const rule of c.seed ?? []) expect(Object.hasOwn(SEED_RULES, rule), `${c.id}: ${rule}`).toBe(true);
      if (c.orbit) expect(readme, `${c.id}: anchor ${c.orbit.anchor}`).toContain(`<a id="${c.orbit.anchor}"></a>`);
    }
  });

  it('renders CASES.md without drift', () => {
    expect(read('CASES.md')).toBe(renderCatalogueMarkdown(ALL_CASES, CLIENT_CASES));
  });

  it('generates src/seed-rules.ts from spec/rules.md without drift', () => {
    const path = join(ROOT, 'src/seed-rules.ts');
    expect(readFileSync(path, 'utf8')).toBe(biomeFormat(path, renderSeedRulesModule(parseSeedRules(read('../spec/rules.md')))));
  });

  it('has unique area.kebab-case ids, a title that starts with the level, and cases in every area', () => {
    expect(new Set(ALL_CASES.map((c) => c.id)).size).toBe(ALL_CASES.length);
    for (const c of ALL_CASES) {
      expect(c.id).toMatch(/^[a-z]+\.[a-z0-9]+(-[a-z0-9]+)*$/);
      expect(c.id.startsWith(`${c.area}.`)).toBe(true);
      expect(c.title.startsWith(`${c.level} `)).toBe(true);
    }
    for (const area of AREAS)
      expect(
        ALL_CASES.some((c) => c.area === area),
        area,
      ).toBe(true);
  });

  it('cites rules that exist: seed rules of spec/rules.md, anchors of spec/README.md', () => {
    const readme = read('../spec/README.md');
    for (const c of ALL_CASES) {
      expect(c.cites.length, c.id).toBeGreaterThan(0);
      for (const rule of c.seed) expect(Object.hasOwn(SEED_RULES, rule), `${c.id}: ${rule}`).toBe(true);
      if (c.orbit) expect(readme, `${c.id}: anchor ${c.orbit.anchor}`).toContain(`<a id="${c.orbit.anchor}"></a>`);
    }
  });

  it('covers most of the checkable seed sentences, and CASES.md lists the rest as gaps', () => {
    const coverage = seedCoverage(ALL_CASES);
    const checkable = Object.entries(SEED_RULES).filter(([, r]) => r.tags.length === 0);
    const gaps = checkable.filter(([id]) => coverage.get(id as keyof typeof SEED_RULES)!.length === 0);
    expect(gaps.length).toBeLessThan(checkable.length / 10);
    for (const [id] of gaps) expect(read('CASES.md')).toContain(`- [§${id.slice(1).replace('-', '.')}](../spec/rules.md#${id})`);
  });

  it('has property cases for the codec rules and invalid frames, and graded (MAY) cases', () => {
    const properties = ALL_CASES.filter((c) => c.kind === 'property').map((c) => c.id);
    expect(properties).toEqual(
      expect.arrayContaining([
        'json.prop-duplicate-keys',
        'json.prop-unknown-fields',
        'json.prop-uint64-noncanonical',
        'envelope.prop-bad-query',
        'session.prop-invalid-frames',
        'ack.prop-noncanonical-secret',
        'ack.prop-noncanonical-epoch',
      ]),
    );
    expect(ALL_CASES.filter((c) => c.level === 'MAY').length).toBeGreaterThanOrEqual(3);
  });

  it('cites what a reader has: no comment or case of the suite names the design notes, "issue N" or "seed §N"', () => {
    const offenders = files(ROOT)
      .filter((f) => /\.(ts|mjs|md)$/.test(f))
      .flatMap((f) =>
        readFileSync(f, 'utf8')
          .split('\n')
          .map((line, i) => ({ where: `${f.slice(ROOT.length)}:${i + 1}`, line }))
          .filter(({ line }) => UNREADABLE_CITATION.test(line)),
      );
    expect(offenders).toEqual([]);
  });
});

/**
 * The catalogue is pinned: case-ids.json lists every case (id, level, area, clause section, title)
 * and CASES.md renders it. A renamed, removed or reworded case shows up as a diff of those
 * committed files (regenerate with `npm run -w conformance catalogue`).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { AREAS } from '../src/case.ts';
import { ALL_CASES } from '../src/cases/index.ts';
import { catalogueEntries, renderCatalogueMarkdown, type CatalogueEntry } from '../src/catalogue.ts';

const pinned = JSON.parse(readFileSync(new URL('../case-ids.json', import.meta.url), 'utf8')) as CatalogueEntry[];

describe('the case catalogue', () => {
  it('matches the pinned ids and their meaning (case-ids.json)', () => {
    expect(catalogueEntries(ALL_CASES)).toEqual(pinned);
  });

  it('never drops a pinned id', () => {
    const ids = new Set(ALL_CASES.map((c) => c.id));
    expect(pinned.filter((e) => !ids.has(e.id)).map((e) => e.id)).toEqual([]);
  });

  it('renders CASES.md without drift', () => {
    expect(readFileSync(new URL('../CASES.md', import.meta.url), 'utf8')).toBe(renderCatalogueMarkdown(ALL_CASES));
  });

  it('has at least 60 cases, unique area.kebab-case ids, and cases in every area', () => {
    expect(ALL_CASES.length).toBeGreaterThanOrEqual(60);
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

  it('has property cases for the codec rules and invalid frames', () => {
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
  });
});

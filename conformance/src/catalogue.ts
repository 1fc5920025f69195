/**
 * @module
 * The case catalogue as data and as Markdown. `case-ids.json` (the pinned list: id, level, area,
 * profile, cited rules and title, of the server cases and then of the client cases) and `CASES.md` are generated from it by `npm run -w conformance
 * catalogue`; a test fails when either drifts, so a case can never change its meaning or vanish
 * without a visible change to the committed files. CASES.md ends with the seed-coverage map: for
 * each seed section, which cases cover each of its sentences, and the sentences no case covers.
 */
import type { ClientCase } from './client/case.ts';
import { AREAS, type ConformanceCase, LEVELS, PROFILES, sectionTitle } from './case.ts';
import { FEATURES } from './features.ts';
import { SEED_RULES, SEED_SECTIONS, type SeedRuleId } from './seed-rules.ts';

export interface CatalogueEntry {
  readonly id: string;
  readonly level: string;
  readonly area: string;
  readonly profile: string;
  /** `§2.5` per seed rule, or `README#anchor` for an Orbit choice. */
  readonly cites: readonly string[];
  readonly title: string;
}

/** The pinned entries of server cases and client cases alike: both have an id, a level, an area, a profile, citations and a title. */
export function catalogueEntries(cases: ReadonlyArray<ConformanceCase | ClientCase>): CatalogueEntry[] {
  return cases.map((c) => ({
    id: c.id,
    level: c.level,
    area: c.area,
    profile: c.profile,
    cites: c.cites.map((x) => x.ref),
    title: c.title,
  }));
}

/** case-ids.json: the server cases, then the client cases (area `client`). */
export function renderCatalogueJson(cases: readonly ConformanceCase[], clientCases: readonly ClientCase[] = []): string {
  return `${JSON.stringify(catalogueEntries([...cases, ...clientCases]), null, 2)}\n`;
}

function cell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

/** Which cases cite each seed rule. */
export function seedCoverage(cases: readonly ConformanceCase[]): Map<SeedRuleId, string[]> {
  const map = new Map<SeedRuleId, string[]>();
  for (const id of Object.keys(SEED_RULES) as SeedRuleId[]) map.set(id, []);
  for (const c of cases) for (const rule of c.seed) map.get(rule)!.push(c.id);
  return map;
}

function coverageLines(cases: readonly ConformanceCase[]): string[] {
  const coverage = seedCoverage(cases);
  const ids = Object.keys(SEED_RULES) as SeedRuleId[];
  const covered = ids.filter((id) => coverage.get(id)!.length > 0);
  const checkable = ids.filter((id) => SEED_RULES[id].tags.length === 0);
  const gaps = checkable.filter((id) => coverage.get(id)!.length === 0);
  const lines = [
    '## Seed coverage',
    '',
    `Each sentence of the seed (spec/rules.md) and the cases that check it. ${covered.length} of ${ids.length} sentences are covered; ` +
      `of the ${checkable.length} that state a server rule checkable over the network (no tag), ${checkable.length - gaps.length} are ` +
      `covered ` +
      `and ${gaps.length} are gaps. Tags: \`example\` (a sample message), \`client\` (an obligation of the caller), \`informative\`, ` +
      '`internal` (not observable by a client).',
  ];
  for (const section of Object.keys(SEED_SECTIONS).map(Number)) {
    const inSection = ids.filter((id) => SEED_RULES[id].section === section);
    lines.push('', `### ${sectionTitle(section)}`, '', '| rule | summary | cases |', '| --- | --- | --- |');
    for (const id of inSection) {
      const rule = SEED_RULES[id];
      const tags = rule.tags.length ? ` _[${rule.tags.join(', ')}]_` : '';
      const by = coverage.get(id)!;
      lines.push(
        `| [§${rule.section}.${rule.sentence}](../spec/rules.md#${id}) | ${cell(rule.text)}${tags} | ` +
          `${by.length ? by.map((c) => `\`${c}\``).join(', ') : rule.tags.length ? '—' : '**gap**'} |`,
      );
    }
  }
  lines.push('', '### Gaps', '', 'The sentences that state a checkable server rule and that no case covers:', '');
  if (gaps.length === 0) lines.push('None.');
  for (const id of gaps)
    lines.push(`- [§${SEED_RULES[id].section}.${SEED_RULES[id].sentence}](../spec/rules.md#${id}) ${SEED_RULES[id].text}`);
  return lines;
}

/** The client-mode section: the cases of `orbit-conformance client` (conformance/README.md, Certify your client). */
function clientLines(cases: readonly ClientCase[]): string[] {
  if (cases.length === 0) return [];
  const lines = [
    '',
    '## Client mode',
    '',
    `${cases.length} cases of \`orbit-conformance client\`, which plays the server and judges a client by the frames it sends`,
    '(with their timings) and by what it reports through the harness protocol (conformance/harness.schema.json). They run',
    'whatever the profile; each starts the client program afresh, with a new server and a new state directory.',
    '',
    'Closes are one table: each close code (1000, 1001, 1006, 1008, 1011 and 4000 for the 4xxx range) in each phase of a',
    'connection: instead of the welcome (`-before-welcome`), after it (no suffix), right after an `event.deliver` not yet',
    'ACKed (`-mid-delivery`) and between an ACK and its reply (`-before-ack-reply`).',
    '',
    'The one HTTP route a consumer touches is the upgrade, `GET /v1/events/connect`; its refusals are scripted (426, 401',
    'and 403 are final; 429 and 503 are retried no sooner than their `Retry-After`). A 400 is not: it answers a malformed',
    'upgrade, which `client.no-credential-in-url` rules out. The management routes (`GET /v1/subscriptions/{id}`, the',
    "deliveries, `:retry`, ...) are not part of a consumer's contract: a consumer needs none of them to receive, store and",
    'ACK results, and the scripted server answers them 404 `NOT_FOUND`. Server mode checks them.',
    '',
    '| id | level | rule | requirement |',
    '| --- | --- | --- | --- |',
  ];
  for (const c of cases)
    lines.push(
      `| \`${c.id}\` | ${c.level} | ${c.cites.map((x) => `[${x.ref}](../${x.href}): ${cell(x.text)}`).join('<br>')} | ${cell(c.title)} |`,
    );
  return lines;
}

export function renderCatalogueMarkdown(cases: readonly ConformanceCase[], clientCases: readonly ClientCase[] = []): string {
  const count = <T extends string>(values: readonly T[], of: (c: ConformanceCase) => T) =>
    values.map((v) => `${cases.filter((c) => of(c) === v).length} ${v}`).join(', ');
  const lines: string[] = [
    '# Conformance cases',
    '',
    '<!-- Generated by `npm run -w conformance catalogue` from conformance/src/cases and spec/rules.md. Do not edit. -->',
    '',
    `${cases.length} cases: ${AREAS.map((a) => `${a} ${cases.filter((c) => c.area === a).length}`).join(', ')}. ` +
      `Levels: ${count(LEVELS, (c) => c.level)}. Profiles: ${count(PROFILES, (c) => c.profile)}. ` +
      `Property-based (fast-check): ${cases.filter((c) => c.kind === 'property').length}.`,
    '',
    'A `seed` case checks a rule of the normative text and cites it by section and sentence (`§2.5` is',
    '[spec/rules.md#s2-5](../spec/rules.md#s2-5)); an `orbit` case checks a documented choice or extension of Orbit and cites',
    'its anchor in [spec/README.md](../spec/README.md). `--profile seed` (the default) runs the first kind, `--profile orbit`',
    'both. The map from each seed sentence to its cases, and the gaps, are at the end: [Seed coverage](#seed-coverage).',
    '',
    '## Features',
    '',
    'A case that needs a feature runs only when the configuration declares it; otherwise it is skipped.',
    '',
    '| feature | meaning |',
    '| --- | --- |',
    ...Object.entries(FEATURES).map(([f, text]) => `| \`${f}\` | ${cell(text)} |`),
  ];
  for (const area of AREAS) {
    const inArea = cases.filter((c) => c.area === area);
    if (inArea.length === 0) continue;
    lines.push(
      '',
      `## ${area}`,
      '',
      '| id | level | profile | rule | requirement | kind | features |',
      '| --- | --- | --- | --- | --- | --- | --- |',
    );
    for (const c of inArea) {
      const rules = c.cites.map((x) => `[${x.ref}](../${x.href}): ${cell(x.text)}`).join('<br>');
      lines.push(
        `| \`${c.id}\` | ${c.level} | ${c.profile} | ${rules} | ${cell(c.title)} | ${c.kind} | ${(c.features ?? []).join(', ')} |`,
      );
    }
  }
  lines.push(...clientLines(clientCases));
  lines.push('', ...coverageLines(cases));
  return `${lines.join('\n')}\n`;
}

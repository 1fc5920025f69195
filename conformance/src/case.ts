/**
 * @module
 * The case model. A case is data plus one `run` function: a stable id (`area.short-name`, never
 * reused for another meaning), the requirement level of what it checks (MUST, SHOULD, MAY, as in
 * the graphql-http audits), what it checks, the features it needs, and its profile:
 *
 * - `seed`: a rule of the normative text, cited by section and sentence (`spec/rules.md#sN-M`);
 *   the English summary shown in reports is the one of spec/rules.md, never restated here;
 * - `orbit`: a documented choice or extension of Orbit, cited by its `spec/README.md` anchor.
 *
 * `--profile seed` runs the first kind only; `--profile orbit` runs both.
 */
import type { Timing } from './config.ts';
import type { CaseContext } from './context.ts';
import type { Feature } from './features.ts';
import { SEED_RULES, SEED_SECTIONS, type SeedRuleId } from './seed-rules.ts';

export const AREAS = [
  'json',
  'envelope',
  'validation',
  'idempotency',
  'subscriptions',
  'deliveries',
  'upgrade',
  'session',
  'ack',
  'heartbeat',
  'retire',
  'history',
  'retention',
  'faults',
] as const;
export type Area = (typeof AREAS)[number];

/**
 * MUST: a failure fails the run. SHOULD: a failure is graded `non-strict` (a deviation from a
 * recommendation; `--strict` fails the run). MAY: behaviour the seed leaves open; the case reports
 * what it observed, graded `info`.
 */
export const LEVELS = ['MUST', 'SHOULD', 'MAY'] as const;
export type Level = (typeof LEVELS)[number];

export const PROFILES = ['seed', 'orbit'] as const;
export type Profile = (typeof PROFILES)[number];

/** An Orbit choice a case checks: an anchor of spec/README.md and a one-line paraphrase. */
export interface OrbitChoice {
  readonly anchor: string;
  readonly text: string;
}

/** One rule a case cites, resolved for reports. */
export interface Citation {
  /** `§2.5` for a seed rule, `README#anchor` for an Orbit choice. */
  readonly ref: string;
  /** Where it is written: `spec/rules.md#s2-5` or `spec/README.md#anchor`. */
  readonly href: string;
  readonly text: string;
}

export interface CaseSpec {
  /** `area.short-name`; stable forever. */
  readonly id: string;
  readonly area: Area;
  readonly level: Level;
  /** What the case checks, as a sentence that starts with the level ("MUST reject ..."). */
  readonly title: string;
  /** The seed rules the case checks (a `seed` case). */
  readonly seed?: readonly SeedRuleId[];
  /** The Orbit choice the case checks (an `orbit` case). */
  readonly orbit?: OrbitChoice;
  readonly features?: readonly Feature[];
  /** `example` cases send fixed inputs; `property` cases generate inputs with fast-check. */
  readonly kind?: 'example' | 'property';
  /** Per-case timeout; defaults to the runner's. A function receives the declared timing. */
  readonly timeoutMs?: number | ((timing: Timing) => number);
  run(ctx: CaseContext): Promise<void>;
}

export interface ConformanceCase extends CaseSpec {
  readonly profile: Profile;
  readonly seed: readonly SeedRuleId[];
  readonly cites: readonly Citation[];
  readonly kind: 'example' | 'property';
}

const ID = /^[a-z]+\.[a-z0-9]+(-[a-z0-9]+)*$/;
const ANCHOR = /^[a-z0-9]+(-[a-z0-9]+)*$/;

/** The citation of seed rule `id`. */
export function seedCitation(id: SeedRuleId): Citation {
  const rule = SEED_RULES[id];
  return { ref: `§${rule.section}.${rule.sentence}`, href: `spec/rules.md#${id}`, text: rule.text };
}

/** The title of the seed section a rule belongs to (`§2 Creating a subscription`). */
export function sectionTitle(section: number): string {
  return `§${section} ${SEED_SECTIONS[String(section) as keyof typeof SEED_SECTIONS]}`;
}

/** Declares a case, checking the id, the title's level prefix and that it cites exactly one kind of rule. */
export function defineCase(spec: CaseSpec): ConformanceCase {
  if (!ID.test(spec.id)) throw new Error(`case id "${spec.id}" must be area.kebab-case`);
  const area = spec.id.slice(0, spec.id.indexOf('.'));
  if (area !== spec.area) throw new Error(`case id "${spec.id}" must start with its area "${spec.area}"`);
  if (!spec.title.startsWith(`${spec.level} `)) throw new Error(`case "${spec.id}": the title must start with "${spec.level} "`);
  const seed = spec.seed ?? [];
  if (seed.length > 0 === (spec.orbit !== undefined))
    throw new Error(`case "${spec.id}": cite either seed rules (a seed case) or one Orbit choice (an orbit case)`);
  for (const id of seed) if (!Object.hasOwn(SEED_RULES, id)) throw new Error(`case "${spec.id}": no seed rule ${id} in spec/rules.md`);
  if (spec.orbit && !ANCHOR.test(spec.orbit.anchor)) throw new Error(`case "${spec.id}": bad anchor ${spec.orbit.anchor}`);
  const cites: Citation[] = spec.orbit
    ? [{ ref: `README#${spec.orbit.anchor}`, href: `spec/README.md#${spec.orbit.anchor}`, text: spec.orbit.text }]
    : seed.map(seedCitation);
  return Object.freeze({ ...spec, kind: spec.kind ?? 'example', profile: spec.orbit ? 'orbit' : 'seed', seed, cites });
}

/** Whether a case belongs to `profile`: `orbit` holds every case, `seed` only the seed's rules. */
export function inProfile(c: Pick<ConformanceCase, 'profile'>, profile: Profile): boolean {
  return profile === 'orbit' || c.profile === 'seed';
}

/**
 * @module
 * The case model. A case is data plus one `run` function: a stable id (`area.short-name`, never
 * reused for another meaning), the requirement level of the clause it checks (MUST, SHOULD, MAY,
 * as in the graphql-http audits), the seed clause it comes from, and the features it needs. A
 * case whose features the configuration does not declare is skipped, never failed.
 */
import type { CaseContext } from './context.ts';
import type { Timing } from './config.ts';

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

export const LEVELS = ['MUST', 'SHOULD', 'MAY'] as const;
export type Level = (typeof LEVELS)[number];

/**
 * Optional capabilities a server declares in its configuration. A case that needs one is skipped
 * when it is not declared.
 */
export const FEATURES = {
  'results-http': 'the server implements the HTTP result seam POST /v1/queues/{queue_id}/results (cases that test the seam itself)',
  retention: 'results can be pruned (the configuration gives retention.command)',
  'connection-limit': 'the suite may open limits.maxConnections event connections to one node',
  'subscription-limit': 'the suite may fill the namespace of the full credential up to 64 subscriptions (the namespace holds nothing else)',
  'request-timeout': 'the suite may hold a request open for timing.requestTimeoutMs to observe the server-side timeout',
  history: "the server implements Orbit's configuration history GET /v1/subscriptions/{id}/history (an extension to the seed)",
} as const;
export type Feature = keyof typeof FEATURES;

export interface Clause {
  /** Seed section (`§1`-`§7`) or brief decision (`brief 4`). */
  readonly section: string;
  /** A short English paraphrase of the rule. */
  readonly text: string;
}

export interface ConformanceCase {
  /** `area.short-name`; stable forever. */
  readonly id: string;
  readonly area: Area;
  readonly level: Level;
  /** What the case checks, as a sentence that starts with the level ("MUST reject ..."). */
  readonly title: string;
  readonly clause: Clause;
  readonly features?: readonly Feature[];
  /** `example` cases send fixed inputs; `property` cases generate inputs with fast-check. */
  readonly kind?: 'example' | 'property';
  /** Per-case timeout; defaults to the runner's. A function receives the declared timing. */
  readonly timeoutMs?: number | ((timing: Timing) => number);
  run(ctx: CaseContext): Promise<void>;
}

const ID = /^[a-z]+\.[a-z0-9]+(-[a-z0-9]+)*$/;

/** Declares a case, checking the id and the title's level prefix. */
export function defineCase(spec: ConformanceCase): ConformanceCase {
  if (!ID.test(spec.id)) throw new Error(`case id "${spec.id}" must be area.kebab-case`);
  const area = spec.id.slice(0, spec.id.indexOf('.'));
  if (area !== spec.area) throw new Error(`case id "${spec.id}" must start with its area "${spec.area}"`);
  if (!spec.title.startsWith(`${spec.level} `)) throw new Error(`case "${spec.id}": the title must start with "${spec.level} "`);
  return Object.freeze({ kind: 'example', ...spec });
}

/** A failed check: the message says what was expected and what came back. */
export class CheckFailure extends Error {
  override readonly name = 'CheckFailure';
  /** For property cases: the seed and the shrunk counterexample. */
  readonly property: { seed: number; path: string | null; counterexample: string; numRuns: number; numShrinks: number } | undefined;

  constructor(message: string, property?: CheckFailure['property']) {
    super(message);
    this.property = property;
  }
}

/** Thrown by `ctx.skip()`: the case cannot run against this configuration. */
export class SkipSignal extends Error {
  override readonly name = 'SkipSignal';
}

/** `*` matches any run of characters; anything else is literal. */
export function globToRegExp(pattern: string): RegExp {
  const escaped = pattern.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(`^${escaped.join('.*')}$`);
}

/** Whether `id` matches any of the comma-separated glob patterns. */
export function matchesAny(id: string, patterns: readonly string[]): boolean {
  return patterns.some((p) => globToRegExp(p).test(id));
}

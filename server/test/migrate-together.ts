/**
 * `orbit migrate` processes started together: one per URL (the same database, or one database seen
 * through several Galera nodes). All must succeed, exactly one applies the whole chain, and every
 * report names the newest migration.
 */
import { expect } from 'vitest';
import { migrationsFor } from '../src/store/migrations.ts';
import type { Dialect } from '../src/store/sql.ts';
import { runOrbit } from '@orbit/testing';

export async function migrateTogether(urls: readonly string[], dialect: Dialect): Promise<void> {
  const tags = migrationsFor(dialect).map((m) => m.tag);
  const runs = await Promise.all(urls.map((url) => runOrbit(['migrate', '--database', url], {}, 90_000)));
  expect(runs.map((r) => [r.code, r.stderr])).toEqual(urls.map(() => [0, '']));
  const reports = runs.map((r) => JSON.parse(r.stdout) as { applied: string[]; current: string });
  expect(reports.map((r) => r.applied).sort((a, b) => b.length - a.length)).toEqual([tags, ...urls.slice(1).map(() => [])]);
  expect(reports.map((r) => r.current)).toEqual(urls.map(() => tags.at(-1)));
}

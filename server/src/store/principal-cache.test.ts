import { describe, expect, it } from 'vitest';
import { sha256Hex } from '../crypto.ts';
import type { Principal } from './principal.ts';
import { PrincipalCache } from './principal-cache.ts';

function principal(credentialId: string): Principal {
  return { credentialId, namespaceId: 'ns', applicationId: 'app', permissions: new Set(['events:consume']), queueIds: new Set(['q']) };
}

/** A credential table the test edits, a clock it moves, and a count of lookups. */
function setup(options: { maxEntries?: number } = {}) {
  let time = 0;
  const valid = new Map<string, Principal>();
  const lookups: string[] = [];
  const cache = new PrincipalCache(
    async (digest) => {
      lookups.push(digest);
      return valid.get(digest) ?? null;
    },
    { clock: () => time, maxAgeMs: 1000, ...options },
  );
  return {
    cache,
    valid,
    lookups,
    advance: (ms: number) => {
      time += ms;
    },
  };
}

describe('PrincipalCache', () => {
  it('answers from the cache for at most maxAgeMs, then asks again', async () => {
    const { cache, valid, lookups, advance } = setup();
    valid.set(sha256Hex('t1'), principal('c1'));
    expect((await cache.authenticate('t1'))?.credentialId).toBe('c1');
    advance(1000);
    expect((await cache.authenticate('t1'))?.credentialId).toBe('c1');
    expect(lookups).toHaveLength(1);
    valid.delete(sha256Hex('t1')); // revoked
    expect((await cache.authenticate('t1'))?.credentialId).toBe('c1');
    advance(1);
    expect(await cache.authenticate('t1')).toBeNull();
    expect(lookups).toHaveLength(2);
  });

  it('does not cache a refusal: a new credential works at once', async () => {
    const { cache, valid, lookups } = setup();
    expect(await cache.authenticate('t2')).toBeNull();
    valid.set(sha256Hex('t2'), principal('c2'));
    expect((await cache.authenticate('t2'))?.credentialId).toBe('c2');
    expect(lookups).toHaveLength(2);
    expect(cache.size).toBe(1);
  });

  it('holds at most maxEntries, dropping the oldest', async () => {
    const { cache, valid, lookups } = setup({ maxEntries: 3 });
    for (const t of ['a', 'b', 'c', 'd']) valid.set(sha256Hex(t), principal(t));
    for (const t of ['a', 'b', 'c', 'd']) await cache.authenticate(t);
    expect(cache.size).toBe(3);
    expect(lookups).toHaveLength(4);
    await cache.authenticate('b');
    expect(lookups).toHaveLength(4);
    await cache.authenticate('a');
    expect(lookups).toHaveLength(5);
  });

  it('shares a running lookup, and a shared refusal is asked again', async () => {
    const { cache, valid, lookups } = setup();
    valid.set(sha256Hex('t3'), principal('c3'));
    const both = await Promise.all([cache.authenticate('t3'), cache.authenticate('t3')]);
    expect(both.map((p) => p?.credentialId)).toEqual(['c3', 'c3']);
    expect(lookups).toHaveLength(1);
    const refused = await Promise.all([cache.authenticate('t4'), cache.authenticate('t4')]);
    expect(refused).toEqual([null, null]);
    expect(lookups).toHaveLength(3);
  });

  it('clear forgets every answer, including one whose query was running', async () => {
    const { cache, valid, lookups } = setup();
    valid.set(sha256Hex('t5'), principal('c5'));
    const running = cache.authenticate('t5');
    cache.clear();
    await running;
    expect(cache.size).toBe(0);
    await cache.authenticate('t5');
    cache.clear();
    valid.delete(sha256Hex('t5'));
    expect(await cache.authenticate('t5')).toBeNull();
    expect(lookups).toHaveLength(3);
  });
});

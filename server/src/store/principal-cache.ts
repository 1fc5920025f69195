/**
 * @module
 * The node's cache of bearer authentication (spec/README.md "Authentication is at most 1 s stale",
 * docs/operations.md, Credentials): token digest → principal, so that an HTTP request or a
 * WebSocket upgrade does not cost a database round trip. An answer is reused for at most
 * `ACCESS_MAX_STALENESS_MS` (the bound every claim and ACK already acts on), counted from when its
 * query was sent; so a revocation or a rotation takes effect on every node within that time. Only
 * principals are cached: an unknown token is looked up every time, so a new credential (or the new
 * token of a rotation) works at once. The cache holds at most `maxEntries`; the oldest go first.
 */
import { ACCESS_MAX_STALENESS_MS } from '../domain/access.ts';
import { sha256Hex } from '../crypto.ts';
import type { Principal } from './principal.ts';

/** Distinct tokens remembered at once; beyond it the oldest entry is dropped. */
export const PRINCIPAL_CACHE_ENTRIES = 10_000;

interface Entry {
  /** The clock's reading when the query behind `principal` was sent. */
  readonly sentAt: number;
  readonly principal: Principal;
}

export class PrincipalCache {
  /** In insertion order, which is age order: a refreshed entry is deleted and set again. */
  private readonly entries = new Map<string, Entry>();
  /** Lookups running now, by digest: concurrent requests with one token share one query. */
  private readonly inFlight = new Map<string, { readonly sentAt: number; readonly answer: Promise<Principal | null> }>();
  /** Counts `clear` calls: an answer to a query sent before the last one is not remembered. */
  private generation = 0;

  constructor(
    private readonly lookup: (digest: string) => Promise<Principal | null>,
    private readonly options: { readonly maxAgeMs?: number; readonly maxEntries?: number; readonly clock?: () => number } = {},
  ) {}

  private get maxAgeMs(): number {
    return this.options.maxAgeMs ?? ACCESS_MAX_STALENESS_MS;
  }

  private now(): number {
    return this.options.clock ? this.options.clock() : performance.now();
  }

  get size(): number {
    return this.entries.size;
  }

  authenticate(token: string): Promise<Principal | null> {
    return this.authenticateDigest(sha256Hex(token));
  }

  async authenticateDigest(digest: string): Promise<Principal | null> {
    const asked = this.now();
    const entry = this.entries.get(digest);
    if (entry && asked - entry.sentAt <= this.maxAgeMs) return entry.principal;
    if (entry) this.entries.delete(digest);
    const running = this.inFlight.get(digest);
    if (running) {
      const shared = await running.answer;
      // A refusal from a query sent before this question may predate the credential: ask again.
      if (shared) return shared;
    }
    return this.query(digest);
  }

  private async query(digest: string): Promise<Principal | null> {
    const sentAt = this.now();
    const generation = this.generation;
    const answer = this.lookup(digest);
    const run = { sentAt, answer };
    this.inFlight.set(digest, run);
    try {
      const principal = await answer;
      const held = this.entries.get(digest);
      if (principal && generation === this.generation && (!held || held.sentAt <= sentAt)) this.remember(digest, { sentAt, principal });
      else if (!principal) this.entries.delete(digest);
      return principal;
    } finally {
      if (this.inFlight.get(digest) === run) this.inFlight.delete(digest);
    }
  }

  private remember(digest: string, entry: Entry): void {
    this.entries.delete(digest);
    this.entries.set(digest, entry);
    const max = this.options.maxEntries ?? PRINCIPAL_CACHE_ENTRIES;
    while (this.entries.size > max) this.entries.delete(this.entries.keys().next().value!);
  }

  /**
   * Forgets every answer: this node just changed a credential (revoke, rotate), so its own next
   * request sees the change at once; other nodes see it within `maxAgeMs`.
   */
  clear(): void {
    this.generation++;
    this.entries.clear();
    this.inFlight.clear();
  }
}

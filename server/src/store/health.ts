/**
 * @module
 * Read-only queries for operations: readiness (the database answers and every migration this build
 * knows is applied) and the per-subscription backlog the metrics report at scrape time.
 */
import { pendingMigrations } from './migrations.ts';
import { num, numOrNull, pendingState, type Sql } from './sql.ts';

export interface Readiness {
  readonly ready: boolean;
  /** Why not, in general terms: goes into the 503 message. */
  readonly reason?: string;
  /** Specifics for the log only. */
  readonly detail?: string;
}

/**
 * Ready when the database answers and every migration of this build (`migrations.ts`) is recorded.
 * A database that is ahead (a newer node migrated it) is ready too: migrations only add, so rolling
 * upgrades work.
 */
export async function readiness(db: Sql): Promise<Readiness> {
  const rows = await db.all<{ version: unknown }>('SELECT version FROM orbit_migrations');
  const applied = new Set(rows.map((r) => num(r.version)));
  const missing = pendingMigrations(db.dialect, applied).map((m) => m.tag);
  if (missing.length > 0)
    return { ready: false, reason: 'database migrations are not current', detail: `not applied: ${missing.join(', ')}` };
  return { ready: true };
}

export interface BacklogRow {
  readonly subscriptionId: string;
  readonly queueId: string;
  /** PENDING, LEASED and EXPIRED deliveries (the subscription's `pending_count`). */
  readonly pendingCount: number;
  /** created_at of the oldest delivery that is not ACKED, or null when there is none. */
  readonly oldestUnackedAt: number | null;
}

/**
 * The backlog of at most `limit` non-retired subscriptions (by id), in one query: the engine's
 * `pending_count`, and the oldest delivery that is not ACKED, a range of the work index
 * (`deliveries_work`) only for a subscription that has one (at most max_pending rows).
 */
export async function backlog(db: Sql, limit: number): Promise<BacklogRow[]> {
  if (limit <= 0) return [];
  const rows = await db.all(
    `SELECT s.id, s.queue_id, s.pending_count,
            CASE WHEN s.pending_count > 0 THEN
              (SELECT MIN(d.created_at) FROM deliveries d${db.phrases.useIndex('deliveries_work')} WHERE d.subscription_id = s.id AND ${pendingState('d.state')})
            END AS oldest
       FROM subscriptions s WHERE s.retired_at IS NULL ORDER BY s.id LIMIT ${Math.trunc(limit)}`,
  );
  return rows.map((r) => ({
    subscriptionId: String(r.id),
    queueId: String(r.queue_id),
    pendingCount: num(r.pending_count),
    oldestUnackedAt: numOrNull(r.oldest),
  }));
}

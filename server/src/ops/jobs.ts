/**
 * @module
 * Background work of a node: the lease sweep, periodic retention of results and the expiry of
 * idempotency receipts. Each job runs one bounded batch at a time; a full batch runs the next one
 * at once, otherwise the job waits its interval. Runs never overlap, and `stop` waits for the
 * running batch (graceful shutdown).
 */
import type { Settings } from '../config.ts';
import { redeliveryPolicy } from '../domain/delivery.ts';
import type { DeliveryEngine } from '../engine/engine.ts';
import type { Store } from '../store/store.ts';
import type { Log } from './log.ts';
import type { OrbitMetrics } from './metrics.ts';
import { planRetention, retentionEnabled } from './retention-policy.ts';

export class PeriodicJob {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | null = null;
  private stopped = true;

  constructor(
    readonly name: string,
    private readonly intervalMs: number,
    /** One batch; resolves true when more work is ready now. */
    private readonly work: () => Promise<boolean>,
    private readonly log: Log,
  ) {}

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.schedule(this.intervalMs);
  }

  private schedule(delay: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => this.tick(), delay);
    this.timer.unref();
  }

  private tick(): void {
    this.running = this.work()
      .then(
        (more) => this.schedule(more ? 0 : this.intervalMs),
        (error: unknown) => {
          this.log('warn', `${this.name} failed; retrying after the interval`, { error: String((error as Error)?.message ?? error) });
          this.schedule(this.intervalMs);
        },
      )
      .finally(() => {
        this.running = null;
      });
  }

  /** Runs one batch now (tests, `orbit` tools); does not disturb the schedule. */
  async runOnce(): Promise<boolean> {
    return this.work();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }
}

export interface JobDeps {
  readonly store: Store;
  readonly engine: DeliveryEngine;
  readonly settings: Settings;
  readonly log: Log;
  readonly metrics: OrbitMetrics;
  /** Called after the sweep recovered leases, so connected consumers are offered them at once. */
  readonly onRecovered: () => void;
}

/** The lease sweep: recovers expired leases of every subscription (see `engine/recover.ts`). */
export function sweepJob(deps: JobDeps): PeriodicJob {
  const policy = redeliveryPolicy(deps.settings);
  return new PeriodicJob(
    'lease sweep',
    deps.settings.sweepIntervalMs,
    async () => {
      const report = await deps.engine.sweep(policy, deps.settings.sweepBatchSize);
      deps.metrics.swept(report);
      if (report.pending + report.expired > 0) {
        deps.log('debug', 'expired leases recovered', { pending: report.pending, expired: report.expired });
        deps.onRecovered();
      }
      return report.full;
    },
    deps.log,
  );
}

/** Rounds of deletion per run, so one run stays short; the next run continues. */
const PRUNE_BATCHES_PER_RUN = 10;

/** Periodic retention by `retention_max_age_ms` and/or `retention_max_results` (both 0: none). */
export function retentionJob(deps: JobDeps): PeriodicJob | null {
  const { settings } = deps;
  const limits = { maxResults: settings.retentionMaxResults, maxAgeMs: settings.retentionMaxAgeMs };
  if (!retentionEnabled(limits)) return null;
  let unfinished = false;
  return new PeriodicJob(
    'retention',
    settings.retentionIntervalMs,
    async () => {
      const position = await deps.store.logPosition();
      const page = settings.retentionBatchSize;
      const oldest = limits.maxAgeMs > 0 ? await deps.store.oldestResults(position.boundary, page) : [];
      const plan = planRetention({ ...position, ...limits, now: Date.now(), oldest, oldestTruncated: oldest.length >= page });
      // Without a new boundary, an unfinished deletion below the current one still continues.
      const before = plan.beforeSequence ?? (unfinished ? position.boundary + 1n : null);
      if (before === null) return false;
      const report = await deps.store.prune(before, { batchSize: settings.retentionBatchSize, maxBatches: PRUNE_BATCHES_PER_RUN });
      unfinished = report.more === true;
      deps.metrics.pruned(report.deleted);
      if (plan.beforeSequence !== null || report.deleted > 0)
        deps.log('info', 'retention applied', { boundary: report.boundary, deleted: report.deleted });
      return plan.more || unfinished;
    },
    deps.log,
  );
}

/**
 * Idempotency receipts older than `idempotency_retention_ms` are deleted, in batches of
 * `retention_batch_size`, every `retention_interval_ms`: always on, like Stripe's 24 h window.
 */
export function receiptRetentionJob(deps: JobDeps): PeriodicJob {
  const { settings } = deps;
  return new PeriodicJob(
    'receipt retention',
    settings.retentionIntervalMs,
    async () => {
      const report = await deps.store.expireReceipts(settings.idempotencyRetentionMs, settings.retentionBatchSize);
      if (report.deleted > 0) deps.log('debug', 'expired idempotency receipts deleted', { deleted: report.deleted });
      return report.full;
    },
    deps.log,
  );
}

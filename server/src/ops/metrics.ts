/**
 * @module
 * Prometheus metrics (docs/operations.md, Metrics) in a registry of our own (never prom-client's
 * global one, so two servers in one process do not mix). The engine and the HTTP layer report
 * through the small hook interfaces below; the per-subscription backlog and the cluster-wide counts
 * (`store/cluster.ts`) are computed at scrape time from the database, so every node reports the
 * same values for them. `METRICS` is the documented list: docs/operations.md is checked against it.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Leased, SweepReport } from '../engine/engine.ts';
import type { Store } from '../store/store.ts';

/** Name, type and meaning of every Orbit metric (process_* and nodejs_* defaults come on top). */
export const METRICS = {
  orbit_event_connections: {
    type: 'gauge',
    labels: [],
    help: 'Open event connections on this node, including upgrades still being authenticated (limit: max_connections).',
  },
  orbit_event_sessions: { type: 'gauge', labels: [], help: 'Event connections bound to a subscription (events.welcome sent).' },
  orbit_claims_total: {
    type: 'counter',
    labels: ['outcome'],
    help: 'Claim transactions by outcome: claimed (leased at least one delivery), empty, paused, retired, history_expired, error.',
  },
  orbit_claim_pool_depth: {
    type: 'gauge',
    labels: [],
    help: "Claims waiting plus running in this node's claim pool (spec/rules.md#s5-19: at most 128).",
  },
  orbit_deliveries_sent_total: { type: 'counter', labels: [], help: 'event.deliver frames written (each after its lease was committed).' },
  orbit_acks_total: { type: 'counter', labels: ['outcome'], help: 'event.ack answers by outcome: new, deduplicated, lease_lost.' },
  orbit_publish_to_deliver_seconds: {
    type: 'histogram',
    labels: [],
    help: "From a result's occurred_at to its event.deliver being written (includes redeliveries).",
  },
  orbit_deliver_to_ack_seconds: {
    type: 'histogram',
    labels: [],
    help: 'From the lease of a delivery to its first valid ACK on the same connection.',
  },
  orbit_http_requests_total: {
    type: 'counter',
    labels: ['method', 'route', 'code'],
    help: 'HTTP requests by method, route template and status code.',
  },
  orbit_http_request_duration_seconds: {
    type: 'histogram',
    labels: ['method', 'route'],
    help: 'HTTP request duration by method and route template.',
  },
  orbit_upgrades_rejected_total: {
    type: 'counter',
    labels: ['code'],
    help: 'Refused WebSocket upgrades by error code (PROTOCOL_REQUIRED, CAPACITY_EXCEEDED, UNAUTHENTICATED, …).',
  },
  orbit_subscription_pending: {
    type: 'gauge',
    labels: ['subscription_id', 'queue_id'],
    help: 'Backlog per subscription at scrape time: PENDING + LEASED + EXPIRED deliveries (pending_count).',
  },
  orbit_subscription_oldest_unacked_age_seconds: {
    type: 'gauge',
    labels: ['subscription_id', 'queue_id'],
    help: 'Age of the oldest delivery that is not ACKED (0 when there is none), at scrape time.',
  },
  orbit_subscription_sessions: {
    type: 'gauge',
    labels: ['subscription_id', 'queue_id'],
    help: 'Sessions bound to the subscription on every live node, at scrape time (the same on every node).',
  },
  orbit_cluster_nodes: {
    type: 'gauge',
    labels: [],
    help: 'Live orbit serve nodes on this database (renewed within node_ttl_ms), at scrape time (the same on every node).',
  },
  orbit_cluster_sessions: {
    type: 'gauge',
    labels: [],
    help: 'Sessions bound on every live node, each counted once, at scrape time (the same on every node).',
  },
  orbit_cluster_backlog: {
    type: 'gauge',
    labels: [],
    help: 'PENDING + LEASED + EXPIRED deliveries of every subscription, at scrape time (the same on every node).',
  },
  orbit_leases_recovered_total: {
    type: 'counter',
    labels: ['state'],
    help: 'Expired leases recovered by the background sweep of this node, by new state (PENDING, EXPIRED).',
  },
  orbit_results_pruned_total: { type: 'counter', labels: [], help: 'Results deleted by periodic retention on this node.' },
  orbit_result_log_head: { type: 'gauge', labels: [], help: 'The committed head sequence of the result log, at scrape time.' },
  orbit_result_log_retention_boundary: {
    type: 'gauge',
    labels: [],
    help: 'The retention boundary: results at or below it may have been pruned.',
  },
  orbit_metrics_scrape_errors_total: {
    type: 'counter',
    labels: [],
    help: 'Scrapes whose database queries (backlog, log position, cluster counts) failed; those gauges keep their last values.',
  },
} as const;

type Name = keyof typeof METRICS;

/** What the event engine reports (called from the gateway and sessions). */
export interface EngineHooks {
  claimed(outcome: 'claimed' | 'empty' | 'paused' | 'retired' | 'history_expired' | 'error'): void;
  sent(item: Leased): void;
  /** `leaseUntil`: the lease deadline this connection holds for the delivery, when it holds one. */
  acked(outcome: 'acknowledged' | 'duplicate' | 'lease_lost', leaseUntil?: number): void;
  upgradeRejected(code: string): void;
}

/** What the engine exposes for the gauges. */
export interface EngineGauges {
  connections(): number;
  sessions(): number;
  claimPoolDepth(): number;
}

const LATENCY_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];

export class OrbitMetrics implements EngineHooks {
  readonly registry = new Registry();
  private engine: EngineGauges | null = null;
  private readonly counters: Partial<Record<Name, Counter>> = {};
  private readonly gauges: Partial<Record<Name, Gauge>> = {};
  private readonly histograms: Partial<Record<Name, Histogram>> = {};

  constructor(
    private readonly store: Store,
    private readonly options: { leaseDurationMs: number; backlogLimit: number; nodeTtlMs: number },
  ) {
    collectDefaultMetrics({ register: this.registry });
    for (const [name, def] of Object.entries(METRICS) as [Name, (typeof METRICS)[Name]][]) {
      const common = { name, help: def.help, labelNames: [...def.labels] as string[], registers: [this.registry] };
      if (def.type === 'counter') this.counters[name] = new Counter(common);
      else if (def.type === 'histogram') this.histograms[name] = new Histogram({ ...common, buckets: LATENCY_BUCKETS });
      else this.gauges[name] = new Gauge(common);
    }
    for (const outcome of ['claimed', 'empty', 'paused', 'retired', 'history_expired', 'error'])
      this.counters.orbit_claims_total!.inc({ outcome }, 0);
    for (const outcome of ['new', 'deduplicated', 'lease_lost']) this.counters.orbit_acks_total!.inc({ outcome }, 0);
    for (const state of ['PENDING', 'EXPIRED']) this.counters.orbit_leases_recovered_total!.inc({ state }, 0);
  }

  bindEngine(engine: EngineGauges): void {
    this.engine = engine;
  }

  // --- hooks ----------------------------------------------------------------------------------

  claimed(outcome: Parameters<EngineHooks['claimed']>[0]): void {
    this.counters.orbit_claims_total!.inc({ outcome });
  }

  sent(item: Leased): void {
    this.counters.orbit_deliveries_sent_total!.inc();
    this.histograms.orbit_publish_to_deliver_seconds!.observe(Math.max(0, Date.now() - item.event.occurredAt) / 1000);
  }

  acked(outcome: Parameters<EngineHooks['acked']>[0], leaseUntil?: number): void {
    const label = outcome === 'acknowledged' ? 'new' : outcome === 'duplicate' ? 'deduplicated' : 'lease_lost';
    this.counters.orbit_acks_total!.inc({ outcome: label });
    if (outcome === 'acknowledged' && leaseUntil !== undefined && leaseUntil > 0) {
      const leasedAt = leaseUntil - this.options.leaseDurationMs;
      this.histograms.orbit_deliver_to_ack_seconds!.observe(Math.max(0, Date.now() - leasedAt) / 1000);
    }
  }

  upgradeRejected(code: string): void {
    this.counters.orbit_upgrades_rejected_total!.inc({ code });
  }

  httpRequest(method: string, route: string, code: number, seconds: number): void {
    this.counters.orbit_http_requests_total!.inc({ method, route, code: String(code) });
    this.histograms.orbit_http_request_duration_seconds!.observe({ method, route }, seconds);
  }

  swept(report: SweepReport): void {
    if (report.pending > 0) this.counters.orbit_leases_recovered_total!.inc({ state: 'PENDING' }, report.pending);
    if (report.expired > 0) this.counters.orbit_leases_recovered_total!.inc({ state: 'EXPIRED' }, report.expired);
  }

  pruned(count: number): void {
    if (count > 0) this.counters.orbit_results_pruned_total!.inc(count);
  }

  // --- exposition -----------------------------------------------------------------------------

  /** Refreshes the scrape-time gauges, then renders the Prometheus text format. */
  async exposition(): Promise<{ contentType: string; body: string }> {
    const engine = this.engine;
    this.gauges.orbit_event_connections!.set(engine?.connections() ?? 0);
    this.gauges.orbit_event_sessions!.set(engine?.sessions() ?? 0);
    this.gauges.orbit_claim_pool_depth!.set(engine?.claimPoolDepth() ?? 0);
    try {
      const ttl = this.options.nodeTtlMs;
      const [rows, position, cluster] = await Promise.all([
        this.store.backlog(this.options.backlogLimit),
        this.store.logPosition(),
        this.store.clusterOverview(ttl),
      ]);
      const sessions = await this.store.sessionsBySubscription(
        rows.map((r) => r.subscriptionId),
        ttl,
      );
      const now = Date.now();
      const pending = this.gauges.orbit_subscription_pending!;
      const age = this.gauges.orbit_subscription_oldest_unacked_age_seconds!;
      const bound = this.gauges.orbit_subscription_sessions!;
      pending.reset();
      age.reset();
      bound.reset();
      for (const row of rows) {
        const labels = { subscription_id: row.subscriptionId, queue_id: row.queueId };
        pending.set(labels, row.pendingCount);
        age.set(labels, row.oldestUnackedAt === null ? 0 : Math.max(0, now - row.oldestUnackedAt) / 1000);
        bound.set(labels, sessions.get(row.subscriptionId) ?? 0);
      }
      this.gauges.orbit_cluster_nodes!.set(cluster.nodes);
      this.gauges.orbit_cluster_sessions!.set(cluster.sessions);
      this.gauges.orbit_cluster_backlog!.set(cluster.backlog);
      this.gauges.orbit_result_log_head!.set(Number(position.head));
      this.gauges.orbit_result_log_retention_boundary!.set(Number(position.boundary));
    } catch {
      this.counters.orbit_metrics_scrape_errors_total!.inc();
    }
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}

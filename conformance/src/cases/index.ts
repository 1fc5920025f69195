/**
 * @module
 * The catalogue: every case, grouped by area in the order the runner uses (a large area is split
 * over several files, listed here in order). Ids are stable; `conformance/case-ids.json` pins them
 * and their order (see test/catalogue.test.ts).
 */
import type { ConformanceCase } from '../case.ts';
import { ackCases } from './ack.ts';
import { ackFlowCases } from './ack-flow.ts';
import { ackPropertyCases } from './ack-properties.ts';
import { deliveryCases } from './deliveries.ts';
import { envelopeCases } from './envelope.ts';
import { envelopeRequestCases } from './envelope-requests.ts';
import { faultCases } from './faults.ts';
import { heartbeatCases } from './heartbeat.ts';
import { historyCases } from './history.ts';
import { idempotencyCases } from './idempotency.ts';
import { jsonCases } from './json.ts';
import { publishBatchCases } from './publish-batch.ts';
import { retentionCases } from './retention.ts';
import { retireCases } from './retire.ts';
import { sessionCases } from './session.ts';
import { sessionFrameCases } from './session-frames.ts';
import { subscriptionCases } from './subscriptions.ts';
import { subscriptionLifecycleCases } from './subscriptions-lifecycle.ts';
import { traceContextCases } from './trace-context.ts';
import { upgradeCases } from './upgrade.ts';
import { validationCases } from './validation.ts';

export const ALL_CASES: readonly ConformanceCase[] = Object.freeze([
  ...jsonCases,
  ...envelopeCases,
  ...envelopeRequestCases,
  ...validationCases,
  ...idempotencyCases,
  ...publishBatchCases,
  ...subscriptionCases,
  ...subscriptionLifecycleCases,
  ...deliveryCases,
  ...traceContextCases,
  ...upgradeCases,
  ...sessionCases,
  ...sessionFrameCases,
  ...ackCases,
  ...ackFlowCases,
  ...ackPropertyCases,
  ...heartbeatCases,
  ...retireCases,
  ...historyCases,
  ...retentionCases,
  ...faultCases,
]);

const seen = new Set<string>();
for (const c of ALL_CASES) {
  if (seen.has(c.id)) throw new Error(`duplicate case id ${c.id}`);
  seen.add(c.id);
}

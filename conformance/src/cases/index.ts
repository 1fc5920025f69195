/**
 * @module
 * The catalogue: every case, grouped by area in the order the runner uses. Ids are stable;
 * `conformance/case-ids.json` pins them (see test/catalogue.test.ts).
 */
import type { ConformanceCase } from '../case.ts';
import { ackCases } from './ack.ts';
import { deliveryCases } from './deliveries.ts';
import { envelopeCases } from './envelope.ts';
import { faultCases } from './faults.ts';
import { heartbeatCases } from './heartbeat.ts';
import { historyCases } from './history.ts';
import { idempotencyCases } from './idempotency.ts';
import { jsonCases } from './json.ts';
import { retentionCases } from './retention.ts';
import { retireCases } from './retire.ts';
import { sessionCases } from './session.ts';
import { subscriptionCases } from './subscriptions.ts';
import { upgradeCases } from './upgrade.ts';
import { validationCases } from './validation.ts';

export const ALL_CASES: readonly ConformanceCase[] = Object.freeze([
  ...jsonCases,
  ...envelopeCases,
  ...validationCases,
  ...idempotencyCases,
  ...subscriptionCases,
  ...deliveryCases,
  ...upgradeCases,
  ...sessionCases,
  ...ackCases,
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

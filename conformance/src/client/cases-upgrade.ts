/**
 * @module
 * Client cases about the one HTTP route a consumer touches, `GET /v1/events/connect`: each refusal
 * of the upgrade it can get (spec/README.md#event-engine lists them: 426, 429, 401, 403, 503) and
 * what a client does after it, as one table. A refusal a new attempt cannot change is reported and
 * final; 429 and 503 are retried, never sooner than their `Retry-After` (spec/rules.md#s7-20,
 * #s7-21). A 400 is not scripted: it answers a malformed upgrade (a query string, a foreign
 * Origin), which `client.no-credential-in-url` already rules out.
 */
import type { ErrorCode } from '@orbit/generated';
import { SUBPROTOCOL } from '@orbit/spec/protocol';
import type { SeedRuleId } from '../seed-rules.ts';
import { type ClientCase, defineClientCase } from './case.ts';

interface Refusal {
  readonly id: string;
  readonly status: number;
  readonly code: ErrorCode;
  readonly rule: SeedRuleId;
  /** Stop, or retry no sooner than `retryAfterS` (the header the refusal carries). */
  readonly retryAfterS?: number;
  readonly headers?: Readonly<Record<string, string>>;
}

export const UPGRADE_REFUSALS: readonly Refusal[] = [
  {
    id: 'client.stop-on-426',
    status: 426,
    code: 'PROTOCOL_REQUIRED',
    rule: 's7-19',
    headers: { upgrade: 'websocket', 'sec-websocket-protocol': SUBPROTOCOL },
  },
  { id: 'client.stop-on-401', status: 401, code: 'UNAUTHENTICATED', rule: 's7-11' },
  { id: 'client.stop-on-403', status: 403, code: 'PERMISSION_DENIED', rule: 's7-12' },
  { id: 'client.retry-after-429', status: 429, code: 'CAPACITY_EXCEEDED', rule: 's7-20', retryAfterS: 1 },
  // The seed's server always says 1 s; a client that waits a fixed second instead of reading the
  // header passes the row above and fails this one.
  { id: 'client.retry-after-429-longer', status: 429, code: 'CAPACITY_EXCEEDED', rule: 's7-20', retryAfterS: 3 },
  { id: 'client.retry-after-503', status: 503, code: 'UNAVAILABLE', rule: 's7-21', retryAfterS: 1 },
];

/** Scheduling slack of the runner's clock: Retry-After counts whole seconds from the answer. */
const SLACK_MS = 50;

function refusalCase(r: Refusal): ClientCase {
  const retry = r.retryAfterS !== undefined;
  return defineClientCase({
    id: r.id,
    level: 'MUST',
    title: retry
      ? `MUST wait at least Retry-After (${r.retryAfterS} s) before connecting again after ${r.status} ${r.code}`
      : `MUST report ${r.code} and stop after ${r.status}, not retry the same upgrade`,
    seed: [r.rule],
    timeoutMs: retry ? (r.retryAfterS ?? 0) * 1000 + 30_000 : undefined,
    async run(t) {
      const headers = { ...r.headers, ...(retry ? { 'retry-after': String(r.retryAfterS) } : {}) };
      t.server.refuse = (attempt) => (attempt === 0 ? { status: r.status, code: r.code, headers } : undefined);
      await t.start();
      if (!retry) {
        await t.wait('the upgrade', () => t.server.upgrades[0], t.env.reconnectWithinMs);
        return t.expectStop(r.code, 1);
      }
      await t.session(0, r.retryAfterS! * 1000 + t.env.reconnectWithinMs);
      const [refused, next] = t.server.upgrades;
      const waited = next!.at - refused!.at;
      if (waited < r.retryAfterS! * 1000 - SLACK_MS)
        t.fail(`the client connected again ${waited} ms after ${r.status} with Retry-After: ${r.retryAfterS}`);
    },
  });
}

export const UPGRADE_CASES: readonly ClientCase[] = UPGRADE_REFUSALS.map(refusalCase);

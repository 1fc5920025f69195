/**
 * @module
 * Starts the fixture: an in-memory implementation of orbit.events.v1 and its management API on
 * 127.0.0.1, written only from spec/ (rules.md, the schemas, the codec, the error table). It is
 * test support for the conformance suite, not product code, and imports nothing from server/.
 */
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { EventEngine, type EventTiming } from './events.ts';
import type { Faults } from './faults.ts';
import { httpHandler } from './http.ts';
import { State } from './state.ts';

export interface FixtureOptions {
  readonly port?: number;
  readonly faults?: Faults;
  readonly timing?: Partial<EventTiming> & { readonly requestTimeoutMs?: number };
  readonly maxConnections?: number;
  /** Called by the crash fault; the CLI exits the process, a test in-process need not. */
  readonly crash?: () => void;
}

/** The fixture's timings: short, so that expiry cases take about a second. */
export const FIXTURE_TIMING = { leaseMs: 1_000, heartbeatMs: 400, idleMs: 1_500, helloMs: 1_000, writeMs: 2_000, requestTimeoutMs: 1_500 };

export interface RunningFixture {
  readonly url: string;
  readonly adminToken: string;
  readonly state: State;
  stop(): Promise<void>;
}

export async function startFixture(options: FixtureOptions = {}): Promise<RunningFixture> {
  const timing = { ...FIXTURE_TIMING, ...options.timing };
  const faults: Faults = options.faults ?? new Set();
  const state = new State(faults, timing.leaseMs);
  const adminToken = randomBytes(16).toString('hex');
  const events = new EventEngine({
    state,
    faults,
    timing,
    maxConnections: options.maxConnections ?? 12,
    crash: options.crash ?? (() => {}),
  });
  const server = createServer(
    httpHandler({ state, faults, requestTimeoutMs: timing.requestTimeoutMs, adminToken, wake: () => events.wake() }),
  );
  server.on('upgrade', (req, socket, head) => events.upgrade(req, socket, head));
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    adminToken,
    state,
    async stop() {
      events.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

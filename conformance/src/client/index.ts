/**
 * @module
 * Client mode: `orbit-conformance client --config FILE` certifies a consumer of orbit.events.v1 in
 * any language. The runner plays the server and drives the client through the harness protocol
 * (conformance/harness.schema.json); the catalogue is conformance/CASES.md, "Client mode".
 */
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import YAML from 'yaml';
import { ConfigError } from '../config.ts';
import type { ClientCase, ClientEnvironment } from './case.ts';
import { CLOSE_CASES } from './cases-close.ts';
import { CONNECTION_CASES } from './cases-connection.ts';
import { DELIVERY_CASES } from './cases-delivery.ts';
import { UPGRADE_CASES } from './cases-upgrade.ts';
import { validateClientModeConfig } from './harness.generated.ts';

export { ClientCaseContext, defineClientCase } from './case.ts';
export type { ClientCase, ClientCaseSpec, ClientEnvironment } from './case.ts';
export { runClientSuite } from './runner.ts';
export type { ClientRunOptions } from './runner.ts';
export type { ClientModeConfig, HarnessConfig, HarnessReport } from './harness.generated.ts';

/** Every client case, in catalogue order. */
export const CLIENT_CASES: readonly ClientCase[] = [...DELIVERY_CASES, ...CONNECTION_CASES, ...UPGRADE_CASES, ...CLOSE_CASES];

/** Reads a client-mode configuration file (YAML or JSON) into the run's environment. */
export function loadClientConfig(path: string): ClientEnvironment {
  let value: unknown;
  try {
    value = YAML.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new ConfigError(`cannot read ${path}: ${(error as Error).message}`);
  }
  if (!validateClientModeConfig(value)) {
    const e = validateClientModeConfig.errors?.[0];
    throw new ConfigError(`${path}: ${e?.instancePath || '/'} ${e?.message ?? 'is not a client-mode configuration'}`);
  }
  const base = dirname(resolve(path));
  return {
    program: { command: value.command, cwd: resolve(base, value.cwd ?? '.'), ...(value.env ? { env: value.env } : {}) },
    heartbeatIntervalMs: value.heartbeat_interval_ms ?? 500,
    reconnectWithinMs: value.reconnect_within_ms ?? 5_000,
    quietMs: value.quiet_ms ?? 1_500,
    caseTimeoutMs: value.case_timeout_ms ?? 30_000,
  };
}

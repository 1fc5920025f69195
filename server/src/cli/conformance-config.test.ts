import { describe, expect, it } from 'vitest';
import { resolveSettings } from '../config.ts';
import { defaultUrl, suiteTiming } from './conformance-config.ts';

describe('orbit conformance-config', () => {
  it('reaches the server at its listener, a wildcard host on loopback, https when it serves TLS', () => {
    const at = (host: string, tls = false) => defaultUrl({ listen: { host, port: 8080 }, tls: tls ? ({} as never) : null });
    expect(at('127.0.0.1')).toBe('http://127.0.0.1:8080');
    expect(at('0.0.0.0')).toBe('http://127.0.0.1:8080');
    expect(at('::')).toBe('http://[::1]:8080');
    expect(at('10.0.0.5', true)).toBe('https://10.0.0.5:8080');
  });

  it("tells the suite the server's timings, the backoff's cap as the longest redelivery delay, and a quiet window inside a lease", () => {
    const settings = resolveSettings({
      env: {
        ORBIT_LEASE_DURATION_MS: '1000',
        ORBIT_REDELIVERY_BACKOFF_MS: '50',
        ORBIT_REDELIVERY_BACKOFF_MAX_MS: '400',
        ORBIT_MAX_CONNECTIONS: '12',
      },
    });
    expect(suiteTiming(settings)).toEqual({
      timing: {
        leaseDurationMs: 1000,
        heartbeatIntervalMs: 15_000,
        idleTimeoutMs: 60_000,
        helloTimeoutMs: 5_000,
        writeTimeoutMs: 5_000,
        requestTimeoutMs: 8_000,
        redeliveryBackoffMs: 400,
        quietMs: 400,
      },
      limits: { maxConnections: 12 },
    });
    expect(suiteTiming(resolveSettings({})).timing).toMatchObject({ leaseDurationMs: 30_000, redeliveryBackoffMs: 0, quietMs: 1_000 });
  });
});

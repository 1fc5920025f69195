/**
 * API shortcuts shared by the engine and operations suites, and a self-signed certificate made at
 * test time.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { api } from './harness.ts';

export const TASK = '66666666666666666666666666666666';

export async function publish(base: string, token: string, queueId: string, n = 1, type = 'task.succeeded'): Promise<void> {
  for (let i = 0; i < n; i++) {
    const r = await api(base, 'POST', `/v1/queues/${queueId}/results`, {
      token,
      key: `p-${Math.random()}`,
      body: { type, task_id: TASK, task_revision: String(i + 1) },
    });
    expect(r.status).toBe(201);
  }
}

export async function subscribe(base: string, token: string, queueId: string, extra: Record<string, unknown> = {}): Promise<any> {
  const r = await api(base, 'POST', '/v1/subscriptions', {
    token,
    key: `s-${Math.random()}`,
    body: { name: `s${Math.random().toString(36).slice(2, 10)}`, queue_id: queueId, ...extra },
    expect: 'validateSubscriptionResult',
  });
  expect(r.status, r.text).toBe(201);
  return r.json.data.subscription;
}

export async function configure(base: string, token: string, id: string, enabled: boolean): Promise<void> {
  const current = await api(base, 'GET', `/v1/subscriptions/${id}`, { token });
  const r = await api(base, 'POST', `/v1/subscriptions/${id}:configure`, {
    token,
    key: `c-${Math.random()}`,
    body: { expected_revision: current.json.data.revision, enabled, reason: 'test' },
  });
  expect(r.status).toBe(200);
}

export async function deliveries(base: string, token: string, subscriptionId: string): Promise<any[]> {
  const r = await api(base, 'GET', `/v1/subscriptions/${subscriptionId}/deliveries?limit=100`, { token, expect: 'validateDeliveryList' });
  expect(r.status).toBe(200);
  return r.json.data.items;
}

/** A self-signed P-256 certificate for 127.0.0.1 in a new temp dir. */
export function selfSignedCertificate(): { dir: string; cert: string; key: string } {
  const dir = mkdtempSync(join(tmpdir(), 'orbit-tls-'));
  const cert = join(dir, 'cert.pem');
  const key = join(dir, 'key.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
      '-keyout',
      key,
      '-out',
      cert,
    ],
    { stdio: 'ignore' },
  );
  return { dir, cert, key };
}

/**
 * @module
 * API shortcuts that tests use to set up a scene: publish results, create and configure a
 * subscription (or bootstrap one through a balancer), list its deliveries. Each one throws when
 * the server does not answer as the contract says, so a broken setup fails the test that needed it.
 */
import type { BootstrapResult, Store } from '../../server/src/internal.ts';
import type { HaproxyProcess } from './haproxy.ts';
import { type ApiResponse, api } from './http.ts';
import { ALL_PERMISSIONS } from './servers.ts';

export const TASK = '66666666666666666666666666666666';

function expectStatus(response: ApiResponse, status: number, what: string): void {
  if (response.status !== status) throw new Error(`${what}: expected ${status}, got ${response.status}: ${response.text}`);
}

export async function publish(base: string, token: string, queueId: string, n = 1, type = 'task.succeeded'): Promise<void> {
  for (let i = 0; i < n; i++) {
    const r = await api(base, 'POST', `/v1/queues/${queueId}/results`, {
      token,
      key: `p-${Math.random()}`,
      body: { type, task_id: TASK, task_revision: String(i + 1) },
    });
    expectStatus(r, 201, 'publish');
  }
}

export async function subscribe(base: string, token: string, queueId: string, extra: Record<string, unknown> = {}): Promise<any> {
  const r = await api(base, 'POST', '/v1/subscriptions', {
    token,
    key: `s-${Math.random()}`,
    body: { name: `s${Math.random().toString(36).slice(2, 10)}`, queue_id: queueId, ...extra },
    expect: 'validateSubscriptionResult',
  });
  expectStatus(r, 201, 'create subscription');
  return r.json.data.subscription;
}

/**
 * The setup of a topology test's consumer: namespace `name` bootstrapped in `store` (application
 * `app`, one queue `q`, every permission), and a subscription named `name` on that queue created
 * through `balancer`, as a client behind it would, with `max_pending` 1000 (the most that
 * spec/openapi.yaml allows). Throws unless the balancer answers 201. Here, not in haproxy.ts: that
 * module must stay free of workspace imports (see its opening comment).
 */
export async function subscribeThroughBalancer(
  store: Store,
  balancer: HaproxyProcess,
  name: string,
): Promise<{ boot: BootstrapResult; queueId: string; subscriptionId: string }> {
  const boot = await store.bootstrap({ namespace: name, application: 'app', queues: ['q'], permissions: ALL_PERMISSIONS });
  const queueId = boot.queue_ids.q!;
  const subscription = await subscribe(balancer.url, boot.token, queueId, { name, max_pending: 1000 });
  return { boot, queueId, subscriptionId: subscription.id as string };
}

export async function configure(base: string, token: string, id: string, enabled: boolean): Promise<void> {
  const current = await api(base, 'GET', `/v1/subscriptions/${id}`, { token });
  const r = await api(base, 'POST', `/v1/subscriptions/${id}:configure`, {
    token,
    key: `c-${Math.random()}`,
    body: { expected_revision: current.json.data.revision, enabled, reason: 'test' },
  });
  expectStatus(r, 200, 'configure subscription');
}

export async function deliveries(base: string, token: string, subscriptionId: string): Promise<any[]> {
  const r = await api(base, 'GET', `/v1/subscriptions/${subscriptionId}/deliveries?limit=100`, { token, expect: 'validateDeliveryList' });
  expectStatus(r, 200, 'list deliveries');
  return r.json.data.items;
}

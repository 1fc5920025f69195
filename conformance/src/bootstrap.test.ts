import { describe, expect, it } from 'vitest';
import { type BootstrapOutput, bootstrapRoles, type RoleRequest } from './bootstrap.ts';
import { ROLES } from './config.ts';

/** A credential store in memory: queue ids derived from namespace and name, tokens numbered. */
function fakeStore() {
  const requests: RoleRequest[] = [];
  const create = async (request: RoleRequest): Promise<BootstrapOutput> => {
    requests.push(request);
    const queue_ids = Object.fromEntries(
      request.queues.map((q) => [q, `${request.namespace === 'conformance' ? 'a' : 'b'}${request.queues.indexOf(q)}`.padEnd(32, '0')]),
    );
    return { token: `token-${requests.length}`, credential_id: String(requests.length).padStart(32, '0'), queue_ids };
  };
  return { requests, create };
}

describe('bootstrapRoles', () => {
  it('creates one credential per role with the plan, and takes the queues from full and otherNamespace', async () => {
    const store = fakeStore();
    const { credentials, queues } = await bootstrapRoles(store.create);
    expect(store.requests.map((r) => r.role)).toEqual(Object.keys(ROLES));
    const byRole = Object.fromEntries(store.requests.map((r) => [r.role, r]));
    expect(byRole.readOnly).toMatchObject({ namespace: 'conformance', permissions: ['events:read'] });
    expect(byRole.otherNamespace).toMatchObject({ namespace: 'conformance-other' });
    expect(byRole.sameNamespace!.application).not.toBe(byRole.full!.application);
    expect(credentials.full).toEqual({ token: 'token-1', credentialId: '1'.padStart(32, '0') });
    expect(queues).toEqual({ primary: 'a0'.padEnd(32, '0'), secondary: 'a1'.padEnd(32, '0'), otherNamespace: 'b0'.padEnd(32, '0') });
  });

  it('keeps what the configuration already has and uses its namespaces', async () => {
    const store = fakeStore();
    const { credentials, queues } = await bootstrapRoles(store.create, {
      namespace: 'ns',
      otherNamespace: 'other',
      have: { credentials: { full: { token: 'given' } }, queues: { primary: 'f'.repeat(32) } },
    });
    expect(store.requests.map((r) => r.role)).not.toContain('full');
    expect(new Set(store.requests.map((r) => r.namespace))).toEqual(new Set(['ns', 'other']));
    expect(credentials.full).toEqual({ token: 'given' });
    expect(queues.primary).toBe('f'.repeat(32));
  });
});

/**
 * The node's principal cache (server/src/store/principal-cache.ts) against a real server: a
 * credential revoked, or a token rotated away, by another process on the same database is refused
 * by HTTP within the 1 s staleness bound (spec/README.md "Authentication is at most 1 s stale";
 * docs/operations.md, Credentials). The loops allow 3 s for a loaded machine.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Store } from '../src/store/store.ts';
import { api, eventually, startTestServer, STORES, type TestServer } from '@orbit/testing';

describe.each(STORES)('HTTP authentication through the principal cache on %s', (kind) => {
  let server: TestServer;
  /** Another handle on the database: changes through it do not touch the server's cache. */
  let other: Store;

  beforeAll(async () => {
    server = await startTestServer(kind);
    other = await Store.open(server.database.url);
  });
  afterAll(async () => {
    await other.close();
    await server.stop();
  });

  const list = (token: string, queueId: string) => api(server.url, 'GET', `/v1/subscriptions?queue_id=${queueId}`, { token });

  it('refuses a revoked credential within the staleness bound', async () => {
    const boot = await server.bootstrap({ namespace: 'revoked' });
    const queueId = boot.queue_ids.q!;
    // Two requests: the second is answered from the cache.
    for (let i = 0; i < 2; i++) expect((await list(boot.token, queueId)).status).toBe(200);
    expect(await other.revokeCredential(boot.credential_id)).toBe(true);
    const revokedAt = performance.now();
    const refused = await eventually(async () => (await list(boot.token, queueId)).status === 401, 3000, 'a 401 after the revoke');
    expect(refused).toBe(true);
    expect(performance.now() - revokedAt).toBeLessThan(3000);
    expect((await list(boot.token, queueId)).status).toBe(401);
  });

  it('refuses a token rotated away without grace, and takes the new token at once', async () => {
    const boot = await server.bootstrap({ namespace: 'rotated' });
    const queueId = boot.queue_ids.q!;
    for (let i = 0; i < 2; i++) expect((await list(boot.token, queueId)).status).toBe(200);
    const rotated = await other.rotateCredential(boot.credential_id, 0);
    if (rotated.kind !== 'rotated') throw new Error(`rotation failed: ${rotated.kind}`);
    expect((await list(rotated.token, queueId)).status).toBe(200);
    const rotatedAt = performance.now();
    await eventually(async () => (await list(boot.token, queueId)).status === 401, 3000, 'a 401 for the replaced token');
    expect(performance.now() - rotatedAt).toBeLessThan(3000);
    expect((await list(rotated.token, queueId)).status).toBe(200);
  });
});

/**
 * The public in-process result seam of `@orbit/server` (docs/embedding.md): results appended in
 * the host's own transaction commit or roll back with the host's writes, on both stores.
 */
import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { validateResultEvent } from '@orbit/generated';
import { createOrbit, loadSettings, type Orbit } from '@orbit/server';
import { freshDatabase, STORES, type TestDatabase } from '@orbit/testing';

const hex32 = (): string => randomBytes(16).toString('hex');

describe.each(STORES)('orbit.transaction and orbit.appendResults on %s', (kind) => {
  let database: TestDatabase | undefined;
  let orbit: Orbit | undefined;
  afterEach(async () => {
    await orbit?.close();
    await database?.drop();
    orbit = undefined;
    database = undefined;
  });

  it('MUST append inside the caller transaction: a rollback leaves neither the write nor the result, a commit keeps both', async () => {
    database = await freshDatabase(kind);
    orbit = await createOrbit(loadSettings({}, { listen: '127.0.0.1:0', databaseUrl: database.url }));
    const queueId = hex32();
    const result = (taskId: string) => ({ queueId, type: 'task.succeeded' as const, taskId, taskRevision: '1' });
    const count = (tx: Parameters<Parameters<Orbit['transaction']>[0]>[0]) =>
      tx.all('SELECT COUNT(*) AS n FROM results').then((rows) => Number(rows[0]!.n));
    const host = 'CREATE TABLE host_writes (id VARCHAR(32) PRIMARY KEY)';
    await orbit.transaction((tx) => tx.run(host));

    const rolledBack = hex32();
    await expect(
      orbit.transaction(async (tx) => {
        await tx.run('INSERT INTO host_writes (id) VALUES (?)', [rolledBack]);
        await tx.appendResults([result(rolledBack)]);
        throw new Error('the host gives up');
      }),
    ).rejects.toThrow('the host gives up');
    expect(await orbit.transaction(count)).toBe(0);
    expect(await orbit.transaction((tx) => tx.all('SELECT id FROM host_writes'))).toEqual([]);

    const kept = hex32();
    const events = await orbit.transaction(async (tx) => {
      await tx.run('INSERT INTO host_writes (id) VALUES (?)', [kept]);
      return tx.appendResults([result(kept)]);
    });
    expect(events).toHaveLength(1);
    expect(validateResultEvent(JSON.parse(JSON.stringify(events[0])))).toBe(true);
    expect(events[0]).toMatchObject({ type: 'task.succeeded', aggregate_id: kept, sequence: '1' });
    expect(await orbit.transaction(count)).toBe(1);
    expect((await orbit.transaction((tx) => tx.all('SELECT id FROM host_writes'))).map((r) => r.id)).toEqual([kept]);

    const [alone] = await orbit.appendResults([result(hex32())]);
    expect(alone?.sequence).toBe('2');
  });
});

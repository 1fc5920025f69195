/**
 * The code of docs/sdk.md runs as written: each snippet file (client/examples/snippets/, spliced
 * into the page by scripts/doc-snippets.ts) runs as its own Node process against a real server,
 * and what it did is checked on the server and in its Inbox.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliRun, runUntil, STORES } from '@orbit/testing';
import { createClient } from '../src/index.ts';
import { id, key, name, setup, type Setup } from './support.ts';

const SNIPPETS = fileURLToPath(new URL('../examples/snippets/', import.meta.url));

/** Runs a snippet; `until` (when given) is awaited on its output, then the process gets SIGTERM. */
function runSnippet(file: string, env: Record<string, string>, until?: (stdout: string) => boolean): Promise<CliRun> {
  return runUntil(process.execPath, ['--import', 'tsx', join(SNIPPETS, file)], {
    env: { ...process.env, ...env },
    ...(until ? { until } : {}),
  });
}

describe.each(STORES)('the snippets of docs/sdk.md (%s)', (kind) => {
  let s: Setup;
  let dir: string;
  const env = () => ({ ORBIT_URL: s.server.url, ORBIT_TOKEN: s.token, ORBIT_QUEUE_ID: s.queueId });

  beforeAll(async () => {
    s = await setup(kind);
    dir = mkdtempSync(join(tmpdir(), 'orbit-snippets-'));
  });
  afterAll(async () => {
    await s?.server.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** A subscription with one published result waiting for it. */
  async function subscriptionWithResult(): Promise<{ subscriptionId: string; taskId: string }> {
    const { subscription } = await s.client.createSubscription(key(), { name: name(), queue_id: s.queueId });
    const taskId = id();
    await s.client.publishResult(s.queueId, key(), { type: 'task.succeeded', task_id: taskId, task_revision: '1', result: { n: 7 } });
    return { subscriptionId: subscription.id, taskId };
  }

  it('imports: the main entry and the SQLite Inbox entry load', async () => {
    const run = await runSnippet('imports.ts', env());
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({ loaded: 6 });
  });

  it('ensuring a subscription: the first run creates it, the second finds it', async () => {
    const first = await runSnippet('management.ts', env());
    expect(first.code, first.stderr).toBe(0);
    const created = JSON.parse(first.stdout.trim().split('\n').at(-1)!);
    expect(created.created).toBe(true);
    expect(first.stdout).toContain(`created object-results ${created.id}`);
    const second = await runSnippet('management.ts', env());
    expect(second.code, second.stderr).toBe(0);
    expect(JSON.parse(second.stdout.trim().split('\n').at(-1)!)).toEqual({ id: created.id, created: false });
    expect(await s.client.getSubscription(created.id)).toMatchObject({ name: 'object-results', types: ['task.succeeded'] });
  });

  it('management: a create with a persisted key; the second run replays it', async () => {
    const keyEnv = { ...env(), KEY_FILE: join(dir, `create-key-${kind}`) };
    const first = await runSnippet('create-with-key.ts', keyEnv);
    expect(first.code, first.stderr).toBe(0);
    const out = JSON.parse(first.stdout.trim());
    expect(out.deduplicated).toBe(false);
    const second = await runSnippet('create-with-key.ts', keyEnv);
    expect(second.code, second.stderr).toBe(0);
    expect(JSON.parse(second.stdout.trim())).toEqual({ id: out.id, deduplicated: true });
    expect((await s.client.getSubscription(out.id)).name).toBe('nightly-report');
  });

  it('batch publish: appends every item, and the persisted keys replay them', async () => {
    const run = await runSnippet('publish-batch.ts', env());
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout.trim().split('\n').at(-1)!)).toEqual({ appended: 2, replayed: 2 });
  });

  it('event connection: saves, acknowledges after the save, closes', async () => {
    const { subscriptionId } = await subscriptionWithResult();
    const run = await runSnippet('event-connection.ts', { ...env(), ORBIT_SUBSCRIPTION_ID: subscriptionId, ORBIT_STOP_AFTER: '1' });
    expect(run.code, run.stderr).toBe(0);
    const saved = JSON.parse(run.stdout.split('\n')[0]!).saved as string;
    expect(run.stdout).toContain(`acknowledged ${saved} at `);
    const { items } = await s.client.listEventDeliveries(subscriptionId, {});
    expect(items.map((d) => [d.event_id, d.state])).toEqual([[saved, 'ACKED']]);
  });

  it('consumer: the handler writes in the Inbox transaction, the delivery is acknowledged, SIGTERM stops it', async () => {
    const { subscriptionId, taskId } = await subscriptionWithResult();
    const path = join(dir, `inbox-${kind}.db`);
    const run = await runSnippet('consumer.ts', { ...env(), ORBIT_SUBSCRIPTION_ID: subscriptionId, INBOX_PATH: path }, (out) =>
      out.split('\n').includes('acked'),
    );
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout.split('\n')).toEqual(expect.arrayContaining(['connected', 'delivered', 'handled', 'acked', 'stopped']));
    const db = new Database(path, { readonly: true });
    try {
      const rows = db.prepare('SELECT event_id, body FROM results').all() as { event_id: string; body: string }[];
      expect(rows.map((r) => r.body)).toEqual(['{"n":7}']);
      const { items } = await s.client.listEventDeliveries(subscriptionId, {});
      expect(items.map((d) => [d.event_id, d.state])).toEqual([[rows[0]!.event_id, 'ACKED']]);
    } finally {
      db.close();
    }
    const { items } = await s.client.listEventDeliveries(subscriptionId, {});
    expect((await s.client.getEventDelivery(subscriptionId, items[0]!.id)).event.snapshot.task_id).toBe(taskId);
  });

  it('logging: the client and the consumer write JSON lines through the one `log`', async () => {
    const { subscriptionId } = await subscriptionWithResult();
    const run = await runSnippet('logging.ts', {
      ...env(),
      ORBIT_SUBSCRIPTION_ID: subscriptionId,
      INBOX_PATH: join(dir, `log-${kind}.db`),
    });
    expect(run.code, run.stderr).toBe(0);
    const lines = run.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { level: string; message: string; [field: string]: unknown });
    expect(lines).toContainEqual(expect.objectContaining({ level: 'debug', message: 'ListSubscriptions: HTTP 200', status: 200 }));
    expect(lines).toContainEqual(
      expect.objectContaining({ level: 'info', message: 'consumer: connected', subscription_id: subscriptionId, capacity: 4 }),
    );
    expect(lines).toContainEqual(
      expect.objectContaining({ level: 'info', message: 'consumer: connection closed (1000)', close_code: 1000 }),
    );
    expect(lines.at(-1)).toMatchObject({ level: 'info', message: 'consumer: stopped' });
    expect(run.stdout).not.toContain(s.token);
  });

  it('signal: aborting stops the consumer; `done` resolves', async () => {
    const { subscriptionId } = await subscriptionWithResult();
    const run = await runSnippet(
      'signal.ts',
      { ...env(), ORBIT_SUBSCRIPTION_ID: subscriptionId, INBOX_PATH: join(dir, `signal-${kind}.db`) },
      (out) => out.split('\n').includes('connected'),
    );
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout.trim().split('\n')).toEqual(['connected', 'stopped stopped']);
  });

  it('token provider: a rotation is followed by the client and the consumer, both reading the file', async () => {
    const boot = await s.server.bootstrap({ application: `rotated-${kind}` });
    const queueId = boot.queue_ids.q!;
    const owner = createClient({ baseUrl: s.server.url, token: boot.token });
    const { subscription } = await owner.createSubscription(key(), { name: name(), queue_id: queueId });
    const tokenFile = join(dir, `token-${kind}`);
    writeFileSync(tokenFile, `${boot.token}\n`);
    let rotated = false;
    const run = await runSnippet(
      'token-provider.ts',
      {
        ORBIT_URL: s.server.url,
        ORBIT_QUEUE_ID: queueId,
        ORBIT_SUBSCRIPTION_ID: subscription.id,
        TOKEN_FILE: tokenFile,
        INBOX_PATH: join(dir, `token-${kind}.db`),
      },
      (out) => {
        const listed = out.split('\n').filter((l) => l === 'listed 1').length;
        if (listed === 1 && !rotated) {
          rotated = true;
          // The operator rotates with a 1 s grace and the deployment rewrites the file; at the end of
          // the grace the server closes the connection of the old token.
          void s.server.orbit.store.rotateCredential(boot.credential_id, 1000).then((outcome) => {
            if (!('token' in outcome)) throw new Error(`rotation failed: ${outcome.kind}`);
            writeFileSync(tokenFile, `${outcome.token}\n`);
          });
        }
        return listed === 2;
      },
    );
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout.trim().split('\n')).toEqual(['connected', 'listed 1', 'connected', 'listed 1']);
  });
});

/**
 * `orbit publish` as a real process on both stores: one result from flags, and `--batch FILE` (a
 * JSON array or JSON lines, `-` for stdin; spec/README.md, Batch publish), whose items are read by
 * the HTTP seam's own rules and all checked before anything is written.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliRun, cleanEnv, freshDatabase, ORBIT_BIN, runOrbit, STORES, type Store, type TestDatabase } from '@orbit/testing';
import { Store as StoreClass } from '../src/store/store.ts';

const hex32 = (): string => randomBytes(16).toString('hex');
const BIG = '{"n":123456789012345678901234567890,"f":1.10}';

/** `orbit ARGS` with `input` on stdin. */
function runWithStdin(args: string[], input: string): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [ORBIT_BIN, ...args], { env: cleanEnv(), stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.once('error', reject);
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input);
  });
}

describe.each(STORES)('orbit publish (%s)', (kind) => {
  let database: TestDatabase;
  let store: Store;
  let queueId: string;
  let dir: string;

  beforeAll(async () => {
    database = await freshDatabase(kind);
    store = await StoreClass.open(database.url);
    const boot = await store.bootstrap({ namespace: 'cli', application: 'app', queues: ['q'], permissions: ['results:publish'] });
    queueId = boot.queue_ids.q!;
    dir = mkdtempSync(join(tmpdir(), 'orbit-cli-publish-'));
  });
  afterAll(async () => {
    await store?.close();
    await database?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const file = (name: string, text: string): string => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };
  const publish = (...args: string[]): Promise<CliRun> =>
    runOrbit(['publish', '--queue-id', queueId, ...args, '--database', database.url], {}, 60_000);
  const events = (run: CliRun): any[] =>
    run.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line).event);
  async function count(): Promise<number> {
    const [row] = await store.db.all('SELECT COUNT(*) AS n FROM results');
    return Number(row!.n);
  }

  it('appends one result from flags', async () => {
    const task = hex32();
    const run = await publish('--type', 'task.failed', '--task-id', task, '--result', BIG);
    expect(run.code, run.stderr).toBe(0);
    expect(events(run)).toMatchObject([{ type: 'task.failed', aggregate_id: task }]);
    expect(run.stdout).toContain(`"result":${BIG}`);
  });

  it('appends a JSON array of 150 results in order, byte-exact', async () => {
    const { head } = await store.logPosition();
    const items = Array.from({ length: 150 }, (_, i) => ({ type: 'task.succeeded', task_id: hex32(), task_revision: String(i + 1) }));
    const text = JSON.stringify(items).replace('"task_revision":"2"}', `"task_revision":"2","result":${BIG}}`);
    const run = await publish('--batch', file('array.json', text));
    expect(run.code, run.stderr).toBe(0);
    const appended = events(run);
    expect(appended.map((e) => [e.aggregate_id, e.sequence])).toEqual(
      items.map((it, i) => [it.task_id, (head + BigInt(i + 1)).toString()]),
    );
    expect(run.stdout).toContain(`"result":${BIG}`);
  });

  it('reads JSON lines from stdin with -', async () => {
    const lines = [
      { type: 'task.cancelled', task_id: hex32(), task_revision: '1', details: { by: 'operator' } },
      { type: 'task.needs_review', task_id: hex32(), task_revision: '4', effect_uncertain: true },
    ];
    const run = await runWithStdin(
      ['publish', '--queue-id', queueId, '--batch', '-', '--database', database.url],
      `${JSON.stringify(lines[0])}\n\n${JSON.stringify(lines[1])}\n`,
    );
    expect(run.code, run.stderr).toBe(0);
    expect(events(run).map((e) => [e.type, e.aggregate_id, e.details])).toEqual([
      ['task.cancelled', lines[0]!.task_id, { by: 'operator' }],
      ['task.needs_review', lines[1]!.task_id, {}],
    ]);
  });

  it('refuses a batch with one bad item, naming it, and appends nothing', async () => {
    const before = await count();
    const good = JSON.stringify({ type: 'task.succeeded', task_id: hex32(), task_revision: '1' });
    const cases: Array<[string, RegExp]> = [
      [`${good}\n${JSON.stringify({ type: 'task.succeeded', task_id: hex32(), task_revision: '01' })}\n`, /line 2: \/task_revision/],
      [`${good}\n{"type":"task.succeeded","type":"task.failed"}\n`, /line 2 is not strict JSON/],
      [
        `[${good},${JSON.stringify({ type: 'task.succeeded', task_id: hex32(), task_revision: '1', details: [1] })}]`,
        /\/1\/details must be an object/,
      ],
      [
        `[${good},${JSON.stringify({ idempotency_key: 'k', type: 'task.succeeded', task_id: hex32(), task_revision: '1' })}]`,
        /"idempotency_key"/,
      ],
      ['\n\n', /no results/],
    ];
    for (const [text, message] of cases) {
      const run = await publish('--batch', file('bad.json', text));
      expect(run.code, run.stdout).toBe(2);
      expect(run.stderr).toMatch(message);
    }
    const mixed = await publish('--batch', file('ok.json', good), '--type', 'task.failed');
    expect(mixed.code).toBe(2);
    expect(mixed.stderr).toMatch(/--type is not allowed/);
    expect(await count()).toBe(before);
  });
});

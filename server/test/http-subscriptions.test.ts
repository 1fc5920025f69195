/**
 * The subscription management API over real HTTP on both stores (spec/rules.md#s1-9 to #s3-15;
 * spec/README.md, Subscriptions): create (normalization, defaults, from_sequence, idempotency,
 * names, the namespace limit), get, list (order, paging, cursor binding, strict query), configure
 * and retire, and the configuration history (Orbit's extension).
 *
 * Longer than 400 lines: one describe per operation of the subscription routes (create, get and
 * list, configure, retire, history) on one server per store; splitting would scatter the shared
 * setup and helpers.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BootstrapResult } from '../src/store/principal.ts';
import { api, type ApiResponse, eventually, startTestServer, STORES, type TestServer, TestSocket } from '@orbit/testing';

const ALL_TYPES = ['task.cancelled', 'task.failed', 'task.needs_review', 'task.succeeded'];

const newKey = (): string => `key-${randomBytes(8).toString('hex')}`;
const hex32 = (): string => randomBytes(16).toString('hex');

function expectError(res: ApiResponse, status: number, code: string): void {
  expect({ status: res.status, code: res.json?.error?.code }, res.text).toEqual({ status, code });
}

describe.each(STORES)('subscriptions over HTTP (%s)', (kind) => {
  let server: TestServer;
  let base: string;
  let owner: BootstrapResult;
  let q1: string;
  let q2: string;
  let q3: string;
  let q4: string;

  beforeAll(async () => {
    server = await startTestServer(kind);
    base = server.url;
    owner = await server.bootstrap({ namespace: 'subs', application: 'app', queues: ['q1', 'q2', 'q3', 'q4'] });
    q1 = owner.queue_ids.q1!;
    q2 = owner.queue_ids.q2!;
    q3 = owner.queue_ids.q3!;
    q4 = owner.queue_ids.q4!;
    // A few results so that the committed head is not 0.
    for (let i = 0; i < 3; i++) await publish(q1, 'task.succeeded');
  });

  afterAll(async () => {
    await server?.stop();
  });

  async function publish(queueId: string, type: string, token = owner.token): Promise<any> {
    const res = await api(base, 'POST', `/v1/queues/${queueId}/results`, {
      token,
      key: newKey(),
      body: { type, task_id: hex32(), task_revision: '1' },
      expect: 'validatePublishResultResponse',
    });
    expect(res.status, res.text).toBe(201);
    return res.json.data.event;
  }

  async function head(): Promise<bigint> {
    return (await server.orbit.store.logPosition()).head;
  }

  function create(body: Record<string, unknown>, options: { token?: string; key?: string | null } = {}): Promise<ApiResponse> {
    const key = options.key === undefined ? newKey() : options.key;
    return api(base, 'POST', '/v1/subscriptions', {
      token: options.token ?? owner.token,
      ...(key === null ? {} : { key }),
      body,
      expect: 'validateSubscriptionResult',
    });
  }

  async function created(body: Record<string, unknown>, token = owner.token): Promise<any> {
    const res = await create(body, { token });
    expect(res.status, res.text).toBe(201);
    expect(res.json.data.deduplicated).toBe(false);
    return res.json.data.subscription;
  }

  function get(id: string, token = owner.token): Promise<ApiResponse> {
    return api(base, 'GET', `/v1/subscriptions/${id}`, { token, expect: 'validateSubscription' });
  }

  function list(query: string, token = owner.token): Promise<ApiResponse> {
    return api(base, 'GET', `/v1/subscriptions${query}`, { token, expect: 'validateSubscriptionList' });
  }

  function configure(id: string, body: unknown, key = newKey(), token = owner.token): Promise<ApiResponse> {
    return api(base, 'POST', `/v1/subscriptions/${id}:configure`, { token, key, body, expect: 'validateSubscriptionResult' });
  }

  function retire(id: string, body: unknown, key = newKey(), token = owner.token): Promise<ApiResponse> {
    return api(base, 'POST', `/v1/subscriptions/${id}:retire`, { token, key, body, expect: 'validateSubscriptionResult' });
  }

  function history(id: string, query = '', token = owner.token): Promise<ApiResponse> {
    return api(base, 'GET', `/v1/subscriptions/${id}/history${query}`, { token, expect: 'validateSubscriptionHistory' });
  }

  async function allOf(queueId: string, token = owner.token): Promise<any[]> {
    const res = await list(`?queue_id=${queueId}&limit=100`, token);
    expect(res.status, res.text).toBe(200);
    return res.json.data.items;
  }

  describe('create', () => {
    it('answers 201 with the normalized type order and the defaults', async () => {
      const sub = await created({
        name: 'create-defaults',
        queue_id: q1,
        types: ['task.succeeded', 'task.needs_review', 'task.failed', 'task.cancelled'],
      });
      expect(sub).toMatchObject({
        queue_id: q1,
        credential_id: owner.credential_id,
        name: 'create-defaults',
        revision: '1',
        enabled: true,
        types: ALL_TYPES,
        pending_count: 0,
        max_pending: 100,
        max_attempts: 20,
      });
      expect(sub.created_at).toBe(sub.updated_at);
      expect(sub).not.toHaveProperty('retired_at');
      expect(sub).not.toHaveProperty('retired_sequence');

      const subset = await created({ name: 'create-subset', queue_id: q1, types: ['task.succeeded', 'task.cancelled'] });
      expect(subset.types).toEqual(['task.cancelled', 'task.succeeded']);
      const empty = await created({ name: 'create-empty-types', queue_id: q1, types: [], max_pending: 0, max_attempts: 0 });
      expect(empty).toMatchObject({ types: ALL_TYPES, max_pending: 100, max_attempts: 20 });
      const omitted = await created({ name: 'create-omitted-types', queue_id: q1 });
      expect(omitted.types).toEqual(ALL_TYPES);
      const custom = await created({ name: 'create-custom', queue_id: q1, max_pending: 1000, max_attempts: 100 });
      expect(custom).toMatchObject({ max_pending: 1000, max_attempts: 100 });
      const minimal = await created({ name: 'create-minimal', queue_id: q1, max_pending: 1, max_attempts: 1 });
      expect(minimal).toMatchObject({ max_pending: 1, max_attempts: 1 });
    });

    it('refuses out-of-range limits and bad type sets', async () => {
      const before = await allOf(q1);
      for (const extra of [
        { max_pending: 1001 },
        { max_pending: -1 },
        { max_attempts: 101 },
        { max_attempts: 1.5 },
        { types: ['task.requeued'] },
        { types: ['task.failed', 'task.failed'] },
        { types: ['task.failed', 'task.cancelled', 'task.succeeded', 'task.needs_review', 'task.failed'] },
        { types: 'task.failed' },
      ]) {
        expectError(await create({ name: 'bad-limits', queue_id: q1, ...extra }), 400, 'INVALID_ARGUMENT');
      }
      expect(await allOf(q1)).toEqual(before);
    });

    it('starts at the committed head, at "0", or at a given sequence, never beyond the head', async () => {
      const now = await head();
      expect(now).toBeGreaterThan(0n);
      const omitted = await created({ name: 'from-omitted', queue_id: q1 });
      expect(omitted.cursor_sequence).toBe(now.toString());
      const nulled = await created({ name: 'from-null', queue_id: q1, from_sequence: null });
      expect(nulled.cursor_sequence).toBe(now.toString());
      const zero = await created({ name: 'from-zero', queue_id: q1, from_sequence: '0' });
      expect(zero.cursor_sequence).toBe('0');
      const atHead = await created({ name: 'from-head', queue_id: q1, from_sequence: now.toString() });
      expect(atHead.cursor_sequence).toBe(now.toString());
      const middle = await created({ name: 'from-one', queue_id: q1, from_sequence: '1' });
      expect(middle.cursor_sequence).toBe('1');

      const before = await allOf(q1);
      expectError(await create({ name: 'from-beyond', queue_id: q1, from_sequence: (now + 1n).toString() }), 400, 'INVALID_ARGUMENT');
      expectError(await create({ name: 'from-max', queue_id: q1, from_sequence: '18446744073709551615' }), 400, 'INVALID_ARGUMENT');
      expect(await allOf(q1)).toEqual(before);
    });

    it('replays the same key and content with the original snapshot, even after a configure', async () => {
      const key = newKey();
      const body = { name: 'replayed', queue_id: q1, types: ['task.failed'], max_pending: 7 };
      const first = await create(body, { key });
      expect(first.status).toBe(201);
      expect(first.json.data.deduplicated).toBe(false);
      const original = first.json.data.subscription;

      // Same content, other key order: the same request.
      const again = await create({ max_pending: 7, types: ['task.failed'], queue_id: q1, name: 'replayed' }, { key });
      expect(again.status).toBe(200);
      expect(again.json.data).toEqual({ subscription: original, deduplicated: true });

      // The head moves and the configuration changes; the receipt stays the original snapshot.
      await publish(q1, 'task.cancelled');
      const paused = await configure(original.id, { expected_revision: '1', enabled: false, reason: 'maintenance' });
      expect(paused.status, paused.text).toBe(200);
      expect(paused.json.data.subscription.revision).toBe('2');
      const later = await create(body, { key });
      expect(later.status).toBe(200);
      expect(later.json.data).toEqual({ subscription: original, deduplicated: true });
      expect(later.json.data.subscription.revision).toBe('1');
      expect(later.json.data.subscription.enabled).toBe(true);

      const names = (await allOf(q1)).filter((s) => s.name === 'replayed');
      expect(names).toHaveLength(1);
    });

    it('refuses the same key with other content, and a missing key', async () => {
      const key = newKey();
      expect((await create({ name: 'idem-a', queue_id: q1 }, { key })).status).toBe(201);
      const before = await allOf(q1);
      expectError(await create({ name: 'idem-b', queue_id: q1 }, { key }), 409, 'IDEMPOTENCY_CONFLICT');
      expectError(await create({ name: 'idem-a', queue_id: q1, max_pending: 5 }, { key }), 409, 'IDEMPOTENCY_CONFLICT');
      expectError(await create({ name: 'idem-c', queue_id: q1 }, { key: null }), 400, 'INVALID_ARGUMENT');
      expectError(await create({ name: 'idem-c', queue_id: q1 }, { key: 'key with spaces' }), 400, 'INVALID_ARGUMENT');
      expectError(await create({ name: 'idem-c', queue_id: q1 }, { key: 'k'.repeat(256) }), 400, 'INVALID_ARGUMENT');
      expect(await allOf(q1)).toEqual(before);
      // A key of 255 visible characters is fine.
      expect((await create({ name: 'idem-c', queue_id: q1 }, { key: '~'.repeat(255) })).status).toBe(201);
    });

    it('applies the name rules', async () => {
      const before = await allOf(q1);
      for (const name of [
        '',
        'a'.repeat(129),
        '-leading',
        '.leading',
        '_leading',
        'caf\u00e9',
        'with space',
        'slash/name',
        'colon:name',
        '\u0661\u0662',
      ]) {
        expectError(await create({ name, queue_id: q1 }), 400, 'INVALID_ARGUMENT');
      }
      expectError(await create({ name: 42, queue_id: q1 }), 400, 'INVALID_ARGUMENT');
      expect(await allOf(q1)).toEqual(before);
      expect((await create({ name: 'a'.repeat(128), queue_id: q1 })).status).toBe(201);
      expect((await create({ name: '0A.b_c-D', queue_id: q1 })).status).toBe(201);
      expect((await create({ name: 'Z', queue_id: q1 })).status).toBe(201);
    });

    it('keeps names unique in the namespace: STATE_CONFLICT, also for another credential and another queue', async () => {
      await created({ name: 'taken', queue_id: q1 });
      const before = await allOf(q1);
      expectError(await create({ name: 'taken', queue_id: q1 }), 409, 'STATE_CONFLICT');
      expectError(await create({ name: 'taken', queue_id: q2 }), 409, 'STATE_CONFLICT');
      const colleague = await server.bootstrap({ namespace: 'subs', application: 'other-app', queues: ['q1'] });
      expectError(await create({ name: 'taken', queue_id: q1 }, { token: colleague.token }), 409, 'STATE_CONFLICT');
      expect(await allOf(q1)).toEqual(before);
      // Names are case-sensitive ASCII: another spelling is another name.
      expect((await create({ name: 'TAKEN', queue_id: q1 })).status).toBe(201);
      // Another namespace has its own names.
      const stranger = await server.bootstrap({ namespace: 'subs-elsewhere', application: 'app', queues: ['q1'] });
      expect((await create({ name: 'taken', queue_id: stranger.queue_ids.q1! }, { token: stranger.token })).status).toBe(201);
    });

    it('allows 64 non-retired subscriptions per namespace; paused ones count, retiring frees a slot', async () => {
      const ns = await server.bootstrap({ namespace: 'limit-ns', application: 'app', queues: ['lq'] });
      const other = await server.bootstrap({ namespace: 'limit-ns', application: 'app2', queues: ['lq2'] });
      const lq = ns.queue_ids.lq!;
      const ids: string[] = [];
      for (let i = 0; i < 60; i++) ids.push((await created({ name: `limit-${i}`, queue_id: lq }, ns.token)).id);
      // The limit is per namespace, not per credential or queue.
      for (let i = 60; i < 64; i++) ids.push((await created({ name: `limit-${i}`, queue_id: other.queue_ids.lq2! }, other.token)).id);
      const paused = await configure(
        ids[0]!,
        { expected_revision: '1', enabled: false, reason: 'paused still counts' },
        newKey(),
        ns.token,
      );
      expect(paused.status).toBe(200);

      const before = await allOf(lq, ns.token);
      expectError(await create({ name: 'limit-64', queue_id: lq }, { token: ns.token }), 409, 'SUBSCRIPTION_LIMIT');
      expectError(await create({ name: 'limit-64', queue_id: other.queue_ids.lq2! }, { token: other.token }), 409, 'SUBSCRIPTION_LIMIT');
      expect(await allOf(lq, ns.token)).toEqual(before);
      // Other namespaces are not affected.
      expect((await create({ name: 'limit-64', queue_id: q1 })).status).toBe(201);

      const retired = await retire(ids[1]!, { expected_revision: '1', reason: 'free a slot' }, newKey(), ns.token);
      expect(retired.status, retired.text).toBe(200);
      expect((await create({ name: 'limit-64', queue_id: lq }, { token: ns.token })).status).toBe(201);
      expectError(await create({ name: 'limit-65', queue_id: lq }, { token: ns.token }), 409, 'SUBSCRIPTION_LIMIT');
    });
  });

  describe('get and list', () => {
    it('gets the current subscription, and NOT_FOUND for an unknown id', async () => {
      const sub = await created({ name: 'gettable', queue_id: q1 });
      const res = await get(sub.id);
      expect(res.status).toBe(200);
      expect(res.json.data).toEqual(sub);
      expectError(await get(hex32()), 404, 'NOT_FOUND');
    });

    it('lists newest first (created_at DESC, id DESC) and pages without duplicates or gaps', async () => {
      const made: any[] = [];
      for (let i = 0; i < 5; i++) made.push(await created({ name: `paged-${i}`, queue_id: q2 }));
      const expected = [...made].sort((a, b) =>
        a.created_at === b.created_at ? (a.id < b.id ? 1 : -1) : a.created_at < b.created_at ? 1 : -1,
      );

      const whole = await list(`?queue_id=${q2}`);
      expect(whole.status).toBe(200);
      expect(whole.json.data.items.map((s: any) => s.id)).toEqual(expected.map((s) => s.id));
      expect(whole.json.data).not.toHaveProperty('next_cursor');

      const seen: string[] = [];
      const sizes: number[] = [];
      let cursor: string | undefined;
      for (let page = 0; page < 10; page++) {
        const res = await list(`?queue_id=${q2}&limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
        expect(res.status, res.text).toBe(200);
        sizes.push(res.json.data.items.length);
        seen.push(...res.json.data.items.map((s: any) => s.id));
        cursor = res.json.data.next_cursor;
        if (!cursor) break;
      }
      expect(sizes).toEqual([2, 2, 1]);
      expect(seen).toEqual(expected.map((s) => s.id));

      // Only this credential's subscriptions of this queue.
      const colleague = await server.bootstrap({ namespace: 'subs', application: 'app', queues: ['q2'] });
      const theirs = await list(`?queue_id=${q2}`, colleague.token);
      expect(theirs.status).toBe(200);
      expect(theirs.json.data.items).toEqual([]);
      expect((await allOf(q3)).every((s) => s.queue_id === q3)).toBe(true);
    });

    it('refuses tampered cursors and cursors reused with another queue or credential', async () => {
      const first = await list(`?queue_id=${q2}&limit=1`);
      const cursor: string = first.json.data.next_cursor;
      expect(typeof cursor).toBe('string');
      expect((await list(`?queue_id=${q2}&limit=1&cursor=${encodeURIComponent(cursor)}`)).status).toBe(200);

      const flip = (s: string, at: number): string => s.slice(0, at) + (s[at] === 'A' ? 'B' : 'A') + s.slice(at + 1);
      const dot = cursor.indexOf('.');
      const tampered = [
        flip(cursor, 0),
        flip(cursor, cursor.length - 1),
        dot > 0 ? flip(cursor, dot + 1) : `${cursor}x`,
        `${cursor}A`,
        cursor.slice(1),
        'abc',
        'a.b',
        '.',
        '',
      ];
      for (const bad of tampered) {
        expectError(await list(`?queue_id=${q2}&limit=1&cursor=${encodeURIComponent(bad)}`), 400, 'INVALID_ARGUMENT');
      }
      // Another queue of the same credential.
      expectError(await list(`?queue_id=${q1}&limit=1&cursor=${encodeURIComponent(cursor)}`), 400, 'INVALID_ARGUMENT');
      // Another credential with the same queue, in the same namespace.
      const colleague = await server.bootstrap({ namespace: 'subs', application: 'app', queues: ['q1', 'q2'] });
      expectError(await list(`?queue_id=${q2}&limit=1&cursor=${encodeURIComponent(cursor)}`, colleague.token), 400, 'INVALID_ARGUMENT');
    });

    it('refuses bad limits, a missing queue_id, unknown and repeated parameters', async () => {
      for (const limit of ['0', '101', '01', 'abc', '', '-1', '1.0', '+1', '1e1', ' 1', '18446744073709551616']) {
        expectError(await list(`?queue_id=${q2}&limit=${encodeURIComponent(limit)}`), 400, 'INVALID_ARGUMENT');
      }
      for (const limit of ['1', '100']) expect((await list(`?queue_id=${q2}&limit=${limit}`)).status).toBe(200);
      for (const query of [
        '',
        '?',
        '?limit=2',
        `?queue_id=${q2.toUpperCase()}`,
        `?queue_id=${q2.slice(1)}`,
        '?queue_id=',
        `?queue_id=${q2}&state=PENDING`,
        `?queue_id=${q2}&foo=bar`,
        `?Queue_Id=${q2}`,
        `?queue_id=${q2}&queue_id=${q2}`,
        `?queue_id=${q2}&limit=2&limit=2`,
        `?queue_id=${q2}&`,
        `?queue_id=${q2}&cursor=a&cursor=a`,
      ]) {
        expectError(await list(query), 400, 'INVALID_ARGUMENT');
      }
    });
  });

  describe('configure', () => {
    it('checks expected_revision and bumps the revision on every new command, even the same boolean', async () => {
      const sub = await created({ name: 'configured', queue_id: q1 });
      expectError(await configure(sub.id, { expected_revision: '2', enabled: false, reason: 'r' }), 409, 'STATE_CONFLICT');
      expectError(await configure(sub.id, { expected_revision: '0', enabled: false, reason: 'r' }), 409, 'STATE_CONFLICT');
      expect((await get(sub.id)).json.data).toEqual(sub);

      const pauseKey = newKey();
      const pause = await configure(sub.id, { expected_revision: '1', enabled: false, reason: 'receiver maintenance' }, pauseKey);
      expect(pause.status).toBe(200);
      expect(pause.json.data.deduplicated).toBe(false);
      expect(pause.json.data.subscription).toMatchObject({
        id: sub.id,
        revision: '2',
        enabled: false,
        cursor_sequence: sub.cursor_sequence,
        created_at: sub.created_at,
      });
      expect((await get(sub.id)).json.data).toEqual(pause.json.data.subscription);

      const again = await configure(sub.id, { expected_revision: '2', enabled: false, reason: 'still paused' });
      expect(again.status).toBe(200);
      expect(again.json.data.subscription).toMatchObject({ revision: '3', enabled: false });

      // The replay keeps the first receipt's revision; the current state is read with GET.
      const replay = await configure(sub.id, { expected_revision: '1', enabled: false, reason: 'receiver maintenance' }, pauseKey);
      expect(replay.status).toBe(200);
      expect(replay.json.data).toEqual({ subscription: pause.json.data.subscription, deduplicated: true });
      expectError(
        await configure(sub.id, { expected_revision: '3', enabled: true, reason: 'receiver maintenance' }, pauseKey),
        409,
        'IDEMPOTENCY_CONFLICT',
      );
      expect((await get(sub.id)).json.data).toMatchObject({ revision: '3', enabled: false });

      const resume = await configure(sub.id, { expected_revision: '3', enabled: true, reason: 'back' });
      expect(resume.json.data.subscription).toMatchObject({ revision: '4', enabled: true });
      expect((await get(sub.id)).json.data).toMatchObject({ revision: '4', enabled: true });
      expectError(await configure(hex32(), { expected_revision: '1', enabled: true, reason: 'r' }), 404, 'NOT_FOUND');
    });

    it('requires a reason of 1 to 1024 Unicode characters and all three fields', async () => {
      const sub = await created({ name: 'reasons', queue_id: q1 });
      const astral = '\u{1F600}';
      for (const body of [
        { expected_revision: '1', enabled: false, reason: '' },
        { expected_revision: '1', enabled: false, reason: 'x'.repeat(1025) },
        { expected_revision: '1', enabled: false, reason: astral.repeat(1025) },
        { expected_revision: '1', enabled: false, reason: 7 },
        { expected_revision: '1', enabled: false },
        { expected_revision: '1', reason: 'r' },
        { enabled: false, reason: 'r' },
        {},
        { expected_revision: '1', enabled: 'false', reason: 'r' },
        { expected_revision: '1', enabled: 0, reason: 'r' },
        { expected_revision: '1', enabled: null, reason: 'r' },
        { expected_revision: 1, enabled: false, reason: 'r' },
        { expected_revision: '01', enabled: false, reason: 'r' },
        { expected_revision: '1', enabled: false, reason: 'r', name: 'rename' },
        { expected_revision: '1', enabled: false, reason: 'r', types: ['task.failed'] },
        { expected_revision: '1', enabled: false, reason: 'r', from_sequence: '0' },
        { expected_revision: '1', enabled: false, reason: 'r', queue_id: q2 },
        { expected_revision: '1', enabled: false, reason: 'r', credential_id: owner.credential_id },
        { expected_revision: '1', enabled: false, reason: 'r', max_pending: 5 },
      ]) {
        expectError(await configure(sub.id, body), 400, 'INVALID_ARGUMENT');
      }
      expect((await get(sub.id)).json.data).toEqual(sub);
      const long = await configure(sub.id, { expected_revision: '1', enabled: false, reason: astral.repeat(1024) });
      expect(long.status, long.text).toBe(200);
      const plain = await configure(sub.id, { expected_revision: '2', enabled: true, reason: 'x'.repeat(1024) });
      expect(plain.status, plain.text).toBe(200);
      expect((await get(sub.id)).json.data).toMatchObject({ revision: '3', enabled: true });
    });
  });

  describe('retire', () => {
    it('retires with retired_at and retired_sequence, replays, and stays readable but frozen', async () => {
      const sub = await created({ name: 'retiring', queue_id: q3, types: ['task.failed'] });
      expectError(await retire(sub.id, { expected_revision: '2', reason: 'done' }), 409, 'STATE_CONFLICT');
      for (const body of [
        { expected_revision: '1' },
        { reason: 'done' },
        { expected_revision: '1', reason: '' },
        { expected_revision: '1', reason: 'done', enabled: false },
      ]) {
        expectError(await retire(sub.id, body), 400, 'INVALID_ARGUMENT');
      }
      expect((await get(sub.id)).json.data).toEqual(sub);

      const key = newKey();
      const res = await retire(sub.id, { expected_revision: '1', reason: 'done' }, key);
      expect(res.status, res.text).toBe(200);
      expect(res.json.data.deduplicated).toBe(false);
      const retired = res.json.data.subscription;
      expect(retired).toMatchObject({ id: sub.id, name: 'retiring', retired_sequence: (await head()).toString() });
      expect(typeof retired.retired_at).toBe('string');
      expect(BigInt(retired.revision)).toBeGreaterThan(1n);

      const replay = await retire(sub.id, { expected_revision: '1', reason: 'done' }, key);
      expect(replay.status).toBe(200);
      expect(replay.json.data).toEqual({ subscription: retired, deduplicated: true });
      expectError(await retire(sub.id, { expected_revision: '1', reason: 'other' }, key), 409, 'IDEMPOTENCY_CONFLICT');

      const read = await get(sub.id);
      expect(read.status).toBe(200);
      expect(read.json.data).toMatchObject({
        retired_at: retired.retired_at,
        retired_sequence: retired.retired_sequence,
        revision: retired.revision,
      });
      expect((await allOf(q3)).find((s) => s.id === sub.id)).toMatchObject({ retired_at: retired.retired_at });
      const deliveries = await api(base, 'GET', `/v1/subscriptions/${sub.id}/deliveries`, {
        token: owner.token,
        expect: 'validateDeliveryList',
      });
      expect(deliveries.status).toBe(200);

      // Never configured, enabled or retired again.
      expectError(await configure(sub.id, { expected_revision: retired.revision, enabled: true, reason: 'revive' }), 409, 'STATE_CONFLICT');
      expectError(await configure(sub.id, { expected_revision: retired.revision, enabled: false, reason: 'pause' }), 409, 'STATE_CONFLICT');
      expectError(await retire(sub.id, { expected_revision: retired.revision, reason: 'twice' }), 409, 'STATE_CONFLICT');
      expect((await get(sub.id)).json.data).toEqual(read.json.data);
    });

    it('is STATE_CONFLICT while a matching result is not materialized; other types do not block', async () => {
      const sub = await created({ name: 'retire-waiting', queue_id: q3, types: ['task.succeeded'] });
      await publish(q3, 'task.failed');
      await publish(q3, 'task.requeued');
      const skipping = await created({
        name: 'retire-skipping',
        queue_id: q3,
        types: ['task.cancelled'],
        from_sequence: sub.cursor_sequence,
      });
      await publish(q3, 'task.succeeded');
      expectError(await retire(sub.id, { expected_revision: '1', reason: 'not yet' }), 409, 'STATE_CONFLICT');
      expect((await get(sub.id)).json.data).not.toHaveProperty('retired_at');
      // Nothing matching task.cancelled was appended: retiring is allowed.
      const ok = await retire(skipping.id, { expected_revision: '1', reason: 'nothing to deliver' });
      expect(ok.status, ok.text).toBe(200);
      expect(ok.json.data.subscription.retired_sequence).toBe((await head()).toString());
    });

    it('is STATE_CONFLICT while a delivery is not acknowledged, and succeeds after the ACK', async () => {
      const sub = await created({ name: 'retire-leased', queue_id: q4 });
      await publish(q4, 'task.needs_review');
      const socket = await TestSocket.open(base, owner.token);
      const welcome = await socket.hello(sub.id, 1);
      expect(welcome.type).toBe('events.welcome');
      const deliver = await socket.deliver();
      socket.close();
      await socket.waitClosed();
      expect(socket.invalid).toEqual([]);

      const leased = await api(base, 'GET', `/v1/subscriptions/${sub.id}/deliveries?state=LEASED`, {
        token: owner.token,
        expect: 'validateDeliveryList',
      });
      expect(leased.json.data.items.map((d: any) => d.id)).toEqual([deliver.body.delivery.id]);
      expectError(await retire(sub.id, { expected_revision: '1', reason: 'too early' }), 409, 'STATE_CONFLICT');
      expect((await get(sub.id)).json.data).not.toHaveProperty('retired_at');

      // A new connection may acknowledge with the proof kept from the old one.
      const again = await TestSocket.open(base, owner.token);
      expect((await again.hello(sub.id, 1)).type).toBe('events.welcome');
      const ack = await again.ack(deliver);
      expect(ack.type).toBe('ack');
      again.close();
      await again.waitClosed();

      const current = await eventually(async () => {
        const s = (await get(sub.id)).json.data;
        return s.pending_count === 0 ? s : null;
      });
      const res = await retire(sub.id, { expected_revision: current.revision, reason: 'drained' });
      expect(res.status, res.text).toBe(200);
      // Retired subscriptions keep their delivery history readable.
      const history = await api(base, 'GET', `/v1/subscriptions/${sub.id}/deliveries`, {
        token: owner.token,
        expect: 'validateDeliveryList',
      });
      expect(history.json.data.items.map((d: any) => [d.id, d.state])).toEqual([[deliver.body.delivery.id, 'ACKED']]);
    });
  });

  describe('history', () => {
    it('records create, pause, resume and retire with reasons and revisions, newest first, once each', async () => {
      const from = (await head()).toString();
      const sub = await created({ name: 'history-walk', queue_id: q3, from_sequence: from });
      const pauseKey = newKey();
      const steps: [boolean, string][] = [
        [false, 'maintenance window'],
        [true, 'maintenance over'],
        [false, 'downstream outage ⚠'],
      ];
      let revision: string = sub.revision;
      for (const [i, [enabled, reason]] of steps.entries()) {
        const key = i === 0 ? pauseKey : newKey();
        const res = await configure(sub.id, { expected_revision: revision, enabled, reason }, key);
        expect(res.status, res.text).toBe(200);
        revision = res.json.data.subscription.revision;
      }
      // A replay, a stale revision and an invalid body leave no trace.
      expect(
        (await configure(sub.id, { expected_revision: sub.revision, enabled: false, reason: 'maintenance window' }, pauseKey)).json.data
          .deduplicated,
      ).toBe(true);
      expectError(await configure(sub.id, { expected_revision: sub.revision, enabled: true, reason: 'stale' }), 409, 'STATE_CONFLICT');
      expectError(await configure(sub.id, { expected_revision: revision, enabled: true }), 400, 'INVALID_ARGUMENT');
      const retired = await retire(sub.id, { expected_revision: revision, reason: 'replaced by v2' });
      expect(retired.status, retired.text).toBe(200);
      const final = retired.json.data.subscription;

      const res = await history(sub.id);
      expect(res.status, res.text).toBe(200);
      const items: any[] = res.json.data.items;
      expect(res.json.data).not.toHaveProperty('next_cursor');
      expect(items.map((e) => [e.action, e.reason, e.revision])).toEqual([
        ['retire', 'replaced by v2', final.revision],
        ['pause', 'downstream outage ⚠', revision],
        ['resume', 'maintenance over', (BigInt(revision) - 1n).toString()],
        ['pause', 'maintenance window', (BigInt(revision) - 2n).toString()],
        ['create', '', sub.revision],
      ]);
      expect(items[0]).toMatchObject({ retired_sequence: final.retired_sequence, created_at: final.retired_at });
      expect(items[4]).toMatchObject({ from_sequence: from, created_at: sub.created_at });
      for (const entry of items.slice(1, 4))
        expect(Object.keys(entry).sort()).toEqual(['action', 'created_at', 'id', 'reason', 'revision']);
      expect(new Set(items.map((e) => e.id)).size).toBe(items.length);
      // Times never increase down the list.
      const times = items.map((e) => Date.parse(e.created_at));
      expect([...times].sort((a, b) => b - a)).toEqual(times);
    });

    it('pages with cursors bound to the subscription and the credential; other callers get the usual errors', async () => {
      const sub = await created({ name: 'history-pages', queue_id: q3 });
      let revision: string = sub.revision;
      for (let i = 0; i < 6; i++) {
        const res = await configure(sub.id, { expected_revision: revision, enabled: i % 2 === 1, reason: `step ${i}` });
        expect(res.status, res.text).toBe(200);
        revision = res.json.data.subscription.revision;
      }
      const whole = (await history(sub.id, '?limit=100')).json.data.items;
      expect(whole).toHaveLength(7);
      const seen: any[] = [];
      let cursor: string | undefined;
      for (let page = 0; page < 10; page++) {
        const res = await history(sub.id, `?limit=3${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
        expect(res.status, res.text).toBe(200);
        seen.push(...res.json.data.items);
        cursor = res.json.data.next_cursor;
        if (!cursor) break;
      }
      expect(seen).toEqual(whole);

      const first = (await history(sub.id, '?limit=1')).json.data.next_cursor as string;
      const other = await created({ name: 'history-other', queue_id: q3 });
      expectError(await history(other.id, `?cursor=${encodeURIComponent(first)}`), 400, 'INVALID_ARGUMENT');
      expectError(await history(sub.id, `?cursor=${encodeURIComponent(first.slice(0, -1))}`), 400, 'INVALID_ARGUMENT');
      for (const query of ['?limit=0', '?limit=101', '?state=PENDING', '?limit=1&limit=1', '?foo=1'])
        expectError(await history(sub.id, query), 400, 'INVALID_ARGUMENT');

      const colleague = await server.bootstrap({ namespace: 'subs', application: 'app', queues: ['q3'] });
      expectError(await history(sub.id, '', colleague.token), 404, 'NOT_FOUND');
      expectError(await history(hex32()), 404, 'NOT_FOUND');
      expectError(await api(base, 'GET', `/v1/subscriptions/${sub.id}:retire/history`, { token: owner.token }), 404, 'NOT_FOUND');
      const publisher = await server.bootstrap({ namespace: 'subs', application: 'app', queues: ['q3'], permissions: ['results:publish'] });
      expectError(await history(sub.id, '', publisher.token), 403, 'PERMISSION_DENIED');
    });
  });
});

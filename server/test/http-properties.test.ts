/**
 * Property tests of strict request reading over real HTTP on both stores (spec/rules.md#s1-20,
 * #s1-21): random invalid create bodies (extra keys, case aliases, wrong types, non-canonical
 * uint64 strings, duplicate keys injected into the raw text) and random bad list query strings are
 * all INVALID_ARGUMENT and write nothing. Plus concurrency: racing requests with one
 * Idempotency-Key have one effect.
 *
 * Longer than 400 lines: the generators of invalid bodies and query strings come first, then the
 * properties and the concurrency races that share the server and the fixture they read; splitting
 * would separate the generators from their only users.
 */
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BootstrapResult } from '../src/store/principal.ts';
import { api, type ApiResponse, startTestServer, STORES, type TestServer } from '@orbit/testing';

const NUM_RUNS = 60;
const newKey = (): string => `key-${randomBytes(8).toString('hex')}`;
const hex32 = (): string => randomBytes(16).toString('hex');

const CREATE_FIELDS = ['name', 'queue_id', 'types', 'from_sequence', 'max_pending', 'max_attempts'];
const LIST_PARAMS = ['queue_id', 'limit', 'cursor'];
const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
const ID = /^[0-9a-f]{32}$/;
const TYPES = ['task.cancelled', 'task.failed', 'task.needs_review', 'task.succeeded'];

function expectError(res: ApiResponse, status: number, code: string): void {
  expect({ status: res.status, code: res.json?.error?.code }, res.text).toEqual({ status, code });
}

/** Strings that look like counters but are not canonical uint64 decimals. */
const nonCanonicalUint64: fc.Arbitrary<string> = fc.oneof(
  fc.bigInt(0n, 10n ** 19n).map((n) => `0${n}`),
  fc.bigInt(0n, 10n ** 19n).map((n) => `+${n}`),
  fc.bigInt(0n, 10n ** 19n).map((n) => `-${n}`),
  fc.tuple(fc.bigInt(0n, 10n ** 19n), fc.nat(99)).map(([n, f]) => `${n}.${f}`),
  fc.tuple(fc.bigInt(0n, 10n ** 6n), fc.nat(9)).map(([n, e]) => `${n}e${e}`),
  fc.tuple(fc.bigInt(0n, 10n ** 19n), fc.constantFrom(' ', '\t', '\n', '\u00a0')).map(([n, ws]) => `${ws}${n}`),
  fc.tuple(fc.bigInt(0n, 10n ** 19n), fc.constantFrom(' ', '\t', '\n', '\u00a0')).map(([n, ws]) => `${n}${ws}`),
  fc.bigInt(2n ** 64n, 2n ** 96n).map(String),
  fc.bigInt(0n, 2n ** 64n - 1n).map((n) => `0x${n.toString(16)}`),
  fc.constantFrom('', '-0', '+0', '00', '0.0', 'NaN', 'Infinity', '\u0661', '１', '1_000', '18446744073709551616', '1,000'),
);

/** A JSON object text from ordered members, so that duplicates and odd keys survive. */
function objectText(members: ReadonlyArray<readonly [string, string]>): string {
  return `{${members.map(([k, v]) => `${k}:${v}`).join(',')}}`;
}

/** A key written with one character as a \uXXXX escape: the same key after unescaping. */
function escapeOne(key: string, at: number): string {
  const i = at % key.length;
  const code = key.charCodeAt(i).toString(16).padStart(4, '0');
  return `"${JSON.stringify(key.slice(0, i)).slice(1, -1)}\\u${code}${JSON.stringify(key.slice(i + 1)).slice(1, -1)}"`;
}

describe.each(STORES)('HTTP properties (%s)', (kind) => {
  let server: TestServer;
  let base: string;
  let owner: BootstrapResult;
  let q: string;
  let head: bigint;

  beforeAll(async () => {
    server = await startTestServer(kind);
    base = server.url;
    owner = await server.bootstrap({ namespace: 'props', application: 'app', queues: ['q', 'q2'] });
    q = owner.queue_ids.q!;
    for (let i = 0; i < 3; i++) {
      const res = await api(base, 'POST', `/v1/queues/${q}/results`, {
        token: owner.token,
        key: newKey(),
        body: { type: 'task.failed', task_id: hex32(), task_revision: '1' },
      });
      expect(res.status).toBe(201);
    }
    head = (await server.orbit.store.logPosition()).head;
    for (let i = 0; i < 3; i++) {
      const res = await api(base, 'POST', '/v1/subscriptions', {
        token: owner.token,
        key: newKey(),
        body: { name: `existing-${i}`, queue_id: q },
      });
      expect(res.status).toBe(201);
    }
  });

  afterAll(async () => {
    await server?.stop();
  });

  async function listText(queueId = q): Promise<string> {
    const res = await api(base, 'GET', `/v1/subscriptions?queue_id=${queueId}&limit=100`, {
      token: owner.token,
      expect: 'validateSubscriptionList',
    });
    expect(res.status).toBe(200);
    return JSON.stringify(res.json.data);
  }

  /** Optional valid members added to the base body, so defects are found among valid neighbours. */
  const validExtras: fc.Arbitrary<Array<readonly [string, string]>> = fc
    .record(
      {
        types: fc.subarray(TYPES),
        from_sequence: fc.oneof(fc.constant(null), fc.bigInt(0n, 3n).map(String)),
        max_pending: fc.integer({ min: 0, max: 1000 }),
        max_attempts: fc.integer({ min: 0, max: 100 }),
      },
      { requiredKeys: [] },
    )
    .map((extras) => Object.entries(extras).map(([k, v]) => [JSON.stringify(k), JSON.stringify(v)] as const));

  function baseMembers(): Array<readonly [string, string]> {
    return [
      ['"name"', '"prop-never"'],
      ['"queue_id"', JSON.stringify(q)],
    ];
  }

  const notName = fc.string({ maxLength: 140 }).filter((s) => !NAME.test(s));
  const notId = fc.string({ maxLength: 40 }).filter((s) => !ID.test(s));
  const notInteger = fc.double({ noNaN: true, noDefaultInfinity: true }).filter((d) => !Number.isInteger(d));
  const wrongValue: fc.Arbitrary<readonly [string, unknown]> = fc.oneof(
    fc.tuple(
      fc.constant('name'),
      fc.oneof(
        notName,
        fc.integer(),
        fc.boolean(),
        fc.constant(null),
        fc.array(fc.string(), { maxLength: 2 }),
        fc.dictionary(fc.string(), fc.nat()),
      ),
    ),
    fc.tuple(
      fc.constant('queue_id'),
      fc.oneof(notId, fc.constant(hex32().toUpperCase()), fc.integer(), fc.constant(null), fc.constant([])),
    ),
    fc.tuple(
      fc.constant('types'),
      fc.oneof(
        fc.constantFrom(...TYPES),
        fc.constant(null),
        fc.integer(),
        fc.constantFrom(TYPES, TYPES.slice(0, 2)).map((t) => [...t, t[0]]),
        fc.array(
          fc.string().filter((s) => !TYPES.includes(s)),
          { minLength: 1, maxLength: 3 },
        ),
        fc.constant(['task.requeued']),
        fc.constant(['TASK.FAILED']),
      ),
    ),
    fc.tuple(
      fc.constant('from_sequence'),
      fc.oneof(
        nonCanonicalUint64,
        fc.integer(),
        fc.boolean(),
        fc.constant([]),
        fc.constant({}),
        fc.bigInt(1n, 2n ** 64n - 1n).map((n) => (head + n > 2n ** 64n - 1n ? 2n ** 64n - 1n : head + n).toString()),
      ),
    ),
    fc.tuple(
      fc.constant('max_pending'),
      fc.oneof(
        fc.integer({ min: 1001 }),
        fc.integer({ max: -1 }),
        notInteger,
        fc.integer({ min: 0, max: 1000 }).map(String),
        fc.constant(null),
        fc.boolean(),
      ),
    ),
    fc.tuple(
      fc.constant('max_attempts'),
      fc.oneof(
        fc.integer({ min: 101 }),
        fc.integer({ max: -1 }),
        notInteger,
        fc.integer({ min: 0, max: 100 }).map(String),
        fc.constant(null),
        fc.boolean(),
      ),
    ),
  );

  type Defect = (members: Array<readonly [string, string]>) => Array<readonly [string, string]>;

  const defect: fc.Arbitrary<[string, Defect]> = fc.oneof(
    // An unknown field (any key that is not one of the six).
    fc
      .tuple(
        fc.string({ minLength: 0, maxLength: 16 }).filter((k) => !CREATE_FIELDS.includes(k)),
        fc.jsonValue({ maxDepth: 2 }),
        fc.nat(),
      )
      .map(([k, v, at]): [string, Defect] => [
        `extra ${JSON.stringify(k)}`,
        (m) => insert(m, [JSON.stringify(k), JSON.stringify(v) ?? 'null'], at),
      ]),
    // A case-variant alias next to the real field.
    fc.tuple(fc.constantFrom(...CREATE_FIELDS), fc.nat(), fc.nat()).map(([field, pos, at]): [string, Defect] => {
      const letters = [...field].map((c, i) => (/[a-z]/.test(c) ? i : -1)).filter((i) => i >= 0);
      const i = letters[pos % letters.length]!;
      const alias = field.slice(0, i) + field[i]!.toUpperCase() + field.slice(i + 1);
      return [`alias ${alias}`, (m) => insert(m, [JSON.stringify(alias), '"prop-never"'], at)];
    }),
    // A field of the wrong type or out of range (replacing or adding it).
    wrongValue.map(([field, value]): [string, Defect] => [
      `wrong ${field}=${JSON.stringify(value)}`,
      (m) => [...m.filter(([k]) => k !== JSON.stringify(field)), [JSON.stringify(field), JSON.stringify(value)]],
    ]),
    // A duplicate key, plain or with an escaped character, with the same or another value.
    fc
      .tuple(fc.nat(), fc.nat(), fc.boolean(), fc.boolean(), fc.nat())
      .map(([which, escapeAt, escaped, sameValue, at]): [string, Defect] => [
        `duplicate #${which}${escaped ? ' escaped' : ''}`,
        (m) => {
          const [key, value] = m[which % m.length]!;
          const plain = JSON.parse(key) as string;
          const dupKey = escaped ? escapeOne(plain, escapeAt) : key;
          return insert(m, [dupKey, sameValue ? value : '"other"'], at);
        },
      ]),
    // A required field missing.
    fc
      .constantFrom('name', 'queue_id')
      .map((field): [string, Defect] => [`missing ${field}`, (m) => m.filter(([k]) => k !== JSON.stringify(field))]),
  );

  function insert(
    members: Array<readonly [string, string]>,
    member: readonly [string, string],
    at: number,
  ): Array<readonly [string, string]> {
    const i = at % (members.length + 1);
    return [...members.slice(0, i), member, ...members.slice(i)];
  }

  it('refuses random invalid create bodies with INVALID_ARGUMENT and writes nothing', async () => {
    const before = await listText();
    await fc.assert(
      fc.asyncProperty(validExtras, defect, async (extras, [label, apply]) => {
        const text = objectText(apply([...baseMembers(), ...extras]));
        const res = await api(base, 'POST', '/v1/subscriptions', { token: owner.token, key: newKey(), rawBody: text });
        expect({ status: res.status, code: res.json?.error?.code, label, text }).toEqual({
          status: 400,
          code: 'INVALID_ARGUMENT',
          label,
          text,
        });
        expect(await listText()).toBe(before);
      }),
      { numRuns: NUM_RUNS },
    );
    expect(await listText()).toBe(before);
  });

  it('accepts the valid neighbours of those bodies (the generator is not vacuous)', async () => {
    await fc.assert(
      fc.asyncProperty(validExtras, async (extras) => {
        const name = `valid-${randomBytes(6).toString('hex')}`;
        const text = objectText([['"name"', JSON.stringify(name)], ['"queue_id"', JSON.stringify(owner.queue_ids.q2!)], ...extras]);
        const res = await api(base, 'POST', '/v1/subscriptions', {
          token: owner.token,
          key: newKey(),
          rawBody: text,
          expect: 'validateSubscriptionResult',
        });
        expect(res.status, `${text} → ${res.text}`).toBe(201);
        // Clean up so that the namespace limit is never reached.
        const retired = await api(base, 'POST', `/v1/subscriptions/${res.json.data.subscription.id}:retire`, {
          token: owner.token,
          key: newKey(),
          body: { expected_revision: '1', reason: 'cleanup' },
        });
        // With from_sequence below the head, unmaterialized matching results may block retiring.
        expect([200, 409]).toContain(retired.status);
        if (retired.status === 409) {
          const paused = await api(base, 'POST', `/v1/subscriptions/${res.json.data.subscription.id}:configure`, {
            token: owner.token,
            key: newKey(),
            body: { expected_revision: '1', enabled: false, reason: 'r' },
          });
          expect(paused.status).toBe(200);
        }
      }),
      { numRuns: 10 },
    );
  });

  it('refuses random bad list query strings with INVALID_ARGUMENT', async () => {
    const before = await listText();
    const foreignCursor = (await api(base, 'GET', `/v1/subscriptions?queue_id=${owner.queue_ids.q2!}&limit=1`, { token: owner.token })).json
      .data.next_cursor as string | undefined;
    const goodLimit = fc.integer({ min: 1, max: 100 }).map(String);
    const badLimit = fc.oneof(
      fc.constantFrom('0', '101', '', '-1', '+1', '1.0', '1e1', ' 1', '1 ', '0x10', '١'),
      fc.integer({ min: 101, max: 1_000_000_000 }).map(String),
      fc.integer({ min: 0, max: 100 }).map((n) => `0${n}`),
      fc.string({ maxLength: 6 }).filter((s) => !/^([1-9][0-9]?|100)$/.test(s)),
    );
    const badCursor = fc.oneof(
      fc.string({ maxLength: 80 }),
      fc
        .tuple(fc.base64String({ maxLength: 40 }), fc.base64String({ maxLength: 44 }))
        .map(([a, b]) => `${a}.${b}`.replace(/\+/g, '-').replace(/\//g, '_').replace(/=/g, '')),
      fc.constant(foreignCursor ?? 'x.y'),
      fc.constant('a'.repeat(600)),
    );
    const unknownName = fc.string({ maxLength: 12 }).filter((k) => !LIST_PARAMS.includes(k));
    type Param = readonly [string, string];
    const defect: fc.Arbitrary<[string, (p: Param[]) => Param[]]> = fc.oneof(
      badLimit.map((v): [string, (p: Param[]) => Param[]] => [
        `limit=${JSON.stringify(v)}`,
        (p) => [...p.filter(([k]) => k !== 'limit'), ['limit', v]],
      ]),
      badCursor.map((v): [string, (p: Param[]) => Param[]] => [`cursor=${JSON.stringify(v)}`, (p) => [...p, ['cursor', v]]]),
      fc
        .tuple(unknownName, fc.string({ maxLength: 8 }))
        .map(([k, v]): [string, (p: Param[]) => Param[]] => [`unknown ${JSON.stringify(k)}`, (p) => [...p, [k, v]]]),
      fc
        .constantFrom('Queue_id', 'QUEUE_ID', 'Limit', 'LIMIT', 'Cursor', 'queue-id', 'queueId', 'state', 'namespace_id', 'credential_id')
        .map((k): [string, (p: Param[]) => Param[]] => [`alias ${k}`, (p) => [...p, [k, k.toLowerCase().startsWith('queue') ? q : '1']]]),
      fc.nat().map((i): [string, (p: Param[]) => Param[]] => ['repeated', (p) => [...p, p[i % p.length]!]]),
      fc.constant<[string, (p: Param[]) => Param[]]>(['missing queue_id', (p) => p.filter(([k]) => k !== 'queue_id')]),
      fc
        .oneof(notId, fc.constant(q.toUpperCase()), fc.constant(` ${q}`))
        .map((v): [string, (p: Param[]) => Param[]] => [
          `queue_id=${JSON.stringify(v)}`,
          (p) => [...p.filter(([k]) => k !== 'queue_id'), ['queue_id', v]],
        ]),
    );
    await fc.assert(
      fc.asyncProperty(fc.option(goodLimit), defect, fc.nat(), async (limit, [label, apply], seed) => {
        let params: Param[] = [['queue_id', q]];
        if (limit !== null) params.push(['limit', limit]);
        params = apply(params);
        // A deterministic shuffle.
        params = params
          .map((p, i) => [p, (seed * (i + 7)) % 13] as const)
          .sort((a, b) => a[1] - b[1])
          .map(([p]) => p);
        const query = params.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&');
        const res = await api(base, 'GET', `/v1/subscriptions?${query}`, { token: owner.token });
        expect({ status: res.status, code: res.json?.error?.code, label, query }).toEqual({
          status: 400,
          code: 'INVALID_ARGUMENT',
          label,
          query,
        });
      }),
      { numRuns: NUM_RUNS },
    );
    expect(await listText()).toBe(before);
  });

  it('refuses non-canonical counters in configure bodies and changes nothing', async () => {
    const sub = JSON.parse(await listText()).items.find((s: any) => s.name === 'existing-0');
    await fc.assert(
      fc.asyncProperty(nonCanonicalUint64, fc.boolean(), async (revision, enabled) => {
        const res = await api(base, 'POST', `/v1/subscriptions/${sub.id}:configure`, {
          token: owner.token,
          key: newKey(),
          body: { expected_revision: revision, enabled, reason: 'r' },
        });
        expect({ status: res.status, code: res.json?.error?.code, revision }).toEqual({ status: 400, code: 'INVALID_ARGUMENT', revision });
      }),
      { numRuns: NUM_RUNS },
    );
    const now = await api(base, 'GET', `/v1/subscriptions/${sub.id}`, { token: owner.token });
    expect(now.json.data).toEqual(sub);
  });

  describe('concurrency', () => {
    it('20 concurrent creates with one key and body create exactly one subscription', async () => {
      const key = newKey();
      const body = { name: 'racing', queue_id: q, types: ['task.failed'] };
      const responses = await Promise.all(
        Array.from({ length: 20 }, () =>
          api(base, 'POST', '/v1/subscriptions', { token: owner.token, key, body, expect: 'validateSubscriptionResult' }),
        ),
      );
      const statuses = responses.map((r) => r.status).sort();
      expect(statuses, responses.map((r) => r.text).join('\n')).toEqual([...Array(19).fill(200), 201]);
      const first = responses.find((r) => r.status === 201)!.json.data;
      expect(first.deduplicated).toBe(false);
      for (const r of responses.filter((r) => r.status === 200))
        expect(r.json.data).toEqual({ subscription: first.subscription, deduplicated: true });
      const listed = JSON.parse(await listText()).items.filter((s: any) => s.name === 'racing');
      expect(listed.map((s: any) => s.id)).toEqual([first.subscription.id]);
    });

    it('20 concurrent creates of one name with different keys: one 201, the rest STATE_CONFLICT', async () => {
      const responses = await Promise.all(
        Array.from({ length: 20 }, () =>
          api(base, 'POST', '/v1/subscriptions', { token: owner.token, key: newKey(), body: { name: 'racing-name', queue_id: q } }),
        ),
      );
      expect(
        responses.filter((r) => r.status === 201),
        responses.map((r) => r.text).join('\n'),
      ).toHaveLength(1);
      for (const r of responses.filter((r) => r.status !== 201)) expectError(r, 409, 'STATE_CONFLICT');
      expect(JSON.parse(await listText()).items.filter((s: any) => s.name === 'racing-name')).toHaveLength(1);
    });

    it('concurrent creates never exceed 64 non-retired subscriptions in a namespace', async () => {
      const ns = await server.bootstrap({ namespace: 'props-limit', application: 'app', queues: ['lq'] });
      const lq = ns.queue_ids.lq!;
      for (let i = 0; i < 58; i++)
        expect(
          (await api(base, 'POST', '/v1/subscriptions', { token: ns.token, key: newKey(), body: { name: `pre-${i}`, queue_id: lq } }))
            .status,
        ).toBe(201);
      const responses = await Promise.all(
        Array.from({ length: 16 }, (_, i) =>
          api(base, 'POST', '/v1/subscriptions', { token: ns.token, key: newKey(), body: { name: `race-${i}`, queue_id: lq } }),
        ),
      );
      expect(
        responses.filter((r) => r.status === 201),
        responses.map((r) => r.text).join('\n'),
      ).toHaveLength(6);
      for (const r of responses.filter((r) => r.status !== 201)) expectError(r, 409, 'SUBSCRIPTION_LIMIT');
      const listed = await api(base, 'GET', `/v1/subscriptions?queue_id=${lq}&limit=100`, { token: ns.token });
      expect(listed.json.data.items).toHaveLength(64);
    });

    it('20 concurrent publishes with one key append one result', async () => {
      const before = (await server.orbit.store.logPosition()).head;
      const key = newKey();
      const body = { type: 'task.succeeded', task_id: hex32(), task_revision: '1' };
      const responses = await Promise.all(
        Array.from({ length: 20 }, () =>
          api(base, 'POST', `/v1/queues/${q}/results`, { token: owner.token, key, body, expect: 'validatePublishResultResponse' }),
        ),
      );
      expect(responses.map((r) => r.status).sort(), responses.map((r) => r.text).join('\n')).toEqual([...Array(19).fill(200), 201]);
      const event = responses.find((r) => r.status === 201)!.json.data.event;
      for (const r of responses) expect(r.json.data.event).toEqual(event);
      expect((await server.orbit.store.logPosition()).head).toBe(before + 1n);
    });

    it('10 concurrent configures with one key bump the revision once', async () => {
      const created = await api(base, 'POST', '/v1/subscriptions', {
        token: owner.token,
        key: newKey(),
        body: { name: 'racing-configure', queue_id: q },
      });
      const id = created.json.data.subscription.id;
      const key = newKey();
      const responses = await Promise.all(
        Array.from({ length: 10 }, () =>
          api(base, 'POST', `/v1/subscriptions/${id}:configure`, {
            token: owner.token,
            key,
            body: { expected_revision: '1', enabled: false, reason: 'race' },
            expect: 'validateSubscriptionResult',
          }),
        ),
      );
      expect(
        responses.map((r) => r.status),
        responses.map((r) => r.text).join('\n'),
      ).toEqual(Array(10).fill(200));
      expect(responses.filter((r) => r.json.data.deduplicated === false)).toHaveLength(1);
      for (const r of responses) expect(r.json.data.subscription).toMatchObject({ revision: '2', enabled: false });
      const now = await api(base, 'GET', `/v1/subscriptions/${id}`, { token: owner.token });
      expect(now.json.data).toMatchObject({ revision: '2', enabled: false });
    });

    it('10 concurrent retires with one key retire once and all answer with the receipt', async () => {
      const created = await api(base, 'POST', '/v1/subscriptions', {
        token: owner.token,
        key: newKey(),
        body: { name: 'racing-retire', queue_id: owner.queue_ids.q2! },
      });
      const id = created.json.data.subscription.id;
      const key = newKey();
      const responses = await Promise.all(
        Array.from({ length: 10 }, () =>
          api(base, 'POST', `/v1/subscriptions/${id}:retire`, {
            token: owner.token,
            key,
            body: { expected_revision: '1', reason: 'race' },
            expect: 'validateSubscriptionResult',
          }),
        ),
      );
      expect(
        responses.map((r) => r.status),
        responses.map((r) => r.text).join('\n'),
      ).toEqual(Array(10).fill(200));
      const first = responses.find((r) => r.json.data.deduplicated === false)!.json.data.subscription;
      expect(responses.filter((r) => r.json.data.deduplicated === false)).toHaveLength(1);
      for (const r of responses) expect(r.json.data.subscription).toEqual(first);
    });
  });
});

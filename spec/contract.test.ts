/**
 * The contract in spec/ against the seed's own examples (spec/examples/) and the shapes the seed
 * forbids, through the committed validators in generated/ (ajv standalone code).
 *
 * Longer than 400 lines: most of it is one table, `componentCases`, of valid and invalid values for
 * every component schema of openapi.yaml, which a test checks for completeness; split up, that
 * check would have to gather the table from several files.
 */
import { readFileSync, readdirSync } from 'node:fs';
import Ajv2020 from 'ajv/dist/2020.js';
import YAML from 'yaml';
import { describe, expect, it } from 'vitest';
import * as generated from '@orbit/generated';
import type { Validator } from '@orbit/generated';
import { MAX_BATCH_ITEMS } from './protocol.ts';

type JsonObject = Record<string, unknown>;

const specFile = (name: string): URL => new URL(`./${name}`, import.meta.url);
const eventsSchema = JSON.parse(readFileSync(specFile('events.schema.json'), 'utf8')) as JsonObject;
const openapi = YAML.parse(readFileSync(specFile('openapi.yaml'), 'utf8')) as JsonObject;
const componentSchemas = (openapi.components as JsonObject).schemas as JsonObject;

function example(name: string): JsonObject {
  return JSON.parse(readFileSync(specFile(`examples/${name}.json`), 'utf8')) as JsonObject;
}

function validator(name: string): Validator<unknown> {
  const found = (generated as unknown as Record<string, Validator<unknown> | undefined>)[`validate${name}`];
  if (typeof found !== 'function') throw new Error(`no generated validator validate${name}`);
  return found;
}

/** `base` with `patch` applied at the JSON path `at` (undefined deletes the member). */
function withAt(base: unknown, at: (string | number)[], patch: unknown): JsonObject {
  const copy = structuredClone(base) as JsonObject;
  let node = copy as Record<string | number, unknown>;
  for (const key of at.slice(0, -1)) node = node[key] as Record<string | number, unknown>;
  const last = at[at.length - 1] as string | number;
  if (patch === undefined) delete node[last];
  else node[last] = patch;
  return copy;
}

function expectValid(name: string, data: unknown): void {
  const validate = validator(name);
  const ok = validate(data);
  expect(ok, `${name} should accept ${JSON.stringify(data)}: ${JSON.stringify(validate.errors)}`).toBe(true);
}

function expectInvalid(name: string, data: unknown): void {
  expect(validator(name)(data), `${name} should reject ${JSON.stringify(data)}`).toBe(false);
}

const ID = '0123456789abcdef0123456789abcdef';
const SECRET = 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';

const wsExamples = {
  'ws.hello': { def: 'HelloFrame', direction: 'ClientFrame' },
  'ws.ack-request': { def: 'AckRequestFrame', direction: 'ClientFrame' },
  'ws.ping': { def: 'PingFrame', direction: 'ClientFrame' },
  'ws.welcome': { def: 'WelcomeFrame', direction: 'ServerFrame' },
  'ws.deliver': { def: 'DeliverFrame', direction: 'ServerFrame' },
  'ws.ack-reply': { def: 'AckReplyFrame', direction: 'ServerFrame' },
} as const;

const httpExamples = {
  'http.create-subscription.request': 'CreateSubscriptionRequest',
  'http.create-subscription.response': 'SubscriptionResultEnvelope',
  'http.configure-subscription.request': 'ConfigureSubscriptionRequest',
  'http.retry-delivery.request': 'RetryDeliveryRequest',
} as const;

const errorFrame = {
  protocol_version: '1',
  type: 'error',
  message_id: ID,
  reply_to: 'dddddddddddddddddddddddddddddddd',
  session_id: '44444444444444444444444444444444',
  error: { code: 'DELIVERY_LEASE_LOST', message: 'the lease proof was replaced' },
};
const pingReply = {
  protocol_version: '1',
  type: 'ack',
  message_id: ID,
  reply_to: 'ffffffffffffffffffffffffffffffff',
  session_id: '44444444444444444444444444444444',
  body: { server_time: '2026-09-17T10:00:15.123Z', enabled: false },
};

describe('the spec files', () => {
  it('events.schema.json is a valid Draft 2020-12 schema that compiles in ajv strict mode', () => {
    const ajv = new Ajv2020({ strict: true });
    ajv.addKeyword('x-orbit-raw-json');
    expect(ajv.validateSchema(eventsSchema), JSON.stringify(ajv.errors)).toBe(true);
    ajv.addSchema(eventsSchema);
    for (const name of Object.keys(eventsSchema.$defs as JsonObject)) {
      expect(ajv.getSchema(`${eventsSchema.$id as string}#/$defs/${name}`)).toBeTypeOf('function');
    }
  });

  it('every $def has a description and every object schema is closed (except free-form details)', () => {
    const open: string[] = [];
    // A members schema is open by design: it is only used in the allOf of schemas that close it.
    const mixins = new Set<string>();
    for (const schema of Object.values(componentSchemas) as JsonObject[]) {
      if (schema.unevaluatedProperties !== false) continue;
      for (const part of (schema.allOf ?? []) as JsonObject[]) if (typeof part.$ref === 'string') mixins.add(`openapi.yaml${part.$ref}`);
    }
    const walk = (node: unknown, path: string): void => {
      if (Array.isArray(node)) {
        for (const [i, item] of node.entries()) walk(item, `${path}/${i}`);
        return;
      }
      if (typeof node !== 'object' || node === null) return;
      const schema = node as JsonObject;
      const closed = schema.additionalProperties === false || schema.unevaluatedProperties === false;
      if (schema.type === 'object' && !closed && !path.endsWith('/details') && !mixins.has(path)) open.push(path);
      for (const [key, value] of Object.entries(schema)) walk(value, `${path}/${key}`);
    };
    walk(eventsSchema, 'events.schema.json#');
    walk(componentSchemas, 'openapi.yaml#/components/schemas');
    expect(open).toEqual([]);
    for (const [name, def] of Object.entries(eventsSchema.$defs as JsonObject)) {
      expect((def as JsonObject).description, name).toMatch(/spec\/rules\.md#s\d+-\d+/);
    }
  });

  it('every example in spec/examples is covered by this test', () => {
    const files = readdirSync(specFile('examples')).map((file) => file.replace(/\.json$/, ''));
    expect(files.sort()).toEqual([...Object.keys(wsExamples), ...Object.keys(httpExamples)].sort());
  });
});

describe("the seed's examples validate", () => {
  for (const [file, { def, direction }] of Object.entries(wsExamples)) {
    it(`${file} is a ${def} and a ${direction}, and not a frame of the other direction`, () => {
      const frame = example(file);
      expectValid(def, frame);
      expectValid(direction, frame);
      expectValid('Frame', frame);
      expectInvalid(direction === 'ClientFrame' ? 'ServerFrame' : 'ClientFrame', frame);
    });
  }
  for (const [file, component] of Object.entries(httpExamples)) {
    it(`${file} is a ${component}`, () => expectValid(component, example(file)));
  }
  it('the delivery and event of event.deliver validate on their own', () => {
    const body = example('ws.deliver').body as JsonObject;
    expectValid('EventDelivery', body.delivery);
    expectValid('ResultEvent', body.event);
    expectValid('ResultSnapshot', (body.event as JsonObject).snapshot);
    expectValid('LeaseSecret', body.lease_secret);
  });
  it('the error and ping-reply frames of §7 validate', () => {
    expectValid('ErrorFrame', errorFrame);
    expectValid('ServerFrame', errorFrame);
    expectValid('PingReplyFrame', pingReply);
    expectValid('ServerFrame', pingReply);
    // A background claim error has no reply_to; a failed hello binding has no session_id.
    expectValid('ErrorFrame', withAt(withAt(errorFrame, ['reply_to'], undefined), ['session_id'], undefined));
  });
});

describe('forbidden frame shapes are rejected', () => {
  const hello = example('ws.hello');
  it.each([
    ['session_id', '44444444444444444444444444444444'],
    ['reply_to', 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'],
    ['error', { code: 'INVALID_ARGUMENT', message: 'x' }],
  ])('hello with %s', (field, value) => {
    expectInvalid('HelloFrame', withAt(hello, [field], value));
    expectInvalid('ClientFrame', withAt(hello, [field], value));
  });

  it('error frame with a body, or without error', () => {
    expectInvalid('ErrorFrame', withAt(errorFrame, ['body'], {}));
    expectInvalid('ServerFrame', withAt(errorFrame, ['body'], {}));
    expectInvalid('ErrorFrame', withAt(errorFrame, ['error'], undefined));
    expectInvalid('ErrorFrame', withAt(errorFrame, ['error', 'code'], 'TEAPOT'));
    expectInvalid('ErrorFrame', withAt(errorFrame, ['error', 'message'], undefined));
  });

  it('deliver frame with reply_to or without session_id', () => {
    const deliver = example('ws.deliver');
    expectInvalid('DeliverFrame', withAt(deliver, ['reply_to'], ID));
    expectInvalid('DeliverFrame', withAt(deliver, ['session_id'], undefined));
  });

  it('ping with a non-empty body', () => {
    const ping = example('ws.ping');
    expectInvalid('PingFrame', withAt(ping, ['body'], { x: 1 }));
    expectInvalid('ClientFrame', withAt(ping, ['body'], { server_time: '2026-09-17T10:00:00Z' }));
    expectInvalid('PingFrame', withAt(ping, ['body'], undefined));
    expectInvalid('PingFrame', withAt(ping, ['body'], []));
  });

  it('protocol_version other than the string "1"', () => {
    for (const version of ['2', 1, '01', '']) expectInvalid('ClientFrame', withAt(hello, ['protocol_version'], version));
    expectInvalid('ClientFrame', withAt(hello, ['protocol_version'], undefined));
  });

  it('unknown frame types and unknown fields anywhere', () => {
    expectInvalid('ClientFrame', withAt(hello, ['type'], 'events.welcome'));
    expectInvalid('ServerFrame', withAt(example('ws.welcome'), ['type'], 'events.hello'));
    const failures: string[] = [];
    for (const [file, { def }] of Object.entries(wsExamples)) {
      const frame = example(file);
      const visit = (node: unknown, at: string[]): void => {
        if (typeof node !== 'object' || node === null || Array.isArray(node)) return;
        // details and snapshot.result are free-form by definition.
        if (at[at.length - 1] === 'details' || at[at.length - 1] === 'result') return;
        if (validator(def)(withAt(frame, [...at, 'unknown_field'], 1))) failures.push(`${file}:/${at.join('/')}`);
        if (validator(def)(withAt(frame, [...at, 'Unknown_Field'], 1))) failures.push(`${file}:/${at.join('/')}`);
        for (const [key, value] of Object.entries(node)) visit(value, [...at, key]);
      };
      visit(frame, []);
    }
    expect(failures).toEqual([]);
  });

  it('a case-variant alias of a field name is an unknown field', () => {
    expectInvalid('HelloFrame', withAt(withAt(hello, ['message_id'], undefined), ['Message_Id'], ID));
    expectInvalid('HelloFrame', withAt(withAt(hello, ['body', 'capacity'], undefined), ['body', 'Capacity'], 1));
  });

  it('ids that are not 32 lower-case hex characters', () => {
    for (const id of [ID.toUpperCase(), '0123456789ABCDEF0123456789abcdef', ID.slice(1), `${ID}0`, 'g'.repeat(32), 12]) {
      expectInvalid('Id', id);
      expectInvalid('HelloFrame', withAt(hello, ['message_id'], id));
      expectInvalid('HelloFrame', withAt(hello, ['body', 'subscription_id'], id));
    }
    expectValid('Id', ID);
  });

  it('capacity outside 1..32 or not an integer', () => {
    for (const capacity of [0, 33, -1, 1.5, '1', null]) {
      expectInvalid('HelloFrame', withAt(hello, ['body', 'capacity'], capacity));
      expectInvalid('WelcomeFrame', withAt(example('ws.welcome'), ['body', 'capacity'], capacity));
    }
    for (const capacity of [1, 32]) expectValid('HelloFrame', withAt(hello, ['body', 'capacity'], capacity));
  });

  it('non-canonical uint64 strings', () => {
    for (const value of ['01', '+1', '1.0', '-1', '', ' 1', '1 ', '1e3', '0x10', '123456789012345678901', 1]) {
      expectInvalid('Uint64', value);
      expectInvalid('AckRequestFrame', withAt(example('ws.ack-request'), ['body', 'epoch'], value));
    }
    for (const value of ['0', '1', '18446744073709551615']) expectValid('Uint64', value);
  });

  it('lease secrets that are not canonical 32-byte base64url without padding', () => {
    const ack = example('ws.ack-request');
    const bad = {
      padded: `${SECRET.slice(0, 42)}A=`,
      'with +': `+${SECRET.slice(1)}`,
      'with /': `${SECRET.slice(0, 20)}/${SECRET.slice(21)}`,
      '42 characters': SECRET.slice(1),
      '44 characters': `${SECRET}A`,
      'non-zero trailing bits': `${SECRET.slice(0, 42)}B`,
      "non-zero trailing bits (last char 'x')": `${SECRET.slice(0, 42)}x`,
    };
    for (const [why, secret] of Object.entries(bad)) {
      expect(validator('LeaseSecret')(secret), why).toBe(false);
      expect(validator('AckRequestFrame')(withAt(ack, ['body', 'lease_secret'], secret)), why).toBe(false);
    }
    const fromBytes = (bytes: Buffer): string => bytes.toString('base64url');
    for (const fill of [0x00, 0xff, 0x5a]) expectValid('LeaseSecret', fromBytes(Buffer.alloc(32, fill)));
    expectValid('LeaseSecret', fromBytes(Buffer.from(Array.from({ length: 32 }, (_, i) => (i * 37 + 11) % 256))));
  });

  it('timestamps that are not UTC RFC 3339 with Z', () => {
    for (const value of [
      '2026-09-17T10:00:00+00:00',
      '2026-09-17T10:00:00z',
      '2026-09-17 10:00:00Z',
      '2026-09-17T10:00Z',
      '2026-09-17T10:00:00.Z',
      '2026-09-17T10:00:00.1234567890Z',
      '2026-09-17',
    ]) {
      expectInvalid('Timestamp', value);
    }
    for (const value of ['2026-09-17T10:00:00Z', '2026-09-17T10:00:00.5Z', '2026-09-17T10:00:00.123456789Z']) {
      expectValid('Timestamp', value);
    }
  });

  it('lease_until exactly when LEASED, acknowledged_at exactly when ACKED', () => {
    const leased = (example('ws.deliver').body as JsonObject).delivery as JsonObject;
    const at = '2026-09-17T10:00:01Z';
    const pending = withAt(withAt(leased, ['state'], 'PENDING'), ['lease_until'], undefined);
    expectValid('EventDelivery', pending);
    expectInvalid('EventDelivery', withAt(pending, ['lease_until'], at));
    expectInvalid('EventDelivery', withAt(leased, ['lease_until'], undefined));
    expectInvalid('EventDelivery', withAt(leased, ['acknowledged_at'], at));
    const acked = withAt(withAt(pending, ['state'], 'ACKED'), ['acknowledged_at'], at);
    expectValid('EventDelivery', acked);
    expectInvalid('EventDelivery', withAt(acked, ['acknowledged_at'], undefined));
    expectInvalid('EventDelivery', withAt(acked, ['lease_until'], at));
    expectValid('EventDelivery', withAt(pending, ['state'], 'EXPIRED'));
    expectInvalid('EventDelivery', withAt(pending, ['state'], 'DONE'));
    expectInvalid('DeliverFrame', withAt(example('ws.deliver'), ['body', 'delivery', 'acknowledged_at'], at));
  });

  it('attempt counters outside 0..1000000', () => {
    const leased = (example('ws.deliver').body as JsonObject).delivery as JsonObject;
    expectValid('EventDelivery', withAt(leased, ['attempt_budget'], 1000000));
    for (const value of [1000001, -1, 1.5, '20']) expectInvalid('EventDelivery', withAt(leased, ['attempt_budget'], value));
    expectInvalid('EventDelivery', withAt(leased, ['attempts'], -1));
  });

  it('result events: aggregate_kind, schema_version, free-form details and any JSON result', () => {
    const event = (example('ws.deliver').body as JsonObject).event as JsonObject;
    expectInvalid('ResultEvent', withAt(event, ['aggregate_kind'], 'queue'));
    expectInvalid('ResultEvent', withAt(event, ['snapshot', 'schema_version'], 2));
    expectInvalid('ResultEvent', withAt(event, ['snapshot', 'schema_version'], '1'));
    expectInvalid('ResultEvent', withAt(event, ['details'], 'CANCELLED'));
    expectInvalid('ResultEvent', withAt(event, ['type'], 'task.started'));
    expectValid('ResultEvent', withAt(event, ['type'], 'task.requeued'));
    expectValid('ResultEvent', withAt(event, ['snapshot', 'state'], 'QUEUED'));
    expectValid('ResultEvent', withAt(event, ['details'], { anything: { nested: [1, 'x', null] } }));
    // biome-ignore lint/correctness/noPrecisionLoss: any JSON value is accepted, including a number a double cannot hold
    for (const result of [null, 0, 'text', [1, 2], { big: 12345678901234567890 }, false]) {
      expectValid('ResultEvent', withAt(event, ['snapshot', 'result'], result));
    }
    expectValid('ResultEvent', withAt(event, ['snapshot', 'current_attempt_id'], ID));
    expectInvalid('ResultEvent', withAt(event, ['snapshot', 'current_attempt_id'], 'attempt-1'));
  });
});

/** At least one valid and one invalid value for every schema of openapi.yaml#/components/schemas. */
const subscription = (example('http.create-subscription.response').data as JsonObject).subscription as JsonObject;
const delivery = (example('ws.deliver').body as JsonObject).delivery as JsonObject;
const event = (example('ws.deliver').body as JsonObject).event as JsonObject;
const expiredDelivery = withAt(withAt(delivery, ['state'], 'EXPIRED'), ['lease_until'], undefined);
const queue = { id: ID, name: 'orders', created_at: '2026-01-02T03:04:05.678Z' };
const credential = {
  credential_id: ID,
  namespace_id: '11111111111111111111111111111111',
  application_id: '22222222222222222222222222222222',
  permissions: ['events:read', 'results:publish'],
  queue_count: 2,
};
const settingItems = [
  { name: 'listen', value: '127.0.0.1:8080' },
  { name: 'lease_duration_ms', value: 30000 },
  { name: 'create_database', value: false },
  { name: 'tls_cert', value: null },
];
const envelope = (data: unknown): JsonObject => ({ request_id: '77777777777777777777777777777777', data });
const historyEntry = { id: ID, action: 'pause', reason: 'receiver maintenance', revision: '2', created_at: '2026-09-17T10:00:00.000Z' };
const session = {
  session_id: ID,
  node_id: 'fedcba9876543210fedcba9876543210',
  capacity: 8,
  leases_held: 3,
  connected_at: '2026-09-17T10:00:00.000Z',
  last_seen_at: '2026-09-17T10:00:05.000Z',
  node_last_seen_at: '2026-09-17T10:00:10.000Z',
};

const componentCases: Record<string, { valid: unknown[]; invalid: unknown[] }> = {
  CreateSubscriptionRequest: {
    valid: [
      example('http.create-subscription.request'),
      { name: 'a', queue_id: ID },
      { name: 'A.b_c-9', queue_id: ID, types: [], from_sequence: null, max_pending: 0, max_attempts: 0 },
      {
        name: 'x'.repeat(128),
        queue_id: ID,
        types: ['task.failed'],
        from_sequence: '0',
        max_pending: 1000,
        max_attempts: 100,
      },
    ],
    invalid: [
      { queue_id: ID },
      { name: 'a' },
      { name: '', queue_id: ID },
      { name: '-a', queue_id: ID },
      { name: 'x'.repeat(129), queue_id: ID },
      { name: 'a b', queue_id: ID },
      { name: 'a', queue_id: ID, types: ['task.requeued'] },
      { name: 'a', queue_id: ID, types: ['task.failed', 'task.failed'] },
      { name: 'a', queue_id: ID, from_sequence: '01' },
      { name: 'a', queue_id: ID, from_sequence: 12 },
      { name: 'a', queue_id: ID, max_pending: 1001 },
      { name: 'a', queue_id: ID, max_pending: -1 },
      { name: 'a', queue_id: ID, max_attempts: 101 },
      { name: 'a', queue_id: ID, max_attempts: '20' },
      { name: 'a', queue_id: ID, namespace_id: ID },
      { name: 'a', queue_id: ID, Name: 'b' },
    ],
  },
  Subscription: {
    valid: [subscription, { ...subscription, enabled: false, retired_at: '2026-09-18T00:00:00Z', retired_sequence: '40' }],
    invalid: [
      withAt(subscription, ['credential_id'], undefined),
      withAt(subscription, ['revision'], 1),
      withAt(subscription, ['types'], []),
      withAt(subscription, ['types'], ['task.failed', 'task.failed']),
      withAt(subscription, ['pending_count'], -1),
      withAt(subscription, ['max_pending'], 0),
      { ...subscription, retired_at: '2026-09-18T00:00:00Z' },
      { ...subscription, retired_sequence: '40' },
      { ...subscription, lease_secret: SECRET },
    ],
  },
  SubscriptionResult: {
    valid: [
      { subscription, deduplicated: false },
      { subscription, deduplicated: true },
    ],
    invalid: [{ subscription }, { subscription, deduplicated: 'false' }],
  },
  SubscriptionList: {
    valid: [{ items: [] }, { items: [subscription], next_cursor: 'opaque' }],
    invalid: [{ items: [subscription], next_cursor: '' }, { next_cursor: 'x' }, { items: [{}] }],
  },
  SubscriptionHistory: {
    valid: [{ items: [] }, { items: [historyEntry], next_cursor: 'opaque' }],
    invalid: [{ items: [historyEntry], next_cursor: '' }, { next_cursor: 'x' }, { items: [subscription] }],
  },
  SubscriptionSessionList: {
    valid: [{ items: [] }, { items: [session], next_cursor: 'opaque' }],
    invalid: [{ items: [session], next_cursor: '' }, { next_cursor: 'x' }, { items: [historyEntry] }],
  },
  SubscriptionSession: {
    valid: [session, { ...session, capacity: 1, leases_held: 0 }, { ...session, capacity: 32 }],
    invalid: [
      { ...session, capacity: 0 },
      { ...session, capacity: 33 },
      { ...session, leases_held: -1 },
      { ...session, node_id: 'node-1' },
      { ...session, connected_at: 'yesterday' },
      { ...session, description: 'host pid 1' },
      Object.fromEntries(Object.entries(session).filter(([k]) => k !== 'node_last_seen_at')),
    ],
  },
  QueueList: {
    valid: [{ items: [] }, { items: [queue], next_cursor: 'opaque' }],
    invalid: [{ items: [queue], next_cursor: '' }, { next_cursor: 'x' }, { items: [session] }],
  },
  Queue: {
    valid: [queue, { ...queue, name: 'q'.repeat(128) }],
    invalid: [
      { ...queue, name: '' },
      { ...queue, name: 'q'.repeat(129) },
      { ...queue, id: 'orders' },
      { ...queue, namespace_id: ID },
      Object.fromEntries(Object.entries(queue).filter(([k]) => k !== 'created_at')),
    ],
  },
  Credential: {
    valid: [credential, { ...credential, permissions: [], queue_count: 0 }],
    invalid: [
      { ...credential, permissions: ['events:admin'] },
      { ...credential, permissions: ['events:read', 'events:read'] },
      { ...credential, queue_count: -1 },
      { ...credential, token: 'orbit_secret' },
      Object.fromEntries(Object.entries(credential).filter(([k]) => k !== 'application_id')),
    ],
  },
  Settings: {
    valid: [{ items: [] }, { items: settingItems }],
    invalid: [{}, { items: settingItems, next_cursor: 'x' }, { items: [{ name: 'x' }] }],
  },
  Setting: {
    valid: settingItems,
    invalid: [
      { name: 'Lease', value: 1 },
      { name: 'listen', value: { host: '127.0.0.1' } },
      { name: 'listen', value: 1.5 },
      { name: 'listen', value: [] },
      { name: 'listen', value: 'x', source: 'env' },
    ],
  },
  SubscriptionHistoryEntry: {
    valid: [
      historyEntry,
      { ...historyEntry, action: 'create', reason: '', revision: '1', from_sequence: '0' },
      { ...historyEntry, action: 'retire', retired_sequence: '18446744073709551615' },
      {
        ...historyEntry,
        action: 'retry',
        delivery_id: 'fedcba9876543210fedcba9876543210',
        additional_attempts: 100,
        attempt_budget: 1000000,
      },
    ],
    invalid: [
      { ...historyEntry, action: 'configure' },
      { ...historyEntry, revision: 2 },
      { ...historyEntry, reason: 'x'.repeat(1025) },
      { ...historyEntry, credential_id: 'fedcba9876543210fedcba9876543210' },
      { ...historyEntry, additional_attempts: 0 },
      { ...historyEntry, attempt_budget: 1000001 },
      { ...historyEntry, from_sequence: '01' },
      { action: 'pause', reason: 'r', revision: '2', created_at: historyEntry.created_at },
    ],
  },
  Reason: {
    valid: ['receiver maintenance', 'x', '😀'.repeat(1024), 'x'.repeat(1024)],
    invalid: ['', 'x'.repeat(1025), '😀'.repeat(1025), 7, null],
  },
  ConfigureSubscriptionRequest: {
    valid: [example('http.configure-subscription.request'), { expected_revision: '7', enabled: true, reason: 'resume' }],
    invalid: [
      { expected_revision: '1', enabled: false },
      { expected_revision: '1', reason: 'x' },
      { enabled: false, reason: 'x' },
      { expected_revision: 1, enabled: false, reason: 'x' },
      { expected_revision: '1', enabled: 'false', reason: 'x' },
      { expected_revision: '1', enabled: false, reason: '' },
      { expected_revision: '1', enabled: false, reason: 'x', name: 'other' },
    ],
  },
  RetireSubscriptionRequest: {
    valid: [{ expected_revision: '2', reason: 'queue decommissioned' }],
    invalid: [{ expected_revision: '2' }, { reason: 'x' }, { expected_revision: '2', reason: 'x', enabled: false }],
  },
  RetryDeliveryRequest: {
    valid: [example('http.retry-delivery.request'), { expected_revision: '3', reason: 'x', additional_attempts: 100 }],
    invalid: [
      { expected_revision: '3', reason: 'x', additional_attempts: 0 },
      { expected_revision: '3', reason: 'x', additional_attempts: 101 },
      { expected_revision: '3', reason: 'x' },
      { expected_revision: '3', additional_attempts: 2 },
    ],
  },
  DeliveryList: {
    valid: [{ items: [] }, { items: [delivery, expiredDelivery], next_cursor: 'c2' }],
    invalid: [{ items: [withAt(delivery, ['lease_until'], undefined)] }, { items: [delivery], cursor: 'c' }],
  },
  DeliveryDetail: {
    valid: [{ delivery, event }],
    invalid: [{ delivery }, { delivery, event, lease_secret: SECRET }],
  },
  DeliveryRetryResult: {
    valid: [{ delivery: withAt(expiredDelivery, ['state'], 'PENDING'), deduplicated: false }],
    invalid: [{ delivery }, { delivery: { ...delivery, token_digest: 'x' }, deduplicated: false }],
  },
  PublishResultRequest: {
    valid: [
      { type: 'task.succeeded', task_id: ID, task_revision: '3' },
      {
        type: 'task.requeued',
        task_id: ID,
        task_revision: '4',
        details: { reason: 'SAFE_RETRY' },
        result: [1, { a: null }],
        effect_uncertain: true,
        current_attempt_id: ID,
      },
      { type: 'task.failed', task_id: ID, task_revision: '1', result: null },
    ],
    invalid: [
      { type: 'task.started', task_id: ID, task_revision: '3' },
      { type: 'task.succeeded', task_id: ID },
      { type: 'task.succeeded', task_id: ID, task_revision: '03' },
      { type: 'task.succeeded', task_id: ID, task_revision: '3', details: 'x' },
      { type: 'task.succeeded', task_id: ID, task_revision: '3', sequence: '9' },
    ],
  },
  PublishResultMembers: {
    // Open on purpose (see PublishResultRequest and PublishResultsItem, which close it).
    valid: [{ type: 'task.succeeded', task_id: ID, task_revision: '3', idempotency_key: 'k' }],
    invalid: [{ type: 'task.succeeded', task_id: ID }],
  },
  PublishResultsItem: {
    valid: [
      { idempotency_key: 'k', type: 'task.succeeded', task_id: ID, task_revision: '3' },
      { idempotency_key: '~'.repeat(255), type: 'task.failed', task_id: ID, task_revision: '1', result: null, details: {} },
    ],
    invalid: [
      { type: 'task.succeeded', task_id: ID, task_revision: '3' },
      { idempotency_key: '', type: 'task.succeeded', task_id: ID, task_revision: '3' },
      { idempotency_key: 'has space', type: 'task.succeeded', task_id: ID, task_revision: '3' },
      { idempotency_key: 'x'.repeat(256), type: 'task.succeeded', task_id: ID, task_revision: '3' },
      { idempotency_key: 'k', type: 'task.succeeded', task_id: ID, task_revision: '3', sequence: '9' },
    ],
  },
  PublishResultsRequest: {
    valid: [
      { items: [{ idempotency_key: 'k', type: 'task.succeeded', task_id: ID, task_revision: '3' }] },
      {
        items: Array.from({ length: 100 }, (_, i) => ({
          idempotency_key: `k${i}`,
          type: 'task.succeeded',
          task_id: ID,
          task_revision: '1',
        })),
      },
    ],
    invalid: [
      { items: [] },
      {
        items: Array.from({ length: 101 }, (_, i) => ({
          idempotency_key: `k${i}`,
          type: 'task.succeeded',
          task_id: ID,
          task_revision: '1',
        })),
      },
      { items: [{ type: 'task.succeeded', task_id: ID, task_revision: '3' }] },
      {},
      { items: [{ idempotency_key: 'k', type: 'task.succeeded', task_id: ID, task_revision: '3' }], atomic: true },
    ],
  },
  PublishResultsError: {
    valid: [{ error: { code: 'IDEMPOTENCY_CONFLICT', message: 'the key was used with other content' } }],
    invalid: [{ error: { code: 'OOPS', message: 'x' } }, { error: { code: 'NOT_FOUND', message: 'x' }, event }],
  },
  PublishResultsResponse: {
    valid: [{ results: [] }, { results: [{ event, deduplicated: true }, { error: { code: 'IDEMPOTENCY_CONFLICT', message: 'x' } }] }],
    invalid: [{ results: [{ event }] }, { results: [{ event, deduplicated: false, error: { code: 'NOT_FOUND', message: 'x' } }] }, {}],
  },
  PublishResultsEnvelope: {
    valid: [{ request_id: ID, data: { results: [{ event, deduplicated: false }] } }],
    invalid: [{ request_id: ID, data: { results: [{ deduplicated: false }] } }, { data: { results: [] } }],
  },
  PublishResultResponse: {
    valid: [{ event, deduplicated: false }],
    invalid: [{ event }, { event: withAt(event, ['snapshot'], undefined), deduplicated: false }],
  },
  Health: {
    valid: [{ status: 'ok' }],
    invalid: [{ status: 'degraded' }, {}, { status: 'ok', uptime: 1 }],
  },
  Readiness: {
    valid: [{ status: 'ready' }],
    invalid: [{ status: 'ok' }, {}, { status: 'ready', database: 'up' }],
  },
  ErrorEnvelope: {
    valid: [{ request_id: ID, error: { code: 'NOT_FOUND', message: 'no such subscription' } }],
    invalid: [
      { request_id: ID, error: { code: 'NOT_FOUND' } },
      { request_id: ID, error: { code: 'GONE', message: 'x' } },
      { request_id: ID, error: { code: 'NOT_FOUND', message: 'x' }, data: {} },
      { error: { code: 'NOT_FOUND', message: 'x' } },
    ],
  },
  SubscriptionEnvelope: {
    valid: [envelope(subscription)],
    invalid: [envelope({ subscription, deduplicated: false }), { data: subscription }],
  },
  SubscriptionResultEnvelope: {
    valid: [example('http.create-subscription.response')],
    invalid: [envelope(subscription), withAt(example('http.create-subscription.response'), ['request_id'], 'req-1')],
  },
  SubscriptionListEnvelope: {
    valid: [envelope({ items: [subscription] })],
    invalid: [envelope([subscription]), { ...envelope({ items: [] }), error: { code: 'UNAVAILABLE', message: 'x' } }],
  },
  SubscriptionSessionListEnvelope: {
    valid: [envelope({ items: [session] })],
    invalid: [envelope([session]), envelope({ items: [historyEntry] })],
  },
  QueueListEnvelope: {
    valid: [envelope({ items: [queue] })],
    invalid: [envelope([queue]), envelope({ items: [credential] })],
  },
  CredentialEnvelope: {
    valid: [envelope(credential)],
    invalid: [credential, envelope({ ...credential, token_digest: 'x' })],
  },
  SettingsEnvelope: {
    valid: [envelope({ items: settingItems })],
    invalid: [envelope(settingItems), { items: settingItems }],
  },
  SubscriptionHistoryEnvelope: {
    valid: [envelope({ items: [historyEntry] })],
    invalid: [envelope([historyEntry]), envelope({ items: [delivery] })],
  },
  DeliveryListEnvelope: {
    valid: [envelope({ items: [delivery] })],
    invalid: [envelope({ items: [event] })],
  },
  DeliveryDetailEnvelope: {
    valid: [envelope({ delivery, event })],
    invalid: [envelope({ delivery: event, event: delivery })],
  },
  DeliveryRetryResultEnvelope: {
    valid: [envelope({ delivery: expiredDelivery, deduplicated: true })],
    invalid: [envelope({ delivery: expiredDelivery })],
  },
  PublishResultEnvelope: {
    valid: [envelope({ event, deduplicated: true })],
    invalid: [envelope({ event: delivery, deduplicated: true })],
  },
  HealthEnvelope: {
    valid: [envelope({ status: 'ok' })],
    invalid: [{ status: 'ok' }, envelope({ status: 'OK' })],
  },
  ReadinessEnvelope: {
    valid: [envelope({ status: 'ready' })],
    invalid: [{ status: 'ready' }, envelope({ status: 'ok' })],
  },
};

describe('every component schema of openapi.yaml', () => {
  it('has cases in this test', () => {
    expect(Object.keys(componentCases).sort()).toEqual(Object.keys(componentSchemas).sort());
  });
  for (const [name, { valid, invalid }] of Object.entries(componentCases)) {
    it(`${name}: ${valid.length} valid, ${invalid.length} invalid`, () => {
      expect(valid.length).toBeGreaterThan(0);
      expect(invalid.length).toBeGreaterThan(0);
      for (const value of valid) expectValid(name, value);
      for (const value of invalid) expectInvalid(name, value);
    });
  }
});

describe('openapi.yaml structure', () => {
  type Operation = JsonObject & { responses: Record<string, JsonObject> };
  const operations: [string, string, Operation][] = [];
  for (const [route, item] of Object.entries(openapi.paths as JsonObject)) {
    for (const [method, operation] of Object.entries(item as JsonObject)) {
      if (method !== 'parameters') operations.push([method, route, operation as Operation]);
    }
  }
  const deref = (node: JsonObject): JsonObject => {
    const ref = node.$ref;
    if (typeof ref !== 'string') return node;
    const [, kind, name] = /^#\/components\/(\w+)\/(.+)$/.exec(ref) ?? [];
    return ((openapi.components as JsonObject)[kind as string] as JsonObject)[name as string] as JsonObject;
  };

  it("has the routes of spec/rules.md#s1-9 to #s1-17 and Orbit's own", () => {
    expect(operations.map(([method, route]) => `${method.toUpperCase()} ${route}`).sort()).toEqual(
      [
        'POST /v1/subscriptions',
        'GET /v1/subscriptions',
        'GET /v1/subscriptions/{id}',
        'POST /v1/subscriptions/{id}:configure',
        'POST /v1/subscriptions/{id}:retire',
        'GET /v1/subscriptions/{id}/history',
        'GET /v1/subscriptions/{id}/sessions',
        'GET /v1/subscriptions/{id}/deliveries',
        'GET /v1/subscriptions/{id}/deliveries/{delivery_id}',
        'POST /v1/subscriptions/{id}/deliveries/{delivery_id}:retry',
        'GET /v1/queues',
        'GET /v1/credential',
        'GET /v1/settings',
        'GET /v1/events/connect',
        'POST /v1/queues/{queue_id}/results',
        'POST /v1/queues/{queue_id}/results:batch',
        'GET /healthz',
        'GET /readyz',
        'GET /metrics',
        'GET /v1/openapi.json',
      ].sort(),
    );
  });

  it('names the permission of every authenticated operation', () => {
    const permissions = Object.fromEntries(operations.map(([, , op]) => [op.operationId, op['x-orbit-permission']]));
    expect(permissions).toEqual({
      CreateSubscription: 'events:manage',
      ListSubscriptions: 'events:read',
      GetSubscription: 'events:read',
      ConfigureSubscription: 'events:manage',
      RetireSubscription: 'events:manage',
      ListSubscriptionHistory: 'events:read',
      ListSubscriptionSessions: 'events:read',
      ListEventDeliveries: 'events:read',
      GetEventDelivery: 'events:read',
      RetryEventDelivery: 'events:manage',
      ListQueues: 'events:read',
      GetCredential: 'events:read',
      GetSettings: 'events:read',
      ConnectEvents: 'events:consume',
      PublishResult: 'results:publish',
      PublishResults: 'results:publish',
      GetHealth: undefined,
      GetReadiness: undefined,
      GetMetrics: undefined,
      GetOpenApiDocument: undefined,
    });
    for (const [, route, op] of operations) {
      if (route === '/healthz' || route === '/readyz' || route === '/v1/openapi.json') expect(op.security).toEqual([]);
      else if (route === '/metrics') expect(op.security).toEqual([{}, { metricsToken: [] }]);
      else expect(op.security).toBeUndefined();
    }
    expect(openapi.security).toEqual([{ bearerAuth: [] }]);
  });

  it("lists in GetCredential's permissions exactly the permissions the operations need", () => {
    const credential = ((openapi.components as JsonObject).schemas as JsonObject).Credential as any;
    expect(credential.properties.permissions.items.enum).toEqual([...generated.PERMISSIONS]);
  });

  it('requires Idempotency-Key on every POST and allows query parameters only on the lists', () => {
    for (const [method, route, op] of operations) {
      const names = ((op.parameters ?? []) as JsonObject[]).map(deref).map((p) => `${p.in as string}:${p.name as string}`);
      // A batch publish carries a key per item instead (spec/README.md, Batch publish).
      if (op.operationId === 'PublishResults') expect(names, route).not.toContain('header:Idempotency-Key');
      else if (method === 'post') expect(names, route).toContain('header:Idempotency-Key');
      const query = names.filter((name) => name.startsWith('query:'));
      if (op.operationId === 'ListSubscriptions') expect(query).toEqual(['query:queue_id', 'query:limit', 'query:cursor']);
      else if (op.operationId === 'ListEventDeliveries') expect(query).toEqual(['query:limit', 'query:cursor', 'query:state']);
      else if (['ListSubscriptionHistory', 'ListSubscriptionSessions', 'ListQueues'].includes(op.operationId as string))
        expect(query).toEqual(['query:limit', 'query:cursor']);
      else expect(query, route).toEqual([]);
    }
    const key = (openapi.components as JsonObject).parameters as JsonObject;
    const pattern = new RegExp(((key.IdempotencyKey as JsonObject).schema as JsonObject).pattern as string, 'u');
    expect(pattern.test('a')).toBe(true);
    expect(pattern.test('~'.repeat(255))).toBe(true);
    expect(pattern.test('x'.repeat(256))).toBe(false);
    expect(pattern.test('')).toBe(false);
    expect(pattern.test('has space')).toBe(false);
    expect(pattern.test('é')).toBe(false);
    const item = (componentSchemas.PublishResultsItem as { properties: { idempotency_key: JsonObject } }).properties.idempotency_key;
    expect(item.pattern, 'a batch item key follows the header').toBe(((key.IdempotencyKey as JsonObject).schema as JsonObject).pattern);
    const items = (componentSchemas.PublishResultsRequest as { properties: { items: JsonObject } }).properties.items;
    expect(items.maxItems).toBe(MAX_BATCH_ITEMS);
  });

  it('sends X-Request-ID and Cache-Control on every response, Retry-After on 429 and 503, envelopes as bodies', () => {
    const expectedCodes: Record<string, string[]> = {
      '400': ['INVALID_ARGUMENT'],
      '401': ['UNAUTHENTICATED'],
      '403': ['PERMISSION_DENIED'],
      '404': ['NOT_FOUND'],
      '410': ['EVENT_HISTORY_EXPIRED'],
      '426': ['PROTOCOL_REQUIRED'],
      '429': ['CAPACITY_EXCEEDED'],
      '503': ['UNAVAILABLE'],
    };
    for (const [, route, op] of operations) {
      for (const [status, raw] of Object.entries(op.responses)) {
        const response = deref(raw);
        const headers = Object.keys((response.headers ?? {}) as JsonObject);
        expect(headers, `${route} ${status}`).toEqual(expect.arrayContaining(['X-Request-ID', 'Cache-Control']));
        if (status === '429' || status === '503') expect(headers, `${route} ${status}`).toContain('Retry-After');
        if (status === '101') {
          expect(response.content).toBeUndefined();
          continue;
        }
        if (op.operationId === 'GetMetrics' && status === '200') {
          // The one success body that is not an envelope: the Prometheus text format.
          expect(Object.keys(response.content as JsonObject)).toEqual(['text/plain']);
          continue;
        }
        if (op.operationId === 'GetOpenApiDocument' && status === '200') {
          // The document itself, not an envelope.
          expect(((response.content as JsonObject)['application/json'] as JsonObject).schema).toEqual({ type: 'object' });
          continue;
        }
        const schemaRef = ((((response.content as JsonObject)['application/json'] as JsonObject).schema as JsonObject).$ref ??
          '') as string;
        expect(schemaRef, `${route} ${status}`).toMatch(/^#\/components\/schemas\/\w+Envelope$/);
        if (status.startsWith('2')) expect(schemaRef).not.toMatch(/ErrorEnvelope$/);
        else expect(schemaRef).toMatch(/ErrorEnvelope$/);
        const codes = response['x-orbit-error-codes'] as string[] | undefined;
        if (status in expectedCodes) expect(codes, `${route} ${status}`).toEqual(expectedCodes[status]);
        if (status === '409') expect(codes).toEqual(expect.arrayContaining(['IDEMPOTENCY_CONFLICT']));
        if (!status.startsWith('2')) {
          for (const code of codes ?? []) expectValid('ErrorCode', code);
        }
      }
    }
  });

  it('references the shared types of events.schema.json instead of redefining them', () => {
    const defs = new Set(Object.keys(eventsSchema.$defs as JsonObject));
    for (const name of Object.keys(componentSchemas)) expect(defs.has(name), name).toBe(false);
    const text = readFileSync(specFile('openapi.yaml'), 'utf8');
    for (const shared of [
      'Id',
      'Uint64',
      'Timestamp',
      'EventDelivery',
      'ResultEvent',
      'ErrorObject',
      'ResultType',
      'EventType',
      'DeliveryState',
    ]) {
      expect(text).toContain(`./events.schema.json#/$defs/${shared}'`);
    }
    expect(text).not.toMatch(/\^\[0-9a-f\]\{32\}\$/);
  });
});

#!/usr/bin/env node
// The fixture's admin client, for the commands of a conformance configuration (plain JS: it starts
// in a few milliseconds, once per role and per prune):
//
//   node admin.mjs --base-url URL --admin-token-file PATH credentials --namespace N --permissions P1,P2
//   node admin.mjs ... prune --before-sequence N
//   node admin.mjs ... attempt-budget --subscription ID --delivery ID --attempts N --budget N
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    'base-url': { type: 'string' },
    'admin-token-file': { type: 'string' },
    namespace: { type: 'string' },
    permissions: { type: 'string' },
    'before-sequence': { type: 'string' },
    subscription: { type: 'string' },
    delivery: { type: 'string' },
    attempts: { type: 'string' },
    budget: { type: 'string' },
  },
});
const command = positionals[0];
const bodies = {
  credentials: { namespace: values.namespace, permissions: values.permissions, queues: ['queue-a', 'queue-b'] },
  prune: { before_sequence: values['before-sequence'] },
  'attempt-budget': {
    subscription_id: values.subscription,
    delivery_id: values.delivery,
    attempts: values.attempts,
    attempt_budget: values.budget,
  },
};
if (!(command in bodies) || !values['base-url'] || !values['admin-token-file']) {
  console.error('usage: admin.mjs --base-url URL --admin-token-file PATH credentials|prune|attempt-budget [options]');
  process.exit(2);
}
const res = await fetch(`${values['base-url']}/_fixture/${command}`, {
  method: 'POST',
  headers: { 'x-fixture-admin': readFileSync(values['admin-token-file'], 'utf8').trim(), 'content-type': 'application/json' },
  body: JSON.stringify(bodies[command]),
});
const text = await res.text();
if (!res.ok) {
  console.error(`fixture admin ${command}: HTTP ${res.status} ${text}`);
  process.exit(1);
}
// The suite reads the last line: for credentials, {token, credential_id, queue_ids}.
console.log(JSON.stringify(JSON.parse(text).data));

/**
 * Example: manage a result subscription safely (spec/rules.md#s2-13, #s3-12, #s8-3).
 *
 *   ORBIT_TOKEN=... ORBIT_QUEUE_ID=... npx tsx client/examples/manage-subscriptions.ts
 *
 * Steps: create a subscription, read it, pause it, read it, resume it, read it. Before each write
 * the example stores the Idempotency-Key AND the exact request body in a local JSON state file, so
 * running it again (after a crash, a timeout, a lost answer) resends the very same requests: the
 * server answers them with `deduplicated: true` instead of doing them twice. A pause planned with
 * revision 1 is replayed with revision 1, never with a newer one (spec/rules.md#s3-12).
 *
 * Environment:
 *   ORBIT_URL               server (default http://127.0.0.1:8080, what `npm start` serves)
 *   ORBIT_TOKEN             bearer token with events:manage and events:read (required)
 *   ORBIT_QUEUE_ID          queue of the subscription, 32 hex characters (required)
 *   ORBIT_SUBSCRIPTION_NAME name of the subscription (default object-results)
 *   ORBIT_STATE_FILE        where keys and requests are kept (default ./manage-subscriptions.state.json)
 *
 * Exit code: 0 when every step is done, 1 when a step failed (the reason is explained), 2 for a
 * usage error.
 */
import { closeSync, existsSync, fsyncSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import { createClient, newIdempotencyKey, OrbitError, OrbitTransportError, type ErrorCode, type Subscription } from '@orbit/client';

interface StoredStep {
  /** The Idempotency-Key and body, stored before the first attempt and reused on every later run. */
  readonly key: string;
  readonly body: Record<string, unknown>;
  /** Filled in once the server answered. */
  done?: { at: string; deduplicated: boolean; revision: string };
}

interface State {
  baseUrl: string;
  queueId: string;
  name: string;
  subscriptionId?: string;
  steps: Record<string, StoredStep>;
}

const baseUrl = process.env.ORBIT_URL ?? 'http://127.0.0.1:8080';
const token = process.env.ORBIT_TOKEN ?? '';
const queueId = process.env.ORBIT_QUEUE_ID ?? '';
const subscriptionName = process.env.ORBIT_SUBSCRIPTION_NAME ?? 'object-results';
const stateFile = process.env.ORBIT_STATE_FILE ?? './manage-subscriptions.state.json';

if (!token || !/^[0-9a-f]{32}$/.test(queueId)) {
  console.error(
    'usage: ORBIT_TOKEN=<token> ORBIT_QUEUE_ID=<32 hex> [ORBIT_URL=...] [ORBIT_SUBSCRIPTION_NAME=...] [ORBIT_STATE_FILE=...] npx tsx client/examples/manage-subscriptions.ts',
  );
  console.error('`npm start` prints a demo token and queue id on a new database.');
  process.exit(2);
}

function loadState(): State {
  if (!existsSync(stateFile)) return { baseUrl, queueId, name: subscriptionName, steps: {} };
  const state = JSON.parse(readFileSync(stateFile, 'utf8')) as State;
  if (state.queueId !== queueId || state.name !== subscriptionName || state.baseUrl !== baseUrl) {
    console.error(
      `${stateFile} belongs to another run (${state.baseUrl}, queue ${state.queueId}, name ${state.name}); use another ORBIT_STATE_FILE or delete it.`,
    );
    process.exit(2);
  }
  return state;
}

/** Writes the state durably (temp file, fsync, rename) before the request it describes is sent. */
function saveState(state: State): void {
  const temp = `${stateFile}.tmp`;
  const fd = openSync(temp, 'w');
  try {
    writeSync(fd, `${JSON.stringify(state, null, 2)}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temp, stateFile);
}

const EXPLANATIONS: Record<ErrorCode, string> = {
  UNAUTHENTICATED:
    'the token is unknown or revoked. Use the token `npm start` printed, or create one: npx orbit bootstrap --namespace demo --application demo-app --queue demo-queue --event-access --json',
  PERMISSION_DENIED:
    'the credential lacks events:manage / events:read or the queue. Bootstrap a credential with --event-access for this queue.',
  NOT_FOUND: 'the queue or subscription is not visible to this credential (subscriptions belong to the credential that created them).',
  STATE_CONFLICT:
    'create: the name is already taken in this namespace (choose ORBIT_SUBSCRIPTION_NAME); configure: the subscription changed since this step was planned (someone else configured it) or it is retired. Remove that step from the state file to plan it again with the current revision.',
  IDEMPOTENCY_CONFLICT:
    'the stored key was already used with a different body: the state file was edited or reused. Never change a stored body; delete the step to plan a new operation.',
  SUBSCRIPTION_LIMIT: 'the namespace already has 64 subscriptions that are not retired; retire one first.',
  INVALID_ARGUMENT:
    'the server refused the request as malformed; check ORBIT_QUEUE_ID and ORBIT_SUBSCRIPTION_NAME (1-128 letters, digits, ".", "_", "-").',
  EVENT_HISTORY_EXPIRED: 'from_sequence is older than the retention boundary.',
  DELIVERY_LEASE_LOST: 'not expected from the management API.',
  PROTOCOL_REQUIRED: 'not expected from the management API.',
  CAPACITY_EXCEEDED: 'the server is busy; run the example again (the same keys are reused).',
  UNAVAILABLE:
    'the server is not reachable or temporarily failing (the client already retried). Run the example again: it resends the same keys and bodies, so nothing happens twice.',
};

function explain(step: string, error: unknown): never {
  if (error instanceof OrbitError) {
    const where = error instanceof OrbitTransportError ? `transport failure (${error.failure})` : `HTTP ${error.status ?? '-'}`;
    console.error(
      `\nstep "${step}" failed: ${error.code} (${where}${error.requestId ? `, request_id ${error.requestId}` : ''}): ${error.message}`,
    );
    console.error(`why: ${EXPLANATIONS[error.code]}`);
  } else {
    console.error(`\nstep "${step}" failed unexpectedly:`, error);
  }
  console.error(`state kept in ${stateFile}; completed steps are replayed (deduplicated) on the next run.`);
  process.exit(1);
}

const client = createClient({ baseUrl, token });
const state = loadState();

function describe(s: Subscription): string {
  return `id=${s.id} revision=${s.revision} enabled=${s.enabled} cursor_sequence=${s.cursor_sequence} pending_count=${s.pending_count}${s.retired_at ? ` retired_at=${s.retired_at}` : ''}`;
}

/**
 * Runs one write: plans it once (key + body stored before sending), then sends it, on this and
 * every later run, with the stored key and body.
 */
async function write(
  step: string,
  plan: () => Promise<Record<string, unknown>>,
  send: (key: string, body: any) => Promise<{ subscription: Subscription; deduplicated: boolean }>,
): Promise<Subscription> {
  let stored = state.steps[step];
  if (!stored) {
    stored = { key: newIdempotencyKey(step), body: await plan() };
    state.steps[step] = stored;
    saveState(state); // durable BEFORE the request is sent
    console.log(`[${step}] planned with Idempotency-Key ${stored.key}`);
  } else {
    console.log(`[${step}] replaying the stored request (key ${stored.key})`);
  }
  try {
    const result = await send(stored.key, stored.body);
    stored.done = { at: new Date().toISOString(), deduplicated: result.deduplicated, revision: result.subscription.revision };
    saveState(state);
    console.log(
      `[${step}] ${result.deduplicated ? 'already done earlier (deduplicated receipt)' : 'done'}: ${describe(result.subscription)}`,
    );
    return result.subscription;
  } catch (error) {
    explain(step, error);
  }
}

async function read(step: string, id: string): Promise<Subscription> {
  try {
    const current = await client.getSubscription(id);
    console.log(`[${step}] current: ${describe(current)}`);
    return current;
  } catch (error) {
    explain(step, error);
  }
}

console.log(`Orbit at ${baseUrl}, queue ${queueId}, subscription "${subscriptionName}", state file ${stateFile}`);

const created = await write(
  'create',
  async () => ({ name: subscriptionName, queue_id: queueId, max_pending: 100, max_attempts: 20 }),
  (key, body) => client.createSubscription(key, body),
);
if (state.subscriptionId !== created.id) {
  state.subscriptionId = created.id;
  saveState(state);
}
const id = created.id;
await read('get', id);

// The pause is planned with the revision read now, and replayed with that same revision later.
await write(
  'pause',
  async () => ({ expected_revision: (await client.getSubscription(id)).revision, enabled: false, reason: 'receiver maintenance' }),
  (key, body) => client.configureSubscription(id, key, body),
);
await read('get after pause', id);

// Resuming is a new operation: a new key and the revision read when it is planned.
await write(
  'resume',
  async () => ({ expected_revision: (await client.getSubscription(id)).revision, enabled: true, reason: 'maintenance finished' }),
  (key, body) => client.configureSubscription(id, key, body),
);
const final = await read('get after resume', id);

console.log(`\nall steps done. Subscription ${final.id} is ${final.enabled ? 'enabled' : 'paused'} at revision ${final.revision}.`);
console.log(`Run again to see every step answered as deduplicated; delete ${stateFile} to plan new operations.`);
console.log(`Consume it: ORBIT_TOKEN=... ORBIT_SUBSCRIPTION_ID=${final.id} npx tsx client/examples/consume-results.ts`);

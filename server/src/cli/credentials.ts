/**
 * @module
 * `orbit credentials list | revoke | rotate`: the credential lifecycle for operators, directly on
 * the database (no API credential involved). Output never contains a digest; a token only once,
 * from `rotate`. A bad flag or an unknown id exits with 2 before anything is written.
 */
import type { CredentialInfo } from '../store/principal.ts';
import { iso } from '../wire/json.ts';
import type { Store } from '../store/store.ts';
import { DATABASE_OPTIONS, openStore } from './options.ts';
import { type Form, parseForm, UsageError } from './usage.ts';
import { PATTERNS } from '@orbit/generated';

/** Where the command's database is: `--database`, `--create-database`, `--config`, or the environment. */
interface DatabaseOptions {
  readonly database?: string;
  readonly config?: string;
  readonly createDatabase?: true;
}

/** The longest grace period a rotation may give the old token: 30 days. */
const MAX_GRACE_SECONDS = 30 * 24 * 3600;

const COMMON = {
  json: { type: 'boolean', help: 'Print JSON instead of text.' },
  ...DATABASE_OPTIONS,
} as const;

const LIST = {
  name: 'credentials list',
  summary: 'list the credentials, oldest first: ids, scope and state, never a token or a digest',
  options: { namespace: { type: 'string', value: 'NAME', help: 'Only the credentials of this namespace.' }, ...COMMON },
} as const satisfies Form;

const REVOKE = {
  name: 'credentials revoke',
  summary: 'revoke a credential: HTTP answers 401 for its token from now on (within 1 s on every node)',
  positionals: 'CREDENTIAL_ID',
  options: COMMON,
} as const satisfies Form;

const ROTATE = {
  name: 'credentials rotate',
  summary: 'give a credential a new token (printed once); its id, permissions, queues and subscriptions stay',
  positionals: 'CREDENTIAL_ID',
  options: {
    'grace-seconds': {
      type: 'string',
      value: 'N',
      help: `How long the old token keeps working: 0 to ${MAX_GRACE_SECONDS} seconds. Default 0 (it stops at once).`,
    },
    ...COMMON,
  },
} as const satisfies Form;

/** The three forms of `orbit credentials`, for the parser and the help alike. */
export const CREDENTIALS_FORMS: readonly Form[] = [LIST, REVOKE, ROTATE];

function credentialId(positionals: string[], command: string): string {
  if (positionals.length !== 1) throw new UsageError(`orbit credentials ${command} takes exactly one CREDENTIAL_ID`);
  const id = positionals[0]!;
  if (!PATTERNS.id.test(id)) throw new UsageError(`CREDENTIAL_ID must be 32 lower-case hex characters, got "${id}"`);
  return id;
}

/** Runs `body` on the opened store and closes it; opening applies pending migrations. */
async function withStore<T>(where: DatabaseOptions, body: (store: Store) => Promise<T>): Promise<T> {
  const store = await openStore({ database: where.database, config: where.config, 'create-database': where.createDatabase });
  try {
    return await body(store);
  } finally {
    await store.close();
  }
}

const unknown = (id: string) => new UsageError(`no credential ${id} in this database`, { showUsage: false });

/** What `--json` prints for a credential: ids and names, times in UTC RFC 3339. */
function credentialJson(c: CredentialInfo) {
  return {
    credential_id: c.credentialId,
    namespace: c.namespace,
    namespace_id: c.namespaceId,
    application: c.application,
    application_id: c.applicationId,
    permissions: c.permissions,
    queue_ids: c.queueIds,
    created_at: iso(c.createdAt),
    revoked_at: c.revokedAt === null ? null : iso(c.revokedAt),
    previous_token_expires_at: c.previousTokenExpiresAt === null ? null : iso(c.previousTokenExpiresAt),
  };
}

function table(records: readonly CredentialInfo[]): string {
  const credentials = records.map(credentialJson);
  const header = ['ID', 'NAMESPACE', 'APPLICATION', 'PERMISSIONS', 'QUEUES', 'CREATED', 'REVOKED'];
  const rows = credentials.map((c) => [
    c.credential_id,
    c.namespace,
    c.application,
    c.permissions.join(',') || '-',
    Object.keys(c.queue_ids).join(',') || '-',
    c.created_at,
    c.revoked_at ?? (c.previous_token_expires_at ? `- (previous token until ${c.previous_token_expires_at})` : '-'),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  return [header, ...rows].map((r) => r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  ')).join('\n');
}

export type CredentialsRequest =
  | { readonly command: 'list'; readonly namespace?: string; readonly json: boolean; readonly where: DatabaseOptions }
  | { readonly command: 'revoke'; readonly id: string; readonly json: boolean; readonly where: DatabaseOptions }
  | { readonly command: 'rotate'; readonly id: string; readonly graceMs: number; readonly json: boolean; readonly where: DatabaseOptions };

const where = (values: {
  database?: string | undefined;
  config?: string | undefined;
  'create-database'?: boolean | undefined;
}): DatabaseOptions => ({
  ...(values.database !== undefined ? { database: values.database } : {}),
  ...(values.config !== undefined ? { config: values.config } : {}),
  ...(values['create-database'] ? { createDatabase: true as const } : {}),
});

/** Checks the command line without touching the database: a UsageError (or parseArgs' error) for anything wrong. */
export function parseCredentialsArgs(args: readonly string[]): CredentialsRequest {
  const [command, ...rest] = args;
  if (command === 'list') {
    const { values } = parseForm(LIST, rest);
    if (values.namespace === '') throw new UsageError('--namespace needs a NAME');
    return {
      command,
      json: values.json === true,
      where: where(values),
      ...(values.namespace !== undefined ? { namespace: values.namespace } : {}),
    };
  }
  if (command === 'revoke') {
    const { values, positionals } = parseForm(REVOKE, rest);
    return { command, id: credentialId(positionals, command), json: values.json === true, where: where(values) };
  }
  if (command === 'rotate') {
    const { values, positionals } = parseForm(ROTATE, rest);
    const id = credentialId(positionals, command);
    const grace = values['grace-seconds'] ?? '0';
    if (!/^(0|[1-9][0-9]{0,9})$/.test(grace) || Number(grace) > MAX_GRACE_SECONDS)
      throw new UsageError(`--grace-seconds must be an integer from 0 to ${MAX_GRACE_SECONDS}, got "${grace}"`);
    return { command, id, graceMs: Number(grace) * 1000, json: values.json === true, where: where(values) };
  }
  throw new UsageError(command ? `unknown credentials command "${command}"` : 'orbit credentials needs a command: list, revoke or rotate');
}

async function list(request: Extract<CredentialsRequest, { command: 'list' }>): Promise<void> {
  const credentials = await withStore(request.where, (store) =>
    store.listCredentials(request.namespace === undefined ? {} : { namespace: request.namespace }),
  );
  if (credentials === null) throw new UsageError(`no namespace named "${request.namespace}" in this database`, { showUsage: false });
  console.log(
    request.json
      ? JSON.stringify({ credentials: credentials.map(credentialJson) })
      : credentials.length === 0
        ? '(no credentials)'
        : table(credentials),
  );
}

async function revoke({ id, json, where }: Extract<CredentialsRequest, { command: 'revoke' }>): Promise<void> {
  const outcome = await withStore(where, async (store) => {
    const [found] = (await store.listCredentials({ id })) ?? [];
    if (!found) throw unknown(id);
    if (found.revokedAt !== null) return { credential_id: id, revoked_at: iso(found.revokedAt), already_revoked: true };
    await store.revokeCredential(id);
    const [now] = (await store.listCredentials({ id }))!;
    return { credential_id: id, revoked_at: iso(now!.revokedAt!), already_revoked: false };
  });
  if (json) console.log(JSON.stringify(outcome));
  else
    console.log(
      outcome.already_revoked
        ? `credential ${id} was already revoked at ${outcome.revoked_at}`
        : `credential ${id} revoked at ${outcome.revoked_at}: its token is refused from now on`,
    );
}

async function rotate({ id, graceMs, json, where }: Extract<CredentialsRequest, { command: 'rotate' }>): Promise<void> {
  const outcome = await withStore(where, (store) => store.rotateCredential(id, graceMs));
  if (outcome.kind === 'unknown') throw unknown(id);
  if (outcome.kind === 'revoked')
    throw new UsageError(`credential ${id} was revoked at ${iso(outcome.revokedAt)}; a revoked credential cannot be rotated`, {
      showUsage: false,
    });
  const until = outcome.previousExpiresAt === null ? null : iso(outcome.previousExpiresAt);
  if (json) console.log(JSON.stringify({ credential_id: id, token: outcome.token, previous_token_expires_at: until }));
  else
    console.log(
      [
        `credential ${id}`,
        `token (shown once): ${outcome.token}`,
        until ? `the previous token works until ${until}` : 'the previous token no longer works',
      ].join('\n'),
    );
}

export function credentialsCommand(args: string[]): Promise<void> {
  const request = parseCredentialsArgs(args);
  if (request.command === 'list') return list(request);
  if (request.command === 'revoke') return revoke(request);
  return rotate(request);
}

/**
 * @module
 * Whether a connected session may still consume its subscription (spec/README.md "Authorization
 * while connected"): the credential exists and is not revoked, still holds `events:consume`, still
 * has the subscription's queue in scope, and the subscription still exists and is not retired.
 * A pure decision over what the store loaded; the engine acts on it (error frame, then close).
 */

/**
 * The staleness bound (spec/README.md "Authorization while connected"): authorization a claim or
 * an ACK acts on, and the principal an HTTP request or an upgrade is authenticated as, is at most
 * this old.
 */
export const ACCESS_MAX_STALENESS_MS = 1000;

export interface CredentialState {
  readonly revoked: boolean;
  readonly permissions: ReadonlySet<string>;
  /** Digest of the current token. */
  readonly tokenDigest: string;
  /** Digest of the token a rotation replaced, valid until `previousExpiresAt`. */
  readonly previousTokenDigest: string | null;
  readonly previousExpiresAt: number | null;
}

export interface AccessState {
  /** The subscription's owning credential; null when it does not exist. */
  readonly credential: CredentialState | null;
  /** The subscription; null when it does not exist. */
  readonly subscription: { readonly retired: boolean; readonly enabled: boolean } | null;
  /** Whether the subscription's queue is still in the credential's queue set. */
  readonly queueInScope: boolean;
}

export type AccessDenial = { readonly code: 'UNAUTHENTICATED' | 'PERMISSION_DENIED' | 'NOT_FOUND'; readonly message: string };

export type AccessVerdict = { readonly ok: true } | ({ readonly ok: false } & AccessDenial);

const ALLOWED: AccessVerdict = { ok: true };

/**
 * The session's side of the check: the digest of the token it connected with, and the time
 * (credential grace periods are set and compared with the node's clock).
 */
export interface SessionToken {
  readonly digest: string;
  readonly now: number;
}

/** Whether a token with this digest still authenticates the credential. */
export function tokenValid(credential: CredentialState, token: SessionToken): boolean {
  if (token.digest === credential.tokenDigest) return true;
  return (
    token.digest === credential.previousTokenDigest && credential.previousExpiresAt !== null && credential.previousExpiresAt > token.now
  );
}

/**
 * The first rule that fails, in the order the upgrade and the hello check them. With `token`, a
 * session that connected with a token a rotation replaced is refused once its grace period ends.
 */
export function decideConsumeAccess(state: AccessState, token?: SessionToken): AccessVerdict {
  if (state.subscription === null) return { ok: false, code: 'NOT_FOUND', message: 'the subscription does not exist' };
  if (state.credential === null || state.credential.revoked) {
    return { ok: false, code: 'UNAUTHENTICATED', message: 'the credential was revoked' };
  }
  if (token && !tokenValid(state.credential, token)) {
    return { ok: false, code: 'UNAUTHENTICATED', message: 'the token was replaced by a rotation and its grace period is over' };
  }
  if (!state.credential.permissions.has('events:consume')) {
    return { ok: false, code: 'PERMISSION_DENIED', message: 'the credential lost the events:consume permission' };
  }
  if (!state.queueInScope) return { ok: false, code: 'NOT_FOUND', message: 'the subscription is no longer in scope' };
  if (state.subscription.retired) return { ok: false, code: 'NOT_FOUND', message: 'the subscription was retired' };
  return ALLOWED;
}

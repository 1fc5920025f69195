/**
 * @module
 * Bearer authentication and permission checks, the same for an HTTP request and a WebSocket
 * upgrade (spec/rules.md#s1-1). The token travels only in the `Authorization` header; a request
 * never names its own namespace, application or credential. Each operation needs the permission
 * the contract gives it (`x-orbit-permission`, generated as `OPERATION_PERMISSIONS`).
 */
import { OPERATION_PERMISSIONS, type GuardedOperation, type Permission } from '@orbit/generated';
import { OrbitError } from '@orbit/spec/errors';
import type { Principal } from '../store/store.ts';

/** Who can turn a token into a principal: the store, or a cache in front of it. */
export interface Authenticator {
  authenticate(token: string): Promise<Principal | null>;
}

// RFC 7235: the scheme is case-insensitive and one or more spaces separate it from the token.
const BEARER = /^Bearer +([\x21-\x7e]{1,512})$/i;

export function bearerToken(header: string | null | undefined): string | null {
  if (!header) return null;
  const match = BEARER.exec(header);
  return match ? match[1]! : null;
}

export async function authenticate(authenticator: Authenticator, header: string | null | undefined): Promise<Principal> {
  const token = bearerToken(header);
  if (token === null) throw new OrbitError('UNAUTHENTICATED', 'an Authorization: Bearer token is required');
  const principal = await authenticator.authenticate(token);
  if (!principal) throw new OrbitError('UNAUTHENTICATED', 'the token is not valid');
  return principal;
}

export function requirePermission(principal: Principal, permission: Permission): void {
  if (!principal.permissions.has(permission))
    throw new OrbitError('PERMISSION_DENIED', `this credential lacks the ${permission} permission`);
}

/** Authenticates the `Authorization` header and checks the permission that `operation` needs. */
export async function authorize(
  authenticator: Authenticator,
  header: string | null | undefined,
  operation: GuardedOperation,
): Promise<Principal> {
  const principal = await authenticate(authenticator, header);
  requirePermission(principal, OPERATION_PERMISSIONS[operation]);
  return principal;
}

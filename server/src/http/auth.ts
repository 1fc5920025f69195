/**
 * @module
 * Bearer authentication and permission checks (seed §1). The token travels only in the
 * `Authorization` header; a request never names its own namespace, application or credential.
 */
import { OrbitError } from '@orbit/spec/errors';
import type { Principal, Store } from '../store/store.ts';

// RFC 7235: the scheme is case-insensitive and one or more spaces separate it from the token.
const BEARER = /^Bearer +([\x21-\x7e]{1,512})$/i;

export function bearerToken(header: string | null | undefined): string | null {
  if (!header) return null;
  const match = BEARER.exec(header);
  return match ? match[1]! : null;
}

export async function authenticate(store: Store, header: string | null | undefined): Promise<Principal> {
  const token = bearerToken(header);
  if (token === null) throw new OrbitError('UNAUTHENTICATED', 'an Authorization: Bearer token is required');
  const principal = await store.authenticate(token);
  if (!principal) throw new OrbitError('UNAUTHENTICATED', 'the token is not valid');
  return principal;
}

export function requirePermission(principal: Principal, permission: string): void {
  if (!principal.permissions.has(permission))
    throw new OrbitError('PERMISSION_DENIED', `this credential lacks the ${permission} permission`);
}

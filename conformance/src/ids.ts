/**
 * @module
 * Fresh identities in the contract's `Id` form, 16 random bytes as 32 lower-case hex characters:
 * message ids (spec/rules.md#s5-6), task ids, ids that name nothing on the server, and the random
 * part of names and Idempotency-Keys.
 */
import { randomBytes } from 'node:crypto';

export function randomId(): string {
  return randomBytes(16).toString('hex');
}

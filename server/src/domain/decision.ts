/**
 * @module
 * How a decision says no. Every decision of `domain/` returns either its next state or a `Refused`
 * value that names the contract's error code and a readable message; it never throws and never
 * reads a clock or a database. The store turns a refusal into an `OrbitError` with `orThrow`, so the
 * command's transaction rolls back and nothing it loaded changes.
 */
import { OrbitError, type ErrorCode } from '@orbit/spec/errors';

export interface Conflict {
  readonly code: ErrorCode;
  readonly message: string;
}

export interface Refused {
  readonly conflict: Conflict;
}

/** The next state `T`, or why the command is refused. */
export type Decision<T> = T | Refused;

export function refuse(code: ErrorCode, message: string): Refused {
  return { conflict: { code, message } };
}

/** Works for every `T`, including the bigints and nulls some decisions return. */
export function isRefused<T>(decision: Decision<T>): decision is Refused {
  return typeof decision === 'object' && decision !== null && 'conflict' in decision;
}

/** The accepted state, or the refusal thrown as the one error type of the contract. */
export function orThrow<T>(decision: Decision<T>): T {
  if (isRefused(decision)) throw new OrbitError(decision.conflict.code, decision.conflict.message);
  return decision;
}

/**
 * Optimistic concurrency: a command names the revision it was made against and is refused as
 * STATE_CONFLICT unless that is the current one (spec/rules.md#s3-9, spec/rules.md#s4-22).
 * `expected` is a canonical uint64 string, already checked by the schema.
 */
export function checkRevision(what: string, current: bigint, expected: string): Refused | null {
  return current === BigInt(expected) ? null : refuse('STATE_CONFLICT', `${what} revision is ${current}, not ${expected}`);
}

/**
 * @module
 * Argument checks shared by the Inbox implementations: everything that reaches SQL is a checked
 * identifier or a bound parameter.
 */
import { isCanonicalBase64url, isCanonicalUint64, LEASE_SECRET_BYTES } from '@orbit/spec/codec';
import { invalidArgument } from '../errors.ts';
import { isId } from '../wire.ts';
import type { PendingAck } from './types.ts';

export const DEFAULT_SCOPE = 'default';
export const DEFAULT_TABLE_PREFIX = 'orbit_';

const SCOPE = /^[\x21-\x7e]{1,128}$/;
const PREFIX = /^[A-Za-z_][A-Za-z0-9_]{0,40}$/;

export interface TableNames {
  readonly inbox: string;
  readonly pendingAcks: string;
}

export function tableNames(prefix: string | undefined): TableNames {
  const p = prefix ?? DEFAULT_TABLE_PREFIX;
  if (!PREFIX.test(p))
    throw invalidArgument('tablePrefix must be a letter or underscore followed by up to 40 letters, digits or underscores');
  return { inbox: `${p}inbox`, pendingAcks: `${p}pending_acks` };
}

export function checkScope(scope: string | undefined): string {
  const s = scope ?? DEFAULT_SCOPE;
  if (!SCOPE.test(s)) throw invalidArgument('scope must be 1–128 visible ASCII characters');
  return s;
}

export function checkEventId(eventId: string): string {
  if (!isId(eventId)) throw invalidArgument('eventId must be 32 lower-case hexadecimal characters');
  return eventId;
}

export function checkPendingAck(ack: PendingAck): PendingAck {
  if (!isId(ack?.delivery_id) || !isId(ack.subscription_id) || !isId(ack.event_id))
    throw invalidArgument('a pending ACK needs delivery_id, subscription_id and event_id ids');
  if (!isCanonicalUint64(ack.epoch)) throw invalidArgument('a pending ACK needs a canonical uint64 epoch');
  if (!isCanonicalBase64url(ack.lease_secret, LEASE_SECRET_BYTES))
    throw invalidArgument('a pending ACK needs a canonical 43-character lease_secret');
  return ack;
}

export function checkEpoch(deliveryId: string, epoch: string): void {
  if (!isId(deliveryId)) throw invalidArgument('deliveryId must be 32 lower-case hexadecimal characters');
  if (!isCanonicalUint64(epoch)) throw invalidArgument('epoch must be a canonical uint64 string');
}

/** A row of the pending-ACK table as a `PendingAck` (numbers and buffers normalized to strings). */
export function rowToPendingAck(row: Record<string, unknown>): PendingAck {
  return {
    subscription_id: String(row.subscription_id),
    delivery_id: String(row.delivery_id),
    event_id: String(row.event_id),
    epoch: String(row.epoch),
    lease_secret: String(row.lease_secret),
  };
}

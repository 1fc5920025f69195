/**
 * @module
 * The fixture's switches: each plants one deliberate fault, so that a test can show which case of
 * the suite catches it and with what message. A fixture started without switches is a clean
 * implementation (with the gaps its known-failing file lists).
 */

export const FAULTS = {
  'retire-ignores-pending': 'retire succeeds while a PENDING delivery exists',
  'retire-ignores-expired': 'retire succeeds while an EXPIRED delivery exists',
  'cache-control': 'responses carry Cache-Control: no-cache instead of no-store',
  'crash-on-oversize': 'the process exits when a frame larger than 512 KiB arrives (a crash mid-run)',
  'missing-reply-to': 'replies (welcome, ack, error) carry no reply_to',
  'retry-ignores-budget-cap': 'a retry may take the cumulative attempt budget past 1000000',
  'no-write-timeout': 'a connection whose client stopped reading is kept open for good',
  'late-ack-refused': 'an ACK after the lease ran out is refused with DELIVERY_LEASE_LOST',
  'types-ignored': 'subscriptions receive results of every type, whatever their filter',
  'duplicate-keys-accepted': 'HTTP bodies are read with JSON.parse: the last of two duplicate keys wins',
  'no-hello-timeout': 'a connection that never sends hello stays open',
  'capacity-ignored': 'a connection may hold 32 deliveries whatever capacity its hello asked for',
  'stale-revision-accepted': 'configure, retire and retry ignore expected_revision',
  'wrong-lease-duration': 'the welcome announces a lease of 30000 ms although leases last what the fixture was started with',
  'lenient-lease-secret':
    'ACK secrets are decoded leniently (padding, standard alphabet, unused bits), so aliases of the proof acknowledge',
  'reused-message-id': 'replies reuse the message_id of the request',
} as const;

export type Fault = keyof typeof FAULTS;
export type Faults = ReadonlySet<Fault>;

export function parseFaults(names: readonly string[]): Set<Fault> {
  for (const name of names)
    if (!Object.hasOwn(FAULTS, name)) throw new Error(`unknown fault ${name} (known: ${Object.keys(FAULTS).join(', ')})`);
  return new Set(names as Fault[]);
}

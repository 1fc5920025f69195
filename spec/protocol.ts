/**
 * @module
 * The constants of `orbit.events.v1` and of the management API that the schemas cannot carry:
 * written here once, for the server, the SDK and the conformance suite. Patterns and field tables
 * that the schemas do carry are derived from them into `@orbit/generated` (`fields.ts`).
 */

/** The WebSocket subprotocol (spec/rules.md#s5-1). */
export const SUBPROTOCOL = 'orbit.events.v1';

/** The fixed `protocol_version` of every frame (spec/rules.md#s5-6). */
export const PROTOCOL_VERSION = '1';

/** The WebSocket entry point, below the server's base path (spec/rules.md#s5-1). */
export const CONNECT_PATH = '/v1/events/connect';

/** The largest frame, in bytes of its text (spec/rules.md#s5-5). */
export const MAX_FRAME_BYTES = 512 * 1024;

/** The largest management request body, in bytes (spec/rules.md#s1-19). */
export const MAX_BODY_BYTES = 512 * 1024;

/**
 * `result` and `details` of one published result together, in bytes: an `event.deliver` frame must
 * stay within `MAX_FRAME_BYTES`, and 8 KiB are left for the delivery, the snapshot's other fields
 * and the frame envelope (spec/rules.md#s5-5).
 */
export const MAX_EVENT_PAYLOAD_BYTES = MAX_FRAME_BYTES - 8 * 1024;

/**
 * Items in one batch publish (`PublishResults`; spec/README.md, Batch publish). The batch commits
 * in one transaction that holds the result head's lock, so it stays small; the body limit
 * (`MAX_BODY_BYTES`) bounds its bytes, not 100 times `MAX_EVENT_PAYLOAD_BYTES`.
 */
export const MAX_BATCH_ITEMS = 100;

/** How many deliveries one session may hold leased at once (spec/rules.md#s5-11). */
export const CAPACITY = { min: 1, max: 32 } as const;

/**
 * What a subscription gets when `CreateSubscriptionRequest` omits `max_pending` or `max_attempts`
 * or sends `0` (spec/rules.md#s2-6, #s2-7): the server applies them, and the SDK's
 * `ensureSubscription` compares an existing subscription against them.
 */
export const SUBSCRIPTION_DEFAULTS = { max_pending: 100, max_attempts: 20 } as const;

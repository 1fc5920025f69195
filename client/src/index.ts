/**
 * @module @orbit/client
 * The Orbit TypeScript SDK: the management client, the event connection and the automatic
 * consumer. Reference: docs/sdk.md.
 *
 * This entry loads no database driver. The durable Inbox helpers are their own entries,
 * `@orbit/client/inbox/sqlite` (better-sqlite3) and `@orbit/client/inbox/mysql` (mysql2), so that
 * only an application that uses one installs and loads its driver (both are optional peer
 * dependencies).
 */
export { createClient, newIdempotencyKey, OrbitClient } from './client.ts';
export type {
  CallOptions,
  ClientOptions,
  ConfigureSubscriptionRequest,
  CreateSubscriptionRequest,
  DeliveryDetail,
  DeliveryPage,
  DeliveryRetryResult,
  DeliveryState,
  HistoryPage,
  ListDeliveriesQuery,
  ListHistoryQuery,
  ListSubscriptionsQuery,
  PublishResult,
  PublishResultInput,
  PublishResultsItemInput,
  PublishResultsOutcome,
  PublishResultsResult,
  RetireSubscriptionRequest,
  RetryDeliveryRequest,
  RetryOptions,
  SubscriptionHistoryEntry,
  SubscriptionPage,
  SubscriptionResult,
} from './client.ts';
export {
  ensureKey,
  ensureSubscription,
  requestedSettings,
  subscriptionDifferences,
  SubscriptionMismatchError,
  type EnsureSubscriptionOptions,
  type EnsureSubscriptionResult,
  type SettingDifference,
} from './ensure.ts';
export { connectEvents, connectUrl, EventConnection } from './events.ts';
/** The subprotocol and the largest frame of orbit.events.v1 (from the contract, `@orbit/spec/protocol`). */
export { SUBPROTOCOL as EVENTS_PROTOCOL, MAX_FRAME_BYTES } from '@orbit/spec/protocol';
export type { AckProof, AckResult, CloseInfo, ConnectEventsOptions, Delivery, PingResult, Welcome } from './events.ts';
export { createEventConsumer, EventConsumer } from './consumer.ts';
export type {
  ConsumerEvent,
  ConsumerEventType,
  ConsumerState,
  ConsumerStats,
  ErrorPhase,
  EventConsumerOptions,
  EventStream,
  Handler,
  HandlerContext,
  ReconnectOptions,
  StopOptions,
  StopResult,
} from './consumer.ts';
export type { Inbox, InboxEntry, InboxOutcome, InboxTransactionOptions, PendingAck } from './inbox/types.ts';
export {
  ConnectionClosedError,
  FATAL_CONSUMER_CODES,
  RETRYABLE_CLOSE_CODES,
  closedError,
  reconnectsAfter,
  OrbitError,
  OrbitTransportError,
  ERROR_CODES,
  ERROR_TABLE,
  isErrorCode,
  type ErrorCode,
  type TransportFailure,
} from './errors.ts';
export type { Log, LogLevel } from './log.ts';
export type { TokenProvider, TokenSource } from './token.ts';
export { fromBigInt, toBigInt, compareUint64, isCanonicalUint64 } from './uint64.ts';
export { backoffDelay, type BackoffOptions } from './backoff.ts';
export type { EventDelivery, ResultEvent, ResultEventSnapshot, Subscription } from './wire.ts';
export { RawJson, isRawJson, parseStrict, stringify } from '@orbit/spec/codec';

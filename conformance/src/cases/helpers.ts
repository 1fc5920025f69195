/**
 * @module
 * Fixtures shared by the cases: raw create requests that clean up after a server that wrongly
 * accepts them, a leased delivery in one call, an EXPIRED delivery, fresh canonical lease secrets,
 * and event lists that name each event's type.
 */
import { randomBytes } from 'node:crypto';
import {
  type DeliverFrame,
  type ErrorFrame,
  type EventDelivery,
  type PingReplyFrame,
  type ResultType,
  type Subscription,
  type TaskState,
  type Validator,
  validateDeliveryRetryResult,
  type WelcomeFrame,
} from '@orbit/generated';
import { encodeBase64url, LEASE_SECRET_BYTES, UINT64_MAX as UINT64_MAX_VALUE } from '@orbit/spec/codec';
import { PROTOCOL_VERSION } from '@orbit/spec/protocol';
import type { Role, Timing } from '../config.ts';
import type { CaseContext } from '../context.ts';
import { CheckFailure } from '../errors.ts';
import type { HttpResponse } from '../http.ts';
import type { EventType, PublishedEvent } from '../publisher.ts';
import type { Received } from '../frames.ts';
import { randomId } from '../ids.ts';
import type { EventConnection } from '../ws.ts';

/** The fixed order of `Subscription.types` (spec/rules.md#s2-15; the order is spec/README.md's). */
export const TYPE_ORDER = ['task.cancelled', 'task.failed', 'task.needs_review', 'task.succeeded'] as const satisfies readonly ResultType[];

/** The snapshot state of each result type. */
export const SNAPSHOT_STATE: Record<EventType, TaskState> = {
  'task.succeeded': 'SUCCEEDED',
  'task.failed': 'FAILED',
  'task.cancelled': 'CANCELLED',
  'task.needs_review': 'NEEDS_REVIEW',
  'task.requeued': 'QUEUED',
};

/** The largest uint64, as its canonical decimal string. */
export const UINT64_MAX = String(UINT64_MAX_VALUE);

/** A canonical secret that is not the real one. */
export function otherSecret(): string {
  return encodeBase64url(new Uint8Array(randomBytes(LEASE_SECRET_BYTES)));
}

/** `id (type)` of each event, for messages that list events. */
export function describeEvents(events: ReadonlyArray<{ readonly id: string; readonly type: string }>): string {
  return events.map((e) => `${e.id} (${e.type})`).join(', ') || 'none';
}

/** POSTs a create body (object or raw text); a subscription a broken server creates is retired later. */
export async function postCreate(
  ctx: CaseContext,
  body: unknown,
  role: Role = 'full',
  target = '/v1/subscriptions',
): Promise<HttpResponse> {
  const res = await ctx.post(role, target, body);
  ctx.ownCreated(role, res);
  return res;
}

/** Expects a create body to be refused with INVALID_ARGUMENT. */
export async function expectCreateInvalid(ctx: CaseContext, body: unknown, what: string): Promise<void> {
  ctx.expectError(await postCreate(ctx, body), 'INVALID_ARGUMENT', what);
}

/** A raw create body text with a fresh name. */
export function createText(ctx: CaseContext, extraMembers = ''): string {
  return `{"name":${JSON.stringify(ctx.name())},"queue_id":${JSON.stringify(ctx.queue)}${extraMembers}}`;
}

/** POSTs the retire of `id` with `expected_revision`. */
export function postRetire(ctx: CaseContext, id: string, expectedRevision: string, options: { key?: string; reason?: string } = {}) {
  return ctx.post(
    'full',
    `/v1/subscriptions/${id}:retire`,
    { expected_revision: expectedRevision, reason: options.reason ?? 'conformance' },
    options.key ? { key: options.key } : {},
  );
}

export interface Leased {
  readonly sub: Subscription;
  readonly conn: EventConnection;
  readonly welcome: Received<WelcomeFrame>;
  readonly deliver: Received<DeliverFrame>;
  readonly event: PublishedEvent;
}

/** A new subscription, a bound connection, one published result and its event.deliver. */
export async function leased(
  ctx: CaseContext,
  options: { fields?: Record<string, unknown>; capacity?: number; type?: EventType; role?: Role } = {},
): Promise<Leased> {
  const role = options.role ?? 'full';
  const sub = await ctx.createSubscription(options.fields ?? {}, role);
  const { conn, welcome } = await ctx.bind(sub.id, options.capacity ?? 1, role);
  const event = await ctx.publish({ type: options.type ?? 'task.succeeded' });
  const deliver = await ctx.deliver(conn, ctx.deliverMs, `an event.deliver of event ${event.id} (${event.type})`);
  return { sub, conn, welcome, deliver, event };
}

/** Waits for the end of a lease the case can afford to wait for (else skips); budget: the case's own. */
export function expiryBudget(ctx: CaseContext): number {
  return ctx.redeliveryMs;
}

/** The timeout of a case that waits for a lease to run out (and a redelivery), from the declared timing. */
export const expiryTimeout = (t: Timing): number => 30_000 + 4 * t.leaseDurationMs + t.redeliveryBackoffMs;

/**
 * A delivery that ran out of its only attempt: `max_attempts` 1, leased once, lease expired with
 * the connection still open (recovery is triggered by later claims of an enabled subscription,
 * spec/rules.md#s4-26), read back EXPIRED.
 */
export async function expiredDelivery(ctx: CaseContext): Promise<Leased & { readonly expired: EventDelivery }> {
  const got = await leased(ctx, { fields: { max_attempts: 1 } });
  ctx.requireLeaseWithin(got.deliver, expiryBudget(ctx));
  const expired = await ctx.waitForDeliveryState(got.sub.id, got.deliver.body.delivery.id, 'EXPIRED', ctx.redeliveryMs);
  return { ...got, expired };
}

/** Retries an EXPIRED delivery with one more attempt (a setup step: a refusal fails the case as setup). */
export async function retryOnce(ctx: CaseContext, subscriptionId: string, d: EventDelivery, reason: string): Promise<EventDelivery> {
  const res = await ctx.post('full', `/v1/subscriptions/${subscriptionId}/deliveries/${d.id}:retry`, {
    expected_revision: d.revision,
    reason,
    additional_attempts: 1,
  });
  return ctx.expectData(res, 200, 'setup: retry the EXPIRED delivery', validateDeliveryRetryResult).delivery;
}

/** Sends events.ping and returns the reply (an ack {server_time, enabled} or an error). */
export async function ping(ctx: CaseContext, conn: EventConnection): Promise<Received<PingReplyFrame | ErrorFrame>> {
  return conn.pingReply(conn.send('events.ping', {}), ctx.replyMs);
}

/** Sends events.ping and fails unless the reply is an ack {server_time, enabled}; returns it. */
export async function pinged(ctx: CaseContext, conn: EventConnection, what = 'the ping reply'): Promise<Received<PingReplyFrame>> {
  const reply = await ping(ctx, conn);
  if (reply.type !== 'ack') throw new CheckFailure(`${what}: expected an ack {server_time, enabled}, got ${reply.$text}`);
  return reply;
}

/** Every item of a list operation, following next_cursor (at most `maxPages` pages). */
export async function listAll<T>(
  ctx: CaseContext,
  role: Role,
  path: string,
  query: string,
  validator: Validator<{ items: T[]; next_cursor?: string }>,
  maxPages = 50,
): Promise<T[]> {
  const items: T[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < maxPages; page++) {
    const q = [query, 'limit=100', cursor ? `cursor=${encodeURIComponent(cursor)}` : ''].filter(Boolean).join('&');
    const data = ctx.expectData(await ctx.get(role, `${path}?${q}`), 200, `GET ${path}?${q}`, validator);
    items.push(...data.items);
    cursor = data.next_cursor;
    if (!cursor) return items;
  }
  return items;
}

/** Replaces the character in the middle of `text` by a different one of the same alphabet. */
export function tamper(text: string): string {
  const i = Math.floor(text.length / 2);
  const c = text[i]!;
  const replacement = c === 'A' ? 'B' : c === '0' ? '1' : /[a-z]/.test(c) ? (c === 'a' ? 'b' : 'a') : 'A';
  return text.slice(0, i) + replacement + text.slice(i + 1);
}

/** The `protocol_version` member of a raw frame text. */
export const VERSION_MEMBER = `"protocol_version":${JSON.stringify(PROTOCOL_VERSION)}`;

/** The text of an events.ping naming `sessionId`. */
export function pingText(sessionId: string | null, messageId = randomId()): string {
  return JSON.stringify({
    protocol_version: PROTOCOL_VERSION,
    type: 'events.ping',
    message_id: messageId,
    session_id: sessionId,
    body: {},
  });
}

/** Expects the server to close `conn` with 1008 (policy violation, spec/rules.md#s7-9). */
export async function expectPolicyClose(ctx: CaseContext, conn: EventConnection, what: string): Promise<void> {
  await ctx.expectClosed(conn, ctx.replyMs, what, [1008]);
}

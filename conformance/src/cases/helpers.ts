/**
 * @module
 * Fixtures shared by the cases: raw create requests that clean up after a server that wrongly
 * accepts them, a leased delivery in one call, fresh canonical lease secrets.
 */
import { randomBytes } from 'node:crypto';
import { encodeBase64url } from '@orbit/spec/codec';
import type { Role } from '../config.ts';
import type { CaseContext, Subscription } from '../context.ts';
import type { HttpResponse } from '../http.ts';
import type { EventType, PublishedEvent } from '../publisher.ts';
import type { EventConnection, ServerFrame } from '../ws.ts';

/** The fixed order of `Subscription.types` (seed §2). */
export const TYPE_ORDER = ['task.cancelled', 'task.failed', 'task.needs_review', 'task.succeeded'] as const;

/** The snapshot state of each result type. */
export const SNAPSHOT_STATE: Record<EventType, string> = {
  'task.succeeded': 'SUCCEEDED',
  'task.failed': 'FAILED',
  'task.cancelled': 'CANCELLED',
  'task.needs_review': 'NEEDS_REVIEW',
  'task.requeued': 'QUEUED',
};

export const UINT64_MAX = '18446744073709551615';

/** A canonical secret that is not the real one. */
export function otherSecret(): string {
  return encodeBase64url(new Uint8Array(randomBytes(32)));
}

export function randomHex(bytes = 16): string {
  return randomBytes(bytes).toString('hex');
}

/** POSTs a create body (object or raw text); a subscription a broken server creates is retired later. */
export async function postCreate(
  ctx: CaseContext,
  body: unknown,
  role: Role = 'full',
  target = '/v1/subscriptions',
): Promise<HttpResponse> {
  const res = await ctx.post(role, target, body);
  const id = (res.json as { data?: { subscription?: { id?: unknown } } } | undefined)?.data?.subscription?.id;
  if (res.status >= 200 && res.status < 300 && typeof id === 'string') ctx.own(role, id);
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

export interface Leased {
  readonly sub: Subscription;
  readonly conn: EventConnection;
  readonly welcome: ServerFrame;
  readonly deliver: ServerFrame;
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
  const deliver = await ctx.deliver(conn, ctx.deliverMs, `an event.deliver of event ${event.id}`);
  return { sub, conn, welcome, deliver, event };
}

/** Sends events.ping and returns the reply. */
export async function ping(ctx: CaseContext, conn: EventConnection): Promise<ServerFrame> {
  return conn.reply(conn.send('events.ping', {}), ctx.replyMs, 'a reply to events.ping');
}

/** Every item of a list operation, following next_cursor (at most `maxPages` pages). */
export async function listAll(ctx: CaseContext, role: Role, path: string, query: string, maxPages = 50): Promise<any[]> {
  const items: any[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < maxPages; page++) {
    const q = [query, 'limit=100', cursor ? `cursor=${encodeURIComponent(cursor)}` : ''].filter(Boolean).join('&');
    const data = ctx.expectData(await ctx.get(role, `${path}?${q}`), 200, `GET ${path}?${q}`);
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

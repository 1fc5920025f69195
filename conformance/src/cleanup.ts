/**
 * @module
 * After each case, every subscription it created is retired so that runs never pile up against
 * the 64-subscription limit of a namespace. Retiring needs an empty backlog, so the cleanup
 * resumes a paused subscription, ACKs the proofs the case received, re-arms EXPIRED deliveries
 * and consumes what is left, retrying the retire until it succeeds or time runs out. A cleanup
 * problem is reported as a note, never as a case failure.
 */
import {
  type DeliverFrame,
  type Subscription,
  type Validator,
  validateDeliveryList,
  validateSubscription,
  validateSubscriptionResult,
} from '@orbit/generated';
import { CAPACITY } from '@orbit/spec/protocol';
import type { Role } from './config.ts';
import type { CaseContext } from './context.ts';
import { EvidenceLog } from './evidence.ts';
import type { HttpResponse } from './http.ts';
import { memberAt } from './members.ts';
import { isDeliver, type Received, repliesTo } from './frames.ts';
import type { EventConnection } from './ws.ts';

/** Returns a note when the subscription could not be retired, else null. */
export function retireForCleanup(ctx: CaseContext, role: Role, id: string, proofs: Array<Received<DeliverFrame>>): Promise<string | null> {
  // The cleanup's own traffic is not evidence of the case.
  return ctx.withEvidence(new EvidenceLog(), () => drainAndRetire(ctx, role, id, proofs));
}

type Attempt = { done: true; note: string | null } | { done: false };

/** `data` of a 200 envelope when it matches `validate`, else undefined. */
function data<T>(res: HttpResponse, validate: Validator<T>): T | undefined {
  const value = memberAt(res.json, 'data');
  return res.status === 200 && validate(value) ? value : undefined;
}

async function tryRetire(ctx: CaseContext, role: Role, id: string): Promise<Attempt> {
  const got = await ctx.get(role, `/v1/subscriptions/${id}`);
  const sub: Subscription | undefined = data(got, validateSubscription);
  if (!sub) return { done: true, note: `subscription ${id}: cleanup could not read it (HTTP ${got.status})` };
  if (sub.retired_at) return { done: true, note: null };
  let revision = sub.revision;
  if (!sub.enabled) {
    const resumed = await ctx.post(role, `/v1/subscriptions/${id}:configure`, {
      expected_revision: revision,
      enabled: true,
      reason: 'conformance cleanup',
    });
    const result = data(resumed, validateSubscriptionResult);
    if (!result) return { done: true, note: `subscription ${id}: cleanup could not resume it (HTTP ${resumed.status})` };
    revision = result.subscription.revision;
  }
  const retired = await ctx.post(role, `/v1/subscriptions/${id}:retire`, { expected_revision: revision, reason: 'conformance cleanup' });
  if (retired.status === 200) return { done: true, note: null };
  if (retired.errorCode !== 'STATE_CONFLICT')
    return { done: true, note: `subscription ${id}: cleanup retire answered HTTP ${retired.status} ${retired.text.slice(0, 200)}` };
  return { done: false };
}

/** Sends the ACKs and waits for their replies (or the connection's end). */
async function ackAll(ctx: CaseContext, conn: EventConnection, frames: Array<Received<DeliverFrame>>): Promise<void> {
  const ids = frames.map((f) => ctx.sendAck(conn, f));
  for (const id of ids) if (!(await conn.poll(repliesTo(id), ctx.replyMs))) return;
}

async function drainAndRetire(ctx: CaseContext, role: Role, id: string, proofs: Array<Received<DeliverFrame>>): Promise<string | null> {
  const deadline = Date.now() + Math.max(8_000, 2 * ctx.timing.leaseDurationMs + 4_000);
  let conn: EventConnection | null = null;
  try {
    while (Date.now() < deadline) {
      const attempt = await tryRetire(ctx, role, id);
      if (attempt.done) return attempt.note;
      if (!conn || conn.closed) {
        const ended = conn?.received.find((f) => f.type === 'error');
        if (ended?.type === 'error')
          return `subscription ${id}: cleanup cannot drain it (${ended.error.code}: ${ended.error.message}); left behind`;
        conn = await openDrain(ctx, role, id);
        if (!conn) return `subscription ${id}: cleanup could not bind a connection to drain it`;
        await ackAll(ctx, conn, latestProofs(proofs, id));
        continue;
      }
      const expired = data(await ctx.get(role, `/v1/subscriptions/${id}/deliveries?state=EXPIRED&limit=100`), validateDeliveryList);
      for (const d of expired?.items ?? []) {
        await ctx.post(role, `/v1/subscriptions/${id}/deliveries/${d.id}:retry`, {
          expected_revision: d.revision,
          reason: 'conformance cleanup',
          additional_attempts: 1,
        });
      }
      const first = await conn.poll(isDeliver, 500);
      if (first) {
        const more = [first];
        for (let f = await conn.poll(isDeliver, 50); f; f = await conn.poll(isDeliver, 50)) more.push(f);
        await ackAll(ctx, conn, more);
      }
    }
    return `subscription ${id}: not retired within the cleanup time (backlog left behind)`;
  } finally {
    await conn?.close();
  }
}

async function openDrain(ctx: CaseContext, role: Role, id: string): Promise<EventConnection | null> {
  try {
    const outcome = await ctx.upgrade(role);
    if (outcome.kind !== 'open') return null;
    const welcome = await outcome.conn.hello(id, CAPACITY.max, ctx.replyMs);
    if (welcome.type !== 'events.welcome') return null;
    outcome.conn.startHeartbeat(Math.floor(ctx.timing.idleTimeoutMs / 3));
    return outcome.conn;
  } catch {
    return null;
  }
}

/** The newest proof (highest lease epoch) of each delivery of subscription `id`. */
function latestProofs(frames: Array<Received<DeliverFrame>>, id: string): Array<Received<DeliverFrame>> {
  const latest = new Map<string, Received<DeliverFrame>>();
  for (const f of frames) {
    const d = f.body.delivery;
    if (d.subscription_id !== id) continue;
    const prev = latest.get(d.id);
    if (!prev || BigInt(prev.body.delivery.lease_epoch) < BigInt(d.lease_epoch)) latest.set(d.id, f);
  }
  return [...latest.values()];
}

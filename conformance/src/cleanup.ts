/**
 * @module
 * After each case, every subscription it created is retired so that runs never pile up against
 * the 64-subscription limit of a namespace. Retiring needs an empty backlog, so the cleanup
 * resumes a paused subscription, ACKs the proofs the case received, re-arms EXPIRED deliveries
 * and consumes what is left, retrying the retire until it succeeds or time runs out. A cleanup
 * problem is reported as a note, never as a case failure.
 */
import type { Role } from './config.ts';
import type { CaseContext, Subscription } from './context.ts';
import { EvidenceLog } from './evidence.ts';
import type { EventConnection, ServerFrame } from './ws.ts';

/** Returns a note when the subscription could not be retired, else null. */
export function retireForCleanup(ctx: CaseContext, role: Role, id: string, proofs: ServerFrame[]): Promise<string | null> {
  // The cleanup's own traffic is not evidence of the case.
  return ctx.withEvidence(new EvidenceLog(), () => drainAndRetire(ctx, role, id, proofs));
}

type Attempt = { done: true; note: string | null } | { done: false };

async function tryRetire(ctx: CaseContext, role: Role, id: string): Promise<Attempt> {
  const got = await ctx.get(role, `/v1/subscriptions/${id}`);
  if (got.status !== 200) return { done: true, note: `subscription ${id}: cleanup could not read it (HTTP ${got.status})` };
  const sub = (got.json as { data: Subscription }).data;
  if (sub.retired_at) return { done: true, note: null };
  let revision = sub.revision;
  if (!sub.enabled) {
    const resumed = await ctx.post(role, `/v1/subscriptions/${id}:configure`, {
      expected_revision: revision,
      enabled: true,
      reason: 'conformance cleanup',
    });
    if (resumed.status !== 200) return { done: true, note: `subscription ${id}: cleanup could not resume it (HTTP ${resumed.status})` };
    revision = (resumed.json as { data: { subscription: Subscription } }).data.subscription.revision;
  }
  const retired = await ctx.post(role, `/v1/subscriptions/${id}:retire`, { expected_revision: revision, reason: 'conformance cleanup' });
  if (retired.status === 200) return { done: true, note: null };
  if ((retired.json as { error?: { code?: string } } | undefined)?.error?.code !== 'STATE_CONFLICT') {
    return { done: true, note: `subscription ${id}: cleanup retire answered HTTP ${retired.status} ${retired.text.slice(0, 200)}` };
  }
  return { done: false };
}

/** Sends the ACKs and waits for their replies (or the connection's end). */
async function ackAll(ctx: CaseContext, conn: EventConnection, frames: ServerFrame[]): Promise<void> {
  const ids = frames.map((f) => ctx.sendAck(conn, f));
  for (const id of ids) if (!(await conn.poll((f) => f.reply_to === id, ctx.replyMs))) return;
}

async function drainAndRetire(ctx: CaseContext, role: Role, id: string, proofs: ServerFrame[]): Promise<string | null> {
  const deadline = Date.now() + Math.max(8_000, 2 * ctx.timing.leaseDurationMs + 4_000);
  let conn: EventConnection | null = null;
  try {
    while (Date.now() < deadline) {
      const attempt = await tryRetire(ctx, role, id);
      if (attempt.done) return attempt.note;
      if (!conn || conn.closed) {
        const ended = conn?.received.find((f) => f.type === 'error');
        if (ended) return `subscription ${id}: cleanup cannot drain it (${ended.error?.code}: ${ended.error?.message}); left behind`;
        conn = await openDrain(ctx, role, id);
        if (!conn) return `subscription ${id}: cleanup could not bind a connection to drain it`;
        await ackAll(ctx, conn, latestProofs(proofs, id));
        continue;
      }
      const expired = await ctx.get(role, `/v1/subscriptions/${id}/deliveries?state=EXPIRED&limit=100`);
      for (const d of (expired.json as { data?: { items?: Array<{ id: string; revision: string }> } } | undefined)?.data?.items ?? []) {
        await ctx.post(role, `/v1/subscriptions/${id}/deliveries/${d.id}:retry`, {
          expected_revision: d.revision,
          reason: 'conformance cleanup',
          additional_attempts: 1,
        });
      }
      const first = await conn.poll((f) => f.type === 'event.deliver', 500);
      if (first) {
        const more: ServerFrame[] = [first];
        for (let f = await conn.poll((x) => x.type === 'event.deliver', 50); f; f = await conn.poll((x) => x.type === 'event.deliver', 50))
          more.push(f);
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
    const welcome = await outcome.conn.hello(id, 32, ctx.replyMs);
    if (welcome.type !== 'events.welcome') return null;
    outcome.conn.startHeartbeat(Math.floor(ctx.timing.idleTimeoutMs / 3));
    return outcome.conn;
  } catch {
    return null;
  }
}

/** The newest proof (highest lease epoch) of each delivery of subscription `id`. */
function latestProofs(frames: ServerFrame[], id: string): ServerFrame[] {
  const latest = new Map<string, ServerFrame>();
  for (const f of frames) {
    const d = f.body?.delivery;
    if (!d || d.subscription_id !== id) continue;
    const prev = latest.get(d.id);
    if (!prev || BigInt(prev.body.delivery.lease_epoch) < BigInt(d.lease_epoch)) latest.set(d.id, f);
  }
  return [...latest.values()];
}

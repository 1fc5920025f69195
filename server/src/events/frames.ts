/**
 * @module
 * Server frames of `orbit.events.v1` (spec/rules.md#s5-6, #s5-7), built in one place. Every frame
 * gets a fresh `message_id`; replies name the request in `reply_to`.
 */
import type { ErrorCode } from '@orbit/spec/errors';
import { newId } from '../crypto.ts';
import type { Leased } from '../engine/engine.ts';
import { deliveryJson, eventText, iso } from '../wire/json.ts';

/** A frame of plain values (no raw JSON text in it): `JSON.stringify` writes it as the codec would. */
function frame(type: string, fields: Record<string, unknown>): string {
  return JSON.stringify({ protocol_version: '1', type, message_id: newId(), ...fields });
}

export function welcomeFrame(args: {
  replyTo: string;
  sessionId: string;
  subscriptionId: string;
  capacity: number;
  leaseDurationMs: number;
  heartbeatIntervalMs: number;
  /** The database's time as the node knows it (the clock leases are decided with). */
  serverTime: number;
  enabled: boolean;
}): string {
  return frame('events.welcome', {
    reply_to: args.replyTo,
    session_id: args.sessionId,
    body: {
      session_id: args.sessionId,
      subscription_id: args.subscriptionId,
      capacity: args.capacity,
      lease_duration_ms: args.leaseDurationMs,
      heartbeat_interval_ms: args.heartbeatIntervalMs,
      server_time: iso(args.serverTime),
      enabled: args.enabled,
    },
  });
}

/** The frame of every delivery: the event's text is written out directly (`eventText`), its stored JSON verbatim. */
export function deliverFrame(sessionId: string, leased: Leased): string {
  const delivery = JSON.stringify(deliveryJson(leased.delivery));
  return `{"protocol_version":"1","type":"event.deliver","message_id":"${newId()}","session_id":${JSON.stringify(sessionId)},"body":{"delivery":${delivery},"event":${eventText(leased.event)},"lease_secret":${JSON.stringify(leased.secret)}}}`;
}

export function ackReplyFrame(args: {
  replyTo: string;
  sessionId: string;
  deliveryId: string;
  eventId: string;
  epoch: string;
  acknowledgedAt: number;
  deduplicated: boolean;
}): string {
  return frame('ack', {
    reply_to: args.replyTo,
    session_id: args.sessionId,
    body: {
      delivery_id: args.deliveryId,
      event_id: args.eventId,
      epoch: args.epoch,
      acknowledged_at: iso(args.acknowledgedAt),
      deduplicated: args.deduplicated,
    },
  });
}

export function pingReplyFrame(args: { replyTo: string; sessionId: string; serverTime: number; enabled: boolean }): string {
  return frame('ack', {
    reply_to: args.replyTo,
    session_id: args.sessionId,
    body: { server_time: iso(args.serverTime), enabled: args.enabled },
  });
}

/** An error frame: no body; `reply_to` when it answers a request, `session_id` once bound. */
export function errorFrame(args: {
  code: ErrorCode;
  message: string;
  replyTo?: string | undefined;
  sessionId?: string | undefined;
}): string {
  return frame('error', {
    ...(args.replyTo ? { reply_to: args.replyTo } : {}),
    ...(args.sessionId ? { session_id: args.sessionId } : {}),
    error: { code: args.code, message: args.message },
  });
}

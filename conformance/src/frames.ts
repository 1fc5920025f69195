/**
 * @module
 * Server frames as the suite sees them: how a text becomes a `Received` frame (parsed with the
 * strict codec, checked against the generated validator of its type, kept with its exact text and
 * arrival time), the reply types of each request, and the predicates that pick frames out of a
 * connection's stream. A text that is not strict JSON or does not match the schema is a protocol
 * violation, described for the case's failure message.
 */
import {
  type AckReplyFrame,
  type DeliverFrame,
  type ErrorFrame,
  type PingReplyFrame,
  type ServerFrame,
  type Validator,
  validateAckReplyFrame,
  validateDeliverFrame,
  validateErrorFrame,
  validatePingReplyFrame,
  validateServerFrame,
  validateWelcomeFrame,
  type WelcomeFrame,
} from '@orbit/generated';
import { parseStrict } from '@orbit/spec/codec';
import { memberAt } from './members.ts';

/** A server frame as received: the parsed frame plus its exact text and arrival time. */
export type Received<F extends ServerFrame = ServerFrame> = F & {
  /** The frame exactly as received. */
  readonly $text: string;
  /** When it arrived (Date.now()). */
  readonly $at: number;
};

/** A predicate that also narrows the frame's type. */
export type FrameGuard<F extends ServerFrame> = (f: Received) => f is Received & Received<F>;

/** The request a frame answers (its reply_to), if any. */
export function replyOf(f: Received): string | undefined {
  return 'reply_to' in f ? f.reply_to : undefined;
}

/** Frames that answer request `messageId`. */
export function repliesTo(messageId: string): (f: Received) => boolean {
  return (f) => replyOf(f) === messageId;
}

export const isDeliver: FrameGuard<DeliverFrame> = (f): f is Received<DeliverFrame> => f.type === 'event.deliver';
export const isError: FrameGuard<ErrorFrame> = (f): f is Received<ErrorFrame> => f.type === 'error';
export const isWelcome: FrameGuard<WelcomeFrame> = (f): f is Received<WelcomeFrame> => f.type === 'events.welcome';

/** An event.deliver of delivery `deliveryId` (with `epoch`, when given). */
export function deliveryOf(deliveryId: string, epoch?: string): FrameGuard<DeliverFrame> {
  return (f): f is Received<DeliverFrame> =>
    f.type === 'event.deliver' && f.body.delivery.id === deliveryId && (epoch === undefined || f.body.delivery.lease_epoch === epoch);
}

/** The reply frames of a request type: what `reply()` may legitimately return. */
export type AckReply = Received<AckReplyFrame | ErrorFrame>;
export type PingReply = Received<PingReplyFrame | ErrorFrame>;
export type HelloReply = Received<WelcomeFrame | ErrorFrame>;

/** The validator of one server frame type (the two `ack` bodies told apart by their members). */
function validatorFor(value: unknown): { name: string; validate: Validator<ServerFrame> } {
  switch (memberAt(value, 'type')) {
    case 'events.welcome':
      return { name: 'WelcomeFrame', validate: validateWelcomeFrame };
    case 'event.deliver':
      return { name: 'DeliverFrame', validate: validateDeliverFrame };
    case 'error':
      return { name: 'ErrorFrame', validate: validateErrorFrame };
    case 'ack':
      return memberAt(value, 'body', 'delivery_id') !== undefined
        ? { name: 'AckReplyFrame', validate: validateAckReplyFrame }
        : { name: 'PingReplyFrame', validate: validatePingReplyFrame };
    default:
      return { name: 'serverFrame', validate: validateServerFrame };
  }
}

/** The frame a text frame of the server carries, or what is wrong with it (a protocol violation). */
export function readServerFrame(text: string, at: number): { frame: Received } | { violation: string } {
  let value: unknown;
  try {
    value = parseStrict(text);
  } catch (error) {
    return { violation: `server frame is not strict JSON (${(error as Error).message}): ${text.slice(0, 300)}` };
  }
  const { name, validate } = validatorFor(value);
  if (!validate(value)) {
    const e = validate.errors?.[0];
    return {
      violation:
        `server frame does not match ${name} (${e?.instancePath || '(root)'} ` +
        `${e?.message ?? ''}${e?.params ? ` ${JSON.stringify(e.params)}` : ''}): ${text.slice(0, 500)}`,
    };
  }
  const frame = Object.assign(Object.create(null) as object, value, { $text: text, $at: at }) as Received;
  Object.defineProperty(frame, '$text', { enumerable: false });
  Object.defineProperty(frame, '$at', { enumerable: false });
  return { frame };
}

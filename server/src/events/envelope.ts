/**
 * @module
 * Client frame intake (spec/rules.md#s5-5, #s7-1): strict parse, then the generated `clientFrame` validator.
 * A frame whose envelope is sound but whose body is not gets an INVALID_ARGUMENT error frame; a
 * broken envelope (or a wrong session) closes the connection with 1008.
 */
import { CLIENT_FRAME_KEYS, PATTERNS, validateClientFrame, type ClientFrame } from '@orbit/generated';
import { isCanonicalUint64, parseStrict } from '@orbit/spec/codec';
import { PROTOCOL_VERSION } from '@orbit/spec/protocol';

export type { ClientFrame };

export type Intake =
  | { readonly kind: 'frame'; readonly frame: ClientFrame }
  /** Sound envelope, bad body: answer with an error frame and keep the connection. */
  | { readonly kind: 'bad_body'; readonly messageId: string; readonly message: string }
  /** Close with 1008. */
  | { readonly kind: 'close'; readonly reason: string };

/** Reads one text frame. `sessionId` is the bound session, or null before the hello. */
export function readClientFrame(text: string, sessionId: string | null): Intake {
  let value: unknown;
  try {
    value = parseStrict(text);
  } catch {
    return { kind: 'close', reason: 'frame is not strict JSON' };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return { kind: 'close', reason: 'frame is not a JSON object' };
  const frame = value as Record<string, unknown>;
  const allowed = typeof frame.type === 'string' ? CLIENT_FRAME_KEYS[frame.type] : undefined;
  if (
    !allowed ||
    frame.protocol_version !== PROTOCOL_VERSION ||
    typeof frame.message_id !== 'string' ||
    !PATTERNS.id.test(frame.message_id)
  ) {
    return { kind: 'close', reason: 'invalid envelope' };
  }
  if (Object.keys(frame).some((k) => !allowed.includes(k)) || !allowed.every((k) => k in frame))
    return { kind: 'close', reason: 'invalid envelope' };
  if (frame.type === 'events.hello' ? sessionId !== null : frame.session_id !== sessionId || sessionId === null) {
    return { kind: 'close', reason: sessionId === null ? 'the first frame must be events.hello' : 'wrong session' };
  }
  if (!validateClientFrame(value)) {
    const error = validateClientFrame.errors?.[0];
    return {
      kind: 'bad_body',
      messageId: frame.message_id,
      message: `${error?.instancePath || 'frame'} ${error?.message ?? 'is invalid'}`,
    };
  }
  if (value.type === 'event.ack' && !isCanonicalUint64(value.body.epoch)) {
    return { kind: 'bad_body', messageId: value.message_id, message: '/body/epoch must be a canonical uint64' };
  }
  return { kind: 'frame', frame: value };
}

import { PROTOCOL_VERSION } from '@orbit/spec/protocol';
import { describe, expect, it } from 'vitest';
import { isWelcome, readServerFrame } from './frames.ts';

const id = (c: string) => c.repeat(32);
const welcome = {
  protocol_version: PROTOCOL_VERSION,
  type: 'events.welcome',
  message_id: id('a'),
  reply_to: id('b'),
  session_id: id('c'),
  body: {
    session_id: id('c'),
    subscription_id: id('d'),
    capacity: 1,
    lease_duration_ms: 30_000,
    heartbeat_interval_ms: 15_000,
    server_time: '2026-01-01T00:00:00Z',
    enabled: true,
  },
};

describe('readServerFrame', () => {
  it('keeps a valid frame with its exact text and arrival time, neither of them a member', () => {
    const text = JSON.stringify(welcome, null, 1);
    const read = readServerFrame(text, 42);
    if (!('frame' in read)) throw new Error(read.violation);
    expect(isWelcome(read.frame)).toBe(true);
    expect([read.frame.$text, read.frame.$at]).toEqual([text, 42]);
    expect(Object.keys(read.frame)).toEqual(Object.keys(welcome));
  });

  it('calls a text that is not strict JSON a violation, a duplicate member included', () => {
    expect(readServerFrame('{"type":', 0)).toEqual({ violation: expect.stringMatching(/^server frame is not strict JSON/) });
    const duplicate = `${JSON.stringify(welcome).slice(0, -1)},"type":"events.welcome"}`;
    expect(readServerFrame(duplicate, 0)).toEqual({ violation: expect.stringMatching(/^server frame is not strict JSON/) });
  });

  it('checks each frame against the validator of its type, telling the two ack bodies apart', () => {
    const { server_time: _, ...body } = welcome.body;
    expect(readServerFrame(JSON.stringify({ ...welcome, body }), 0)).toEqual({
      violation: expect.stringMatching(/^server frame does not match WelcomeFrame \(/),
    });
    const ack = { protocol_version: PROTOCOL_VERSION, type: 'ack', message_id: id('e'), reply_to: id('f'), session_id: id('c') };
    expect(readServerFrame(JSON.stringify({ ...ack, body: { delivery_id: id('1') } }), 0)).toEqual({
      violation: expect.stringMatching(/does not match AckReplyFrame/),
    });
    expect(readServerFrame(JSON.stringify({ ...ack, body: {} }), 0)).toEqual({
      violation: expect.stringMatching(/does not match PingReplyFrame/),
    });
    expect(readServerFrame(JSON.stringify({ ...welcome, type: 'event.renew' }), 0)).toEqual({
      violation: expect.stringMatching(/does not match serverFrame/),
    });
  });
});

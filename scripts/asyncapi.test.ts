/**
 * generated/asyncapi.yaml is a valid AsyncAPI 3.0 document (checked by @asyncapi/parser, the
 * parser AsyncAPI's own tools use) and says what events.schema.json and openapi.yaml say: every
 * frame of each direction is a message of the connect channel, with the subprotocol and the
 * handshake headers in the WebSocket binding.
 */
import { readFileSync } from 'node:fs';
import { Parser } from '@asyncapi/parser';
import { describe, expect, it } from 'vitest';
import YAML from 'yaml';

const read = (path: string) => readFileSync(new URL(`../${path}`, import.meta.url), 'utf8');
const text = read('generated/asyncapi.yaml');
const events = JSON.parse(read('spec/events.schema.json'));
const frames = (direction: 'clientFrame' | 'serverFrame'): string[] =>
  events.$defs[direction].oneOf.map((entry: { $ref: string }) => entry.$ref.replace('#/$defs/', ''));

describe('generated/asyncapi.yaml', () => {
  it('MUST parse as AsyncAPI 3.0 without an error diagnostic', async () => {
    const { document, diagnostics } = await new Parser().parse(text);
    const errors = diagnostics.filter((d) => d.severity === 0);
    expect(errors.map((d) => `${d.path.join('.')}: ${d.message}`)).toEqual([]);
    expect(document?.version()).toBe('3.0.0');
  });

  it('MUST carry every frame of both directions as a message, received or sent by the server', async () => {
    const { document } = await new Parser().parse(text);
    const channel = document!.channels().get('events')!;
    expect(channel.address()).toBe('/v1/events/connect');
    expect(
      channel
        .messages()
        .all()
        .map((m) => m.id())
        .sort(),
    ).toEqual([...frames('clientFrame'), ...frames('serverFrame')].sort());
    const received = document!.operations().filter((o) => o.action() === 'receive');
    expect(
      received
        .flatMap((o) =>
          o
            .messages()
            .all()
            .map((m) => m.id()),
        )
        .sort(),
    ).toEqual(frames('clientFrame').sort());
    const sent = new Set(
      document!
        .operations()
        .flatMap((o) => [...(o.action() === 'send' ? o.messages().all() : []), ...(o.reply()?.messages().all() ?? [])])
        .map((m) => m.id()),
    );
    expect([...sent].sort()).toEqual(frames('serverFrame').sort());
  });

  it('MUST bind the channel to WebSocket with the subprotocol header and the bearer credential', () => {
    const raw = YAML.parse(text);
    const binding = raw.channels.events.bindings.ws;
    expect(binding.method).toBe('GET');
    expect(binding.headers.required).toEqual(expect.arrayContaining(['Authorization', 'Sec-WebSocket-Protocol', 'Upgrade']));
    expect(raw.channels.events['x-orbit-websocket-subprotocol']).toBe('orbit.events.v1');
  });
});

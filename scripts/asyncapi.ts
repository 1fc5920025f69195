/**
 * @module
 * The AsyncAPI 3.0 document of `orbit.events.v1` (generated/asyncapi.yaml), derived from the
 * contract: every frame of `events.schema.json` becomes a message (its schema a component, with
 * `#/$defs/X` references moved to `#/components/schemas/X`), the connect operation of
 * `openapi.yaml` gives the channel's address and its WebSocket binding (the handshake headers,
 * the subprotocol). The document describes the server: it receives the client frames and sends
 * the server frames; each request frame has a reply (correlated by `reply_to`).
 *
 * Only the request/reply pairing is written here, because the schema does not express it;
 * generation fails when a frame is added to the schema without being placed.
 */

import { CONNECT_PATH } from '../spec/protocol.ts';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

const CHANNEL = 'events';

/** Client frame -> the server frames that answer it (each with `reply_to` = its `message_id`). */
const REPLIES: Readonly<Record<string, readonly string[]>> = {
  HelloFrame: ['WelcomeFrame', 'ErrorFrame'],
  AckRequestFrame: ['AckReplyFrame', 'ErrorFrame'],
  PingFrame: ['PingReplyFrame', 'ErrorFrame'],
};
/** Server frames sent on the server's own initiative (no `reply_to`). */
const UNSOLICITED = ['DeliverFrame', 'ErrorFrame'] as const;

const OPERATION_NAMES: Readonly<Record<string, string>> = {
  HelloFrame: 'receiveHello',
  AckRequestFrame: 'receiveAck',
  PingFrame: 'receivePing',
  DeliverFrame: 'sendDelivery',
  ErrorFrame: 'sendError',
};

function isObject(value: Json | undefined): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function refs(schema: JsonObject, key: 'clientFrame' | 'serverFrame'): string[] {
  const defs = schema.$defs as JsonObject;
  const oneOf = (defs[key] as JsonObject).oneOf as JsonObject[];
  return oneOf.map((entry) => String(entry.$ref).replace('#/$defs/', ''));
}

function moveRefs(value: Json): Json {
  if (Array.isArray(value)) return value.map(moveRefs);
  if (!isObject(value)) return value;
  const out: JsonObject = {};
  for (const [key, item] of Object.entries(value)) {
    out[key] = key === '$ref' && typeof item === 'string' ? item.replace('#/$defs/', '#/components/schemas/') : moveRefs(item);
  }
  return out;
}

/** The handshake headers of the connect operation, as one JSON Schema object (the binding's `headers`). */
function handshakeHeaders(connect: JsonObject): JsonObject {
  const properties: JsonObject = {
    Authorization: {
      type: 'string',
      pattern: '^Bearer [\\x21-\\x7E]+$',
      description: 'The credential, `Bearer <token>`; never in the URL, and no cookie is used.',
    },
  };
  const required: string[] = ['Authorization'];
  for (const parameter of (connect.parameters ?? []) as JsonObject[]) {
    if (parameter.in !== 'header') continue;
    const name = String(parameter.name);
    properties[name] = { ...(parameter.schema as JsonObject), ...(parameter.description ? { description: parameter.description } : {}) };
    if (parameter.required === true) required.push(name);
  }
  return { type: 'object', properties, required };
}

export function generateAsyncApi(events: JsonObject, openapi: JsonObject): JsonObject {
  const defs = events.$defs as JsonObject;
  const connect = ((openapi.paths as JsonObject)[CONNECT_PATH] as JsonObject | undefined)?.get as JsonObject | undefined;
  if (!connect) throw new Error(`openapi.yaml has no GET ${CONNECT_PATH}`);
  const subprotocol = String(connect['x-orbit-websocket-subprotocol']);
  const clientFrames = refs(events, 'clientFrame');
  const serverFrames = refs(events, 'serverFrame');

  const placed = new Set([...Object.keys(REPLIES), ...Object.values(REPLIES).flat(), ...UNSOLICITED]);
  for (const frame of [...clientFrames, ...serverFrames])
    if (!placed.has(frame)) throw new Error(`scripts/asyncapi.ts: the frame ${frame} is neither a request, a reply nor unsolicited`);
  for (const frame of Object.keys(REPLIES))
    if (!clientFrames.includes(frame)) throw new Error(`scripts/asyncapi.ts: ${frame} is not a client frame of events.schema.json`);

  const messages: JsonObject = {};
  for (const frame of [...clientFrames, ...serverFrames]) {
    const schema = defs[frame] as JsonObject;
    const type = ((schema.properties as JsonObject).type as JsonObject).const as string;
    const isReply = Object.values(REPLIES).some((replies) => replies.includes(frame));
    messages[frame] = {
      name: type,
      title: frame,
      summary: String(schema.description ?? ''),
      contentType: 'application/json',
      payload: { $ref: `#/components/schemas/${frame}` },
      correlationId: { $ref: isReply ? '#/components/correlationIds/replyTo' : '#/components/correlationIds/messageId' },
    };
  }
  const channelMessage = (frame: string): JsonObject => ({ $ref: `#/channels/${CHANNEL}/messages/${frame}` });

  const operation = (action: 'receive' | 'send', frame: string): JsonObject => ({
    action,
    channel: { $ref: `#/channels/${CHANNEL}` },
    summary: String((defs[frame] as JsonObject).description ?? ''),
    messages: [channelMessage(frame)],
  });
  const operations: JsonObject = {};
  for (const frame of clientFrames) {
    operations[OPERATION_NAMES[frame] ?? `receive${frame}`] = {
      ...operation('receive', frame),
      reply: { channel: { $ref: `#/channels/${CHANNEL}` }, messages: (REPLIES[frame] ?? []).map(channelMessage) },
    };
  }
  for (const frame of UNSOLICITED) operations[OPERATION_NAMES[frame] ?? `send${frame}`] = operation('send', frame);

  const schemas: JsonObject = {};
  for (const [name, schema] of Object.entries(defs)) schemas[name] = moveRefs(schema);

  const info = openapi.info as JsonObject;
  return {
    asyncapi: '3.0.0',
    id: 'urn:orbit:events:v1',
    info: {
      title: String(events.title),
      version: '1',
      description: `${String(events.description)}\n\nGenerated from spec/events.schema.json and the connect operation of spec/openapi.yaml by scripts/generate.ts. Do not edit.`,
      ...(isObject(info.license) ? { license: { name: String(info.license.name) } } : {}),
    },
    defaultContentType: 'application/json',
    servers: {
      local: {
        host: '127.0.0.1:8080',
        protocol: 'ws',
        description: 'Local development (`npm start`). Production uses WSS.',
      },
    },
    channels: {
      [CHANNEL]: {
        address: CONNECT_PATH,
        title: 'The event connection',
        description: String(connect.description),
        messages,
        bindings: {
          ws: {
            method: 'GET',
            headers: handshakeHeaders(connect),
            bindingVersion: '0.1.0',
          },
        },
        'x-orbit-websocket-subprotocol': subprotocol,
      },
    },
    operations,
    components: {
      schemas,
      correlationIds: {
        messageId: {
          description: 'The id the sender gave the frame; a reply names it in `reply_to`.',
          location: '$message.payload#/message_id',
        },
        replyTo: { description: 'The `message_id` of the request this frame answers.', location: '$message.payload#/reply_to' },
      },
    },
  };
}

/**
 * @module
 * `GET /v1/events/connect` without a WebSocket upgrade. Upgrades never reach the Hono app (the
 * event gateway takes them from the Node server's `upgrade` event), so a request that arrives here
 * asked for the event entry point over plain HTTP: it gets 426 `PROTOCOL_REQUIRED`, the answer the
 * contract gives for a missing upgrade, with the `Upgrade` headers RFC 9110 §15.5.22 requires.
 */
import type { Hono } from 'hono';
import { OrbitError } from '@orbit/spec/errors';
import { SUBPROTOCOL } from '@orbit/spec/protocol';
import type { AppEnv } from './context.ts';
import { errorResponse } from '../wire/envelope.ts';

export function connectRoutes(app: Hono<AppEnv>): void {
  app.get('/v1/events/connect', (c) => {
    const response = errorResponse(
      c.get('requestId'),
      new OrbitError(
        'PROTOCOL_REQUIRED',
        `this is a WebSocket entry point: send Upgrade: websocket and Sec-WebSocket-Protocol: ${SUBPROTOCOL}`,
      ),
    );
    response.headers.set('upgrade', 'websocket');
    response.headers.set('connection', 'Upgrade');
    response.headers.set('sec-websocket-protocol', SUBPROTOCOL);
    return response;
  });
}

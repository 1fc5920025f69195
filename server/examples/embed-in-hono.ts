/**
 * Recipe: Orbit inside an existing `@hono/node-server` app, under `/orbit`, next to the host's own
 * routes and its own WebSocket endpoint (docs/embedding.md shows this file).
 *
 *   PORT=3000 ORBIT_DATABASE_URL=sqlite:./orbit.db node embed-in-hono.js
 *
 * Orbit's settings come from the environment as for `orbit serve` (`ORBIT_*`); the host keeps its
 * own port. On SIGINT or SIGTERM it closes gracefully: the listener stops accepting while Orbit
 * closes its event connections and then its store.
 */
import type { Server } from 'node:http';
import { createAdaptorServer } from '@hono/node-server';
import { createOrbit, loadSettings } from '@orbit/server';
import { Hono } from 'hono';
import { WebSocketServer } from 'ws';

// Opens the database of ORBIT_DATABASE_URL (migrating it) and serves everything under /orbit.
const orbit = await createOrbit(loadSettings(process.env), { basePath: '/orbit' });

// The host app: its own routes and its own 404, and Orbit's routes merged in under /orbit.
const host = new Hono();
host.get('/', (c) => c.text('the host app\n'));
host.get('/api/hello', (c) => c.json({ hello: 'from the host' }));
host.route('/', orbit.app);
host.notFound((c) => c.text('host: not found\n', 404));

const server = createAdaptorServer({ fetch: host.fetch }) as Server;

// The host's own WebSocket endpoint. Each upgrade listener takes only its own path: Orbit's
// gateway takes `/orbit/v1/events/connect` and leaves this one alone.
const echo = new WebSocketServer({ noServer: true });
server.on('upgrade', (request, socket, head) => {
  if (new URL(request.url ?? '/', 'http://host').pathname !== '/ws') return;
  echo.handleUpgrade(request, socket, head, (ws) => ws.on('message', (data) => ws.send(`echo: ${String(data)}`)));
});
orbit.attach(server);

const port = Number(process.env.PORT ?? 3000);
server.listen(port, '127.0.0.1', () => console.log(`host on http://127.0.0.1:${port}, Orbit on http://127.0.0.1:${port}/orbit`));

const shutdown = async (): Promise<void> => {
  orbit.beginShutdown(); // /orbit/readyz answers 503, new event connections are refused
  const listenerClosed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  for (const ws of echo.clients) ws.close(1001);
  await orbit.close(); // event connections close with 1001, background jobs stop, then the store closes
  server.closeIdleConnections(); // keep-alive connections that went idle meanwhile
  await listenerClosed;
};
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void shutdown().then(() => process.exit(0)));

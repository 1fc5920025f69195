/**
 * @module
 * The server package's public surface: mount Orbit in your own Hono deployment with `createOrbit`,
 * or run it with `startServer` (what `orbit serve` does).
 */
export { createOrbit, startServer, type Orbit, type OrbitOptions, type RunningServer } from './server.ts';
export { loadSettings, INTEGER_SETTINGS, type Settings } from './config.ts';
export { Store, type Principal, type ResultInput } from './store/store.ts';

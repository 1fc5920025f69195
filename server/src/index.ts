/**
 * @module
 * The server package's public surface: embed Orbit in your own Hono deployment with `createOrbit`
 * (it opens the database the settings name), or run it with `startServer` (what `orbit serve`
 * does). Settings come from `loadSettings` (environment and config file, as for `orbit serve`).
 */
export {
  createOrbit,
  startServer,
  type Orbit,
  type OrbitOptions,
  type OrbitTransaction,
  type RunningServer,
} from './server.ts';
export { loadSettings, resolveSettings, readConfigFile, SettingsError, type Settings } from './config.ts';
export { createLogger, type Log } from './ops/log.ts';
export type { ResultInput } from './store/store.ts';

/**
 * @module
 * The server package's public surface: mount Orbit in your own Hono deployment with `openOrbit`
 * (or `createOrbit` on a store you opened), or run it with `startServer` (what `orbit serve` does).
 * `authenticate` is the API's own bearer lookup, for a host route that takes Orbit credentials.
 */
export { createOrbit, openOrbit, startServer, type Orbit, type OrbitOptions, type RunningServer } from './server.ts';
export {
  loadSettings,
  resolveSettings,
  readConfigFile,
  settingsMarkdown,
  INTEGER_SETTINGS,
  OTHER_SETTINGS,
  SettingsError,
  type Settings,
} from './config.ts';
export { OrbitMetrics, METRICS } from './ops/metrics.ts';
export { createLogger, type Log } from './ops/log.ts';
export { Store, type BootstrapResult, type Principal, type ResultInput } from './store/store.ts';
export { authenticate } from './wire/auth.ts';

/** @module The CLI's logger is the server's (`ops/log.ts`): pino JSON, or readable lines for `orbit dev`. */
export { createLogger, type Log, type Level } from '../ops/log.ts';

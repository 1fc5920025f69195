/**
 * @module
 * What the repository's own tools use beyond the public surface (`@orbit/server/internal`, resolved
 * only with the `@orbit/source` condition, so it is not part of the published package's API): the
 * store, a node with its store, and the bearer lookup the benchmark's bare route shares.
 */
export { assembleOrbit, startNode, type OrbitNode, type RunningNode } from './server.ts';
export { Store, type BootstrapResult, type Principal } from './store/store.ts';
export { authenticate } from './wire/auth.ts';

/**
 * @module
 * What the repository's own tools (the test harness and the benchmark) use beyond the public surface,
 * imported by path: it is not an export of the published package. The store, a node with its store,
 * the delivery engine, and the bearer lookup the benchmark's bare route shares.
 */
export { assembleOrbit, startNode, type OrbitNode, type RunningNode } from './server.ts';
export { DeliveryEngine } from './engine/engine.ts';
export { Store, type BootstrapResult, type Principal } from './store/store.ts';
export { authenticate } from './wire/auth.ts';

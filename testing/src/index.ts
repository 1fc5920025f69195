/**
 * @module
 * The repository's shared test support (never published): databases on both stores, in-process
 * servers and real `orbit` processes, the checked management API helper, setup shortcuts, and the
 * one raw orbit.events.v1 test client.
 */
export {
  freshDatabase,
  dropMysqlDatabases,
  missingMysqlDatabase,
  MYSQL_ROOT,
  mysqlDatabaseExists,
  openStore,
  STORES,
  type StoreKind,
  type TestDatabase,
} from './databases.ts';
export type { Store } from '../../server/src/internal.ts';
export { handledByExample, publishUntilAnswered, spawnExampleConsumer } from './consumers.ts';
export { configure, deliveries, publish, subscribe, subscribeThroughBalancer, TASK } from './fixtures.ts';
export { ensureDebianPackage } from './debian.ts';
export { HAPROXY, haproxyMissing, type HaproxyProcess, startOrbitBalancer, startWriterProxy } from './haproxy.ts';
export { type ApiResponse, api } from './http.ts';
export { type Forwarder, forwardTcp, ip, type Link, NetworkLab, netnsMissing } from './netns.ts';
export {
  type AckReply,
  ackedCount,
  checkHistory,
  type FinalState,
  HistoryLog,
  type HistoryCheck,
  judge,
  type Publish,
  type Receipt,
  readFinal,
} from './history.ts';
export {
  type CliRun,
  cleanEnv,
  freePort,
  ORBIT_BIN,
  type OrbitProcess,
  runOrbit,
  runUntil,
  type ServerProcess,
  serveOrbit,
  spawnServer,
} from './processes.ts';
export { ALL_PERMISSIONS, startTestServer, type TestServer } from './servers.ts';
export { selfSignedCertificate } from './tls.ts';
export { parentSpanId, recordSpans, type SpanRecorder, traceparentOf } from './tracing.ts';
export { eventually } from './wait.ts';
export { type Frame, messageId, PROTOCOL, TestSocket } from './ws-client.ts';

// The layering that `npm run deps` (and so `npm test`) enforces with dependency-cruiser. Arrows run one way,
// down the tree (spec/README.md, Layout): spec/ is the ground floor, generated/ is made from it, the server,
// the SDK and the conformance suite stand on both, and inside server/src the transports (http/ on Hono, events/
// on WebSocket) share wire/, decide with the pure domain/ and persist through the store's facade, store.ts.
// scripts/deps.test.ts runs these same rules over a small tree of fixture files and proves that each can fail.
//
// Type-only imports count: a type borrowed from a layer above is still an arrow pointing up.

/** Node's built-in modules that do I/O; `node:` prefixed or not. */
const NODE_IO = '^(node:)?(net|http|https|http2|fs|fs/promises|child_process|dgram|tls)$';
/** A pattern for npm packages by name: resolved into any node_modules, or left unresolved (the bare name). */
const npm = (...names) => {
  const name = `(${names.join('|')})`;
  return `(^|/)node_modules/${name}/|^${name}(/|$)`;
};
/** npm packages that do I/O: sockets, HTTP, databases. */
const NPM_IO = npm('ws', 'hono', '@hono/[^/]+', 'mysql2', 'better-sqlite3', 'drizzle-orm');
/** The transports' frameworks. */
const NPM_TRANSPORT = npm('ws', 'hono', '@hono/[^/]+');

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment:
        'A cycle has no bottom: neither module can be read, tested or loaded without the other, and ESM evaluates one of them ' +
        'half-initialised. Move what both need into a module below them.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'domain-no-io',
      comment:
        'server/src/domain holds the delivery rules as pure functions, property-tested without sockets, files or databases; ' +
        'I/O belongs to the transports and the store, which call the domain and act on its decisions.',
      severity: 'error',
      from: { path: '^server/src/domain/' },
      to: { path: [NODE_IO, NPM_IO] },
    },
    {
      name: 'domain-no-outer-layers',
      comment:
        'The domain decides; the store, the transports and the wire mappers carry its decisions out. An import from domain/ ' +
        'into one of them turns the arrow around (and drags their I/O into the pure layer).',
      severity: 'error',
      from: { path: '^server/src/domain/' },
      to: { path: '^server/src/(store|engine|http|events|wire)/' },
    },
    {
      name: 'engine-calls-nothing-above',
      comment:
        'server/src/engine holds the units of work of delivery (spec/README.md, "The delivery engine"): each plans one ' +
        'transaction from domain/ decisions, runs it through the store, and returns a plain value of what to send. The ' +
        'WebSocket gateway decides when to run one and writes what it returns; an engine that called back into a ' +
        'transport (or the wire mappers, operations, the CLI) would put frame I/O back inside transactions.',
      severity: 'error',
      from: { path: '^server/src/engine/' },
      to: { path: ['^server/src/(events|http|wire|ops|cli|console)/', NPM_TRANSPORT] },
    },
    {
      name: 'store-not-engine',
      comment:
        'The store loads and saves; it never calls the engine or a transport that stand on it. Its statements are ' +
        'grouped into round trips by the engine, not the other way round.',
      severity: 'error',
      from: { path: '^server/src/store/' },
      to: { path: '^server/src/(engine|events|http)/' },
    },
    {
      name: 'spec-is-the-ground-floor',
      comment:
        'spec/ is the contract every other package imports; it imports none of them (generated/ is made from it, the ' +
        'server, the SDK and the suite implement it). Its own tests may check the generated validators against it.',
      severity: 'error',
      from: { path: '^spec/', pathNot: '\\.test\\.ts$' },
      to: { path: '^(generated|server|client|conformance|testing|bench|scripts)/' },
    },
    {
      name: 'spec-opentelemetry-only-in-tracing',
      comment:
        '@opentelemetry/api is an optional peer dependency of @orbit/spec, needed by its tracing entry point alone (spec/' +
        'tracing.ts, shared by the server and the SDK): a user of the codec, the errors or the protocol constants must not ' +
        'need it installed, so no other module of spec/ imports it, or imports spec/tracing.ts.',
      severity: 'error',
      from: { path: '^spec/', pathNot: ['^spec/tracing\\.ts$', '\\.test\\.ts$'] },
      to: { path: [npm('@opentelemetry/[^/]+'), '^spec/tracing\\.ts$'] },
    },
    {
      name: 'generated-imports-only-spec',
      comment:
        'generated/ is made from spec/ by scripts/generate.ts; it may import spec/ and nothing built on top of it, or the ' +
        'published @orbit/generated package would pull in a server, an SDK or the suite.',
      severity: 'error',
      from: { path: '^generated/' },
      to: { path: '^(server|client|conformance|testing|bench|scripts)/' },
    },
    {
      name: 'client-not-server',
      comment:
        'The SDK talks to any Orbit server over the network and ships without one; it shares only the contract (spec/, ' +
        'generated/) with the server.',
      severity: 'error',
      from: { path: '^client/' },
      to: { path: '^server/' },
    },
    {
      name: 'conformance-not-server',
      comment:
        'The conformance suite checks any server over the network; importing our server would let it test our code ' +
        'instead of the wire.',
      severity: 'error',
      from: { path: '^conformance/' },
      to: { path: '^server/' },
    },
    {
      name: 'http-not-events',
      comment: 'The two transports are peers: what both need lives below them, in wire/, domain/ or the store.',
      severity: 'error',
      from: { path: '^server/src/http/' },
      to: { path: '^server/src/events/' },
    },
    {
      name: 'events-not-http',
      comment: 'The two transports are peers: what both need lives below them, in wire/, domain/ or the store.',
      severity: 'error',
      from: { path: '^server/src/events/' },
      to: { path: '^server/src/http/' },
    },
    {
      name: 'transport-store-facade-only',
      comment:
        'A transport sees the store through its facade, store/store.ts, so that the store can change its tables, queries ' +
        'and batching behind one interface.',
      severity: 'error',
      from: { path: '^server/src/(http|events)/' },
      to: { path: '^server/src/store/', pathNot: '^server/src/store/store\\.ts$' },
    },
    {
      name: 'wire-no-transport',
      comment:
        'wire/ (the JSON mappers, the envelope, receipts, pages) is shared by both transports, so it knows neither of them ' +
        'nor their frameworks.',
      severity: 'error',
      from: { path: '^server/src/wire/' },
      to: {
        path: ['^server/src/(http|events)/', NPM_TRANSPORT],
      },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // The packages' build output (npm run build); node_modules stays visible, or the I/O rules would see no npm package.
    exclude: { path: '^[^/]+/dist/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    // The workspaces import each other as @orbit/*; the @orbit/source export condition points at their TypeScript
    // sources (README.md, Build and development loop), so the cross-package edges land on the files in this tree.
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['@orbit/source', 'import', 'require', 'node', 'default', 'types'],
      mainFields: ['module', 'main', 'types', 'typings'],
      extensions: ['.ts', '.mts', '.js', '.mjs', '.cjs', '.json', '.d.ts'],
    },
    skipAnalysisNotInRules: true,
    reporterOptions: {
      text: { highlightFocused: true },
    },
  },
};

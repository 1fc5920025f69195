#!/usr/bin/env node
// `orbit serve` for the memory benchmark: the server package's `orbit` command (server/bin/orbit.mjs,
// which runs the sources inside the repository), started with --expose-gc. On SIGUSR2 it runs a
// full garbage collection and prints one JSON line with process.memoryUsage(), so RSS is read
// after garbage, not before it.
process.on('SIGUSR2', () => {
  // gc() without arguments is a full, synchronous collection. The options object asks for a
  // footprint-reducing one where V8 supports it; Node 20's V8 (11.3) does not: it reads an object
  // without `type: 'minor'` or `execution: 'async'` as the legacy gc(true), a scavenge of the
  // young generation only (--trace-gc shows "Scavenge ... testing"), so alone it left the old
  // generation's garbage in every sample.
  globalThis.gc?.();
  globalThis.gc?.({ type: 'major', execution: 'sync', flavor: 'last-resort' });
  process.stderr.write(`${JSON.stringify({ bench_memory: process.memoryUsage() })}\n`);
});
await import('../server/bin/orbit.mjs');

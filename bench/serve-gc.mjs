#!/usr/bin/env node
// `orbit serve` for the memory benchmark: the server package's `orbit` command (server/bin/orbit.mjs,
// which runs the sources inside the repository), started with --expose-gc. On SIGUSR2 it runs a
// full, footprint-reducing garbage collection and prints one JSON line with process.memoryUsage(),
// so RSS is read after garbage, not before it.
process.on('SIGUSR2', () => {
  // 'last-resort' collects everything and reduces the heap's footprint (shrinks the young
  // generation), as V8 does under memory pressure; without it RSS depends on past allocation rate.
  globalThis.gc?.({ type: 'major', execution: 'sync', flavor: 'last-resort' });
  process.stderr.write(`${JSON.stringify({ bench_memory: process.memoryUsage() })}\n`);
});
await import('../server/bin/orbit.mjs');

/**
 * @module
 * The fixture as a process, the way a third party's server would run: `node --import tsx main.ts
 * --port N --admin-token-file PATH [--fault NAME]... [--max-connections N]` (faults also from
 * FIXTURE_FAULTS, comma-separated). It writes its admin token to the file (the admin client,
 * admin.mjs, reads it) and prints one line when it listens.
 */
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { parseFaults } from './faults.ts';
import { startFixture } from './server.ts';

const { values } = parseArgs({
  options: {
    port: { type: 'string' },
    'admin-token-file': { type: 'string' },
    fault: { type: 'string', multiple: true },
    'max-connections': { type: 'string' },
  },
});
const faults = parseFaults([...(values.fault ?? []), process.env.FIXTURE_FAULTS ?? ''].flatMap((f) => f.split(',')).filter(Boolean));
const fixture = await startFixture({
  port: Number(values.port ?? 0),
  faults,
  maxConnections: Number(values['max-connections'] ?? 12),
  crash: () => {
    console.error('fixture: a frame above 512 KiB arrived; crashing on purpose (fault crash-on-oversize)');
    process.exit(70);
  },
});
if (values['admin-token-file']) writeFileSync(values['admin-token-file'], fixture.adminToken);
console.log(`fixture listening on ${fixture.url}${faults.size ? ` with faults ${[...faults].join(', ')}` : ''}`);
for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => void fixture.stop().then(() => process.exit(0)));

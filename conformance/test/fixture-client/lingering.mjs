/**
 * A client program that never ends by itself, for test/cli-client-cleanup.test.ts: it starts a
 * child of its own (as an `npx` or `tsx` launcher forks the real program), appends one JSON line
 * `{pid, child, state_dir}` to the file named by LINGERING_RECORD, reports ready and then only
 * waits. Only an end of its process group stops it.
 */
import { spawn } from 'node:child_process';
import { appendFileSync } from 'node:fs';

let text = '';
for await (const chunk of process.stdin) text += chunk;
const config = JSON.parse(text);
const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 60_000)'], { stdio: 'ignore' });
appendFileSync(process.env.LINGERING_RECORD, `${JSON.stringify({ pid: process.pid, child: child.pid, state_dir: config.state_dir })}\n`);
process.stdout.write(`${JSON.stringify({ type: 'ready', stored: [] })}\n`);
setInterval(() => {}, 60_000);

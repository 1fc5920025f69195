/**
 * A publisher command for `publish.method: command`: reads one result request (the body of
 * POST /v1/queues/{queue_id}/results) on stdin and appends it with `orbit publish`, which prints
 * `{event}`. The queue comes from ORBIT_CONFORMANCE_QUEUE_ID; `--database URL` is passed on.
 * `result` and `details` are forwarded as their exact JSON text, so big numbers survive.
 *
 *   publish:
 *     method: command
 *     command: npx tsx examples/publish-with-orbit-cli.ts --database sqlite:/path/orbit.db
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { isRawJson, parseStrict } from '@orbit/spec/codec';

const orbit = fileURLToPath(new URL('../../server/bin/orbit.mjs', import.meta.url));
const body = parseStrict(readFileSync(0, 'utf8'), { raw: [['result'], ['details']] }) as Record<string, unknown>;
const args = [
  orbit,
  'publish',
  '--queue-id',
  process.env.ORBIT_CONFORMANCE_QUEUE_ID ?? '',
  '--type',
  String(body.type),
  '--task-id',
  String(body.task_id),
  '--task-revision',
  String(body.task_revision ?? '1'),
];
if (isRawJson(body.details)) args.push('--details', body.details.text);
if (isRawJson(body.result)) args.push('--result', body.result.text);
if (body.effect_uncertain === true) args.push('--effect-uncertain');
if (typeof body.current_attempt_id === 'string') args.push('--current-attempt-id', body.current_attempt_id);
const database = process.argv.indexOf('--database');
if (database > 0 && process.argv[database + 1]) args.push('--database', process.argv[database + 1]!);
const run = spawnSync(process.execPath, args, { stdio: ['ignore', 'inherit', 'inherit'] });
process.exitCode = run.status ?? 1;

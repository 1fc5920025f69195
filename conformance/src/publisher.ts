/**
 * @module
 * Results come from the task platform, outside the contract; the suite needs some to deliver.
 * Two publishers: the HTTP seam (`POST /v1/queues/{queue_id}/results` with the publisher
 * credential and an Idempotency-Key) or a shell command that receives the same JSON body on stdin
 * and prints the appended event (`{event}`, the `{request_id, data: {event}}` envelope, or the
 * event itself) on stdout.
 */
import { type EventType, type PublishResultRequest, type ResultEvent, validateResultEvent } from '@orbit/generated';
import { parseStrict } from '@orbit/spec/codec';
import type { PublishConfig } from './config.ts';
import { CheckFailure } from './errors.ts';
import type { EvidenceLog } from './evidence.ts';
import { sendHttp } from './http.ts';
import { randomId } from './ids.ts';
import { memberAt } from './members.ts';
import { runCommand, substitute } from './shell.ts';

export type { EventType };

/**
 * One result to publish: the seam's request (`PublishResultRequest`) with `task_id` and
 * `task_revision` defaulted, `details` and `result` as exact JSON text, and the queue.
 */
export type PublishInput = Pick<PublishResultRequest, 'type'> &
  Partial<Pick<PublishResultRequest, 'task_id' | 'task_revision' | 'effect_uncertain' | 'current_attempt_id'>> & {
    /** Exact JSON text of `details` (an object). */
    readonly details?: string;
    /** Exact JSON text of `result` (any JSON value). */
    readonly result?: string;
    /** Default: the primary queue. */
    readonly queueId?: string;
  };

/** The appended event, as the publisher reported it. */
export type PublishedEvent = ResultEvent;

/** The request body as text, with `details` and `result` spliced in verbatim. */
export function publishBody(input: PublishInput, taskId: string): string {
  const parts = [
    `"type":${JSON.stringify(input.type)}`,
    `"task_id":${JSON.stringify(taskId)}`,
    `"task_revision":${JSON.stringify(input.task_revision ?? '1')}`,
  ];
  if (input.details !== undefined) parts.push(`"details":${input.details}`);
  if (input.result !== undefined) parts.push(`"result":${input.result}`);
  if (input.effect_uncertain !== undefined) parts.push(`"effect_uncertain":${input.effect_uncertain}`);
  if (input.current_attempt_id !== undefined) parts.push(`"current_attempt_id":${JSON.stringify(input.current_attempt_id)}`);
  return `{${parts.join(',')}}`;
}

/** The event of `{request_id, data: {event}}`, `{event}` or the event itself, when it is a valid ResultEvent. */
function extractEvent(value: unknown): PublishedEvent | undefined {
  const event = memberAt(value, 'data', 'event') ?? memberAt(value, 'event') ?? value;
  return validateResultEvent(event) ? event : undefined;
}

export interface PublisherDeps {
  readonly config: PublishConfig;
  readonly baseUrl: string;
  readonly publisherToken: string | undefined;
  readonly primaryQueue: string;
  readonly cwd: string;
  readonly vars: Readonly<Record<string, string>>;
  /** Idempotency-Keys are `${keyPrefix}-<random>`, unique per run. */
  readonly keyPrefix?: string;
}

export async function publishResult(deps: PublisherDeps, input: PublishInput, log?: EvidenceLog): Promise<PublishedEvent> {
  const taskId = input.task_id ?? randomId();
  const queueId = input.queueId ?? deps.primaryQueue;
  const body = publishBody(input, taskId);
  const key = `${deps.keyPrefix ?? 'cf-pub'}-${randomId()}`;
  if (deps.config.method === 'http') {
    if (!deps.publisherToken) throw new CheckFailure('publishing over HTTP needs credentials.publisher');
    const res = await sendHttp(
      deps.baseUrl,
      {
        method: 'POST',
        target: `/v1/queues/${queueId}/results`,
        headers: { authorization: `Bearer ${deps.publisherToken}`, 'content-type': 'application/json', 'idempotency-key': key },
        body,
      },
      log,
    );
    const event = res.status === 201 ? extractEvent(res.json) : undefined;
    if (!event) throw new CheckFailure(`setup: publishing a result failed: HTTP ${res.status} ${res.text.slice(0, 300)}`);
    return event;
  }
  const command = substitute(deps.config.command, { ...deps.vars, queue_id: queueId, idempotency_key: key });
  const result = await runCommand(command, {
    cwd: deps.cwd,
    stdin: body,
    env: { ORBIT_CONFORMANCE_QUEUE_ID: queueId, ORBIT_CONFORMANCE_IDEMPOTENCY_KEY: key, ORBIT_CONFORMANCE_BASE_URL: deps.baseUrl },
  });
  log?.add({
    kind: 'publish',
    method: 'command',
    request: log.clean(body),
    response: log.clean(result.stdout),
    ...(result.code !== 0 ? { error: log.clean(`exit ${result.code}: ${result.stderr}`) } : {}),
  });
  if (result.code !== 0) throw new CheckFailure(`setup: the publish command failed (exit ${result.code}): ${result.stderr.slice(0, 300)}`);
  let parsed: unknown;
  try {
    parsed = parseStrict(result.stdout.trim().split('\n').filter(Boolean).pop() ?? '');
  } catch (error) {
    throw new CheckFailure(`setup: the publish command did not print JSON: ${(error as Error).message}: ${result.stdout.slice(0, 300)}`);
  }
  const event = extractEvent(parsed);
  if (!event) throw new CheckFailure(`setup: the publish command printed no event: ${result.stdout.slice(0, 300)}`);
  return event;
}

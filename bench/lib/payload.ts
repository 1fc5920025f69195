/**
 * @module
 * The payload every end-to-end row carries: a result of about 600 bytes of JSON text (`details`
 * plus `result`), and the same text as the JetStream message body, so both systems move the same
 * application bytes.
 */

const filler = (n: number) => 'x'.repeat(n);

/** `details` (a JSON object) and `result` (any JSON value) as exact text; together about 600 bytes. */
export const DETAILS_TEXT = JSON.stringify({ worker: 'bench-worker-01', region: 'local', note: filler(60) });
/** Includes a 20-digit integer that must come back byte-exact (kept as raw text end to end). */
export const RESULT_TEXT = `{"output_uri":"s3://bench-bucket/results/0123456789abcdef0123456789abcdef.json","bytes":12345678901234567890,"checksum":"sha256:${'0'.repeat(64)}","summary":"${filler(300)}"}`;

export const PAYLOAD_BYTES = Buffer.byteLength(DETAILS_TEXT) + Buffer.byteLength(RESULT_TEXT);

/** The JetStream message body: the same application bytes as one Orbit result. */
export const JETSTREAM_BODY = Buffer.from(`{"details":${DETAILS_TEXT},"result":${RESULT_TEXT}}`);

/** The body of `POST /v1/queues/{id}/results` for task `taskId`. */
export function publishBody(taskId: string): string {
  return `{"type":"task.succeeded","task_id":"${taskId}","task_revision":"1","details":${DETAILS_TEXT},"result":${RESULT_TEXT}}`;
}

/** The body of `POST /v1/queues/{id}/results:batch`: one item per `[idempotency key, task id]`, each with the same payload. */
export function batchBody(items: ReadonlyArray<readonly [string, string]>): string {
  const one = ([key, taskId]: readonly [string, string]) =>
    `{"idempotency_key":"${key}","type":"task.succeeded","task_id":"${taskId}","task_revision":"1","details":${DETAILS_TEXT},"result":${RESULT_TEXT}}`;
  return `{"items":[${items.map(one).join(',')}]}`;
}

/**
 * @module
 * A user's consumer and publisher as the crash and topology tests run them: the SDK's example
 * consumer (`client/examples/consume-results.ts`, an Inbox in MySQL or SQLite) as a process of its
 * own, what it stored, and a publish sent again until it is answered.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import mysql from 'mysql2/promise';
import type { HistoryLog } from './history.ts';

const EXAMPLE_CONSUMER = fileURLToPath(new URL('../../client/examples/consume-results.ts', import.meta.url));

/**
 * Starts the example consumer on `url` with JSON output; what it prints goes into `log`. `env`
 * adds or overrides its settings (the example's header lists them).
 */
export function spawnExampleConsumer(
  args: { url: string; token: string; subscriptionId: string; inbox: string; env?: Record<string, string> },
  log: string[],
): ChildProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', EXAMPLE_CONSUMER], {
    env: {
      ...process.env,
      ORBIT_URL: args.url,
      ORBIT_TOKEN: args.token,
      ORBIT_SUBSCRIPTION_ID: args.subscriptionId,
      ORBIT_INBOX: args.inbox,
      ORBIT_CAPACITY: '8',
      ORBIT_PING_INTERVAL_MS: '1000',
      ORBIT_OUTPUT: 'json',
      ...args.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (chunk: Buffer) => log.push(chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => log.push(chunk.toString()));
  return child;
}

/**
 * Publishes one result under `key` until it is answered 201 or 200, each attempt on the next of
 * `urls`: a request that a node refused, or that died with it, goes again (the key makes the
 * repeat safe). Resolves with the answer's body, which `history` records; gives up after
 * `attempts`, saying what the last one got.
 */
export async function publishUntilAnswered(
  urls: readonly string[],
  args: { token: string; queueId: string; key: string; body: unknown; attempts?: number; pauseMs?: number; history?: HistoryLog },
): Promise<any> {
  let last = '';
  let status = 0;
  for (let attempt = 0; attempt < (args.attempts ?? 200); attempt++) {
    status = 0;
    last = await fetch(`${urls[attempt % urls.length]}/v1/queues/${args.queueId}/results`, {
      method: 'POST',
      headers: { authorization: `Bearer ${args.token}`, 'idempotency-key': args.key, 'content-type': 'application/json' },
      body: JSON.stringify(args.body),
      signal: AbortSignal.timeout(10_000),
    }).then(
      async (r) => {
        status = r.status;
        return r.text();
      },
      (error: Error) => `${error.message} ${String(error.cause ?? '')}`,
    );
    if (status === 201 || status === 200) {
      const answer = JSON.parse(last);
      args.history?.published(args.key, answer);
      return answer;
    }
    await new Promise((resolve) => setTimeout(resolve, args.pauseMs ?? 50));
  }
  throw new Error(`${args.key} got no answer: ${status} ${last.slice(0, 300)}`);
}

/** What the example consumer stored in a MySQL Inbox: its business rows, and their distinct event ids. */
export async function handledByExample(inboxUrl: string): Promise<{ rows: number; events: number }> {
  const inbox = await mysql.createConnection({ uri: inboxUrl });
  try {
    const [rows] = await inbox.query<mysql.RowDataPacket[]>(
      'SELECT COUNT(*) AS n, COUNT(DISTINCT event_id) AS events FROM example_results',
    );
    return { rows: Number(rows[0]!.n), events: Number(rows[0]!.events) };
  } finally {
    await inbox.end();
  }
}

/**
 * @module
 * Two questions the runner asks the server outside any case. Is it still there? (Any HTTP answer
 * to `GET /healthz` counts: the seed defines no health route, so only Orbit's own case checks
 * what it says.) And does it run with the timings the configuration declares? The welcome of a
 * session announces `lease_duration_ms` and `heartbeat_interval_ms`; a mismatch would make the
 * expiry and heartbeat cases blame the server for the configuration's mistake, so the run stops
 * before it starts and names the setting to change.
 */
import { type HelloFrame, validateSubscriptionResult } from '@orbit/generated';
import { retireForCleanup } from './cleanup.ts';
import { ConfigError } from './config.ts';
import { CaseContext, type RunEnvironment } from './context.ts';
import { sendHttp } from './http.ts';
import { memberAt } from './members.ts';
import { isWelcome } from './frames.ts';
import type { EventConnection } from './ws.ts';

/** What the suite knows about a server it started itself (spawn mode). */
export interface ServerWatch {
  /** How the process ended (`exit code 1`, `signal SIGKILL`), or null while it runs. */
  exited(): string | null;
  /** The last lines of its stdout and stderr. */
  outputTail(): string;
}

export interface Liveness {
  readonly alive: boolean;
  /** What the probe saw: `GET /healthz -> 200` or the network error. */
  readonly detail: string;
}

/** Probes twice, a quarter of a second apart: one lost connection is not a dead server. */
export async function probeServer(baseUrl: string, server?: ServerWatch): Promise<Liveness> {
  let detail = '';
  for (let attempt = 0; attempt < 2; attempt++) {
    const exited = server?.exited();
    if (exited) return { alive: false, detail: `the server process ended (${exited})` };
    try {
      const res = await sendHttp(baseUrl, { method: 'GET', target: '/healthz', timeoutMs: 2_000 });
      return { alive: true, detail: `GET /healthz -> ${res.status}` };
    } catch (error) {
      detail = `GET /healthz: ${(error as Error).message}`;
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  const exited = server?.exited();
  return { alive: false, detail: exited ? `the server process ended (${exited})` : detail };
}

/** Waits until `GET /healthz` answers 200, for at most `timeoutMs`; returns the last problem when it never does. */
export async function waitReady(baseUrl: string, timeoutMs: number, server?: ServerWatch): Promise<string | null> {
  const deadline = Date.now() + timeoutMs;
  let problem = 'no answer yet';
  for (;;) {
    const exited = server?.exited();
    if (exited) return `the server process ended (${exited}) before GET /healthz answered 200`;
    try {
      const res = await sendHttp(baseUrl, { method: 'GET', target: '/healthz', timeoutMs: 2_000 });
      if (res.status === 200) return null;
      problem = `GET /healthz answered ${res.status}`;
    } catch (error) {
      problem = (error as Error).message;
    }
    if (Date.now() > deadline) return problem;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const ANNOUNCED = [
  { field: 'lease_duration_ms', setting: 'leaseDurationMs' },
  { field: 'heartbeat_interval_ms', setting: 'heartbeatIntervalMs' },
] as const;

/**
 * Opens one session and compares what its welcome announces with `timing`. Throws a ConfigError
 * naming each setting that differs. Returns a note (never throws) when the check itself cannot
 * be made: the cases then find out what is wrong with the server, each with its own evidence.
 */
export async function checkConfiguration(env: RunEnvironment): Promise<string | null> {
  const ctx = new CaseContext(env, 'preflight');
  const timing = env.config.timing;
  try {
    const created = await ctx.post('full', '/v1/subscriptions', ctx.subscriptionBody({ name: ctx.name('cf-preflight') }));
    ctx.ownCreated('full', created);
    // Every case acts as full: a server that does not know its token leaves nothing to test, and
    // the configuration is what is wrong (conformance/README.md, "Before and during the run").
    if (created.status === 401)
      throw new ConfigError(
        `the server refuses credentials.full (HTTP 401 ${created.errorCode ?? ''}): the token is not one of its credentials; ` +
          'give a token that this server issued (was the configuration written for another server or database?)',
      );
    const data = memberAt(created.json, 'data');
    if (created.status !== 201 || !validateSubscriptionResult(data))
      return `the configuration check could not create a subscription (HTTP ${created.status})`;
    const sub = data.subscription;
    const outcome = await ctx.upgrade('full');
    if (outcome.kind !== 'open') return `the configuration check could not connect (HTTP ${outcome.status})`;
    const conn: EventConnection = outcome.conn;
    const hello: HelloFrame['body'] = { subscription_id: sub.id, capacity: 1 };
    conn.send('events.hello', hello);
    // Any welcome will do: whether it names the hello in reply_to is a case's business.
    const welcome = await conn.poll(isWelcome, ctx.replyMs).catch(() => null);
    if (welcome?.type !== 'events.welcome') return 'the configuration check received no events.welcome';
    const wrong = ANNOUNCED.filter((a) => welcome.body[a.field] !== timing[a.setting]).map(
      (a) =>
        `the server's welcome announces ${a.field} ${welcome.body[a.field]}, but the configuration says timing.${a.setting}: ` +
        `${timing[a.setting]}; ` +
        `set timing.${a.setting}: ${welcome.body[a.field]} (or start the server with ${timing[a.setting]} ms)`,
    );
    if (wrong.length > 0) throw new ConfigError(`the configuration does not match the server:\n  ${wrong.join('\n  ')}`);
    return null;
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    return `the configuration check could not be made: ${(error as Error).message}`;
  } finally {
    await ctx.teardown(retireForCleanup).catch(() => {});
  }
}

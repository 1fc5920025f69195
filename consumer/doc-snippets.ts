/**
 * The code the documentation shows, run as a user would: every TypeScript file that a page of
 * `SNIPPET_PAGES` (scripts/doc-snippets.ts) splices in is copied into the blank project that
 * consumer.test.ts installed from the tarballs, compiled there by a strict `tsc` with
 * `exactOptionalPropertyTypes`, and each program runs twice in a row with plain `node`. A program
 * must succeed both times: a snippet that creates something at start has to find it on its second
 * run. A snippet file without a plan here fails the test, so a new one cannot go unrun.
 */
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { publish } from '@orbit/testing';
import { runningServerConfig } from '../conformance/test/target.ts';
import { snippetFiles } from '../scripts/doc-snippets.ts';

/** What a snippet run gets: the server, a credential with every permission, and a directory of its own. */
export interface SnippetContext {
  readonly url: string;
  readonly token: string;
  readonly queueId: string;
  /** The project the tarballs were installed into. */
  readonly project: string;
  /** The server's database URL (for the commands of a conformance configuration). */
  readonly database: string;
  /** A directory for this snippet's files (Inbox, key file, configuration); the same for both runs. */
  readonly dir: string;
  /** A new subscription of the queue (for the snippets that consume one). */
  subscription(): Promise<string>;
  /** A free port on 127.0.0.1. */
  port(): Promise<number>;
}

export interface SnippetPlan {
  /** The environment of both runs (prepared once). */
  env(ctx: SnippetContext): Promise<Record<string, string>>;
  /** Before each run (for example: publish a result for it to consume). */
  before?(ctx: SnippetContext): Promise<void>;
  /** While the run is going, every 300 ms (for example: publish until it consumed one). */
  during?(ctx: SnippetContext): Promise<void>;
  /** When its output says so, the run gets SIGTERM: the way its user stops it. */
  until?(stdout: string): boolean;
  readonly timeoutMs?: number;
  /** What each run must have printed; `run` is 1 or 2, `first` the first run's stdout. */
  check(stdout: string, run: 1 | 2, first: string): void;
}

/** Files that pages show as declarations of the packages, not programs: compiled with the package, not run. */
export const DECLARATIONS = ['client/src/inbox/types.ts'];

const lines = (stdout: string): string[] => stdout.trim().split('\n');
const lastJson = (stdout: string): Record<string, unknown> => JSON.parse(lines(stdout).at(-1)!);
function expectThat(condition: boolean, what: string, stdout: string): void {
  if (!condition) throw new Error(`${what}; it printed:\n${stdout}`);
}

const base = (ctx: SnippetContext): Record<string, string> => ({ ORBIT_URL: ctx.url, ORBIT_TOKEN: ctx.token, ORBIT_QUEUE_ID: ctx.queueId });
const publishOne = (ctx: SnippetContext): Promise<void> => publish(ctx.url, ctx.token, ctx.queueId, 1);
const consuming = async (ctx: SnippetContext): Promise<Record<string, string>> => ({
  ...base(ctx),
  ORBIT_SUBSCRIPTION_ID: await ctx.subscription(),
  INBOX_PATH: join(ctx.dir, 'inbox.db'),
});

/** By the file's name in the repository. */
export const SNIPPET_PLANS: Record<string, SnippetPlan> = {
  'client/examples/snippets/imports.ts': {
    env: async () => ({}),
    check: (out) => expectThat(lastJson(out).loaded === 6, 'imports: six exports loaded', out),
  },
  'client/examples/snippets/management.ts': {
    env: async (ctx) => base(ctx),
    check: (out, run, first) => {
      const { id, created } = lastJson(out);
      if (run === 2)
        expectThat(created === false && id === lastJson(first).id, 'ensure: the second run finds the first run’s subscription', out);
      else expectThat(typeof id === 'string', 'ensure: a subscription', out);
    },
  },
  'client/examples/snippets/create-with-key.ts': {
    env: async (ctx) => ({ ...base(ctx), KEY_FILE: join(ctx.dir, 'create-key.txt') }),
    check: (out, run, first) =>
      expectThat(
        run === 1 ? lastJson(out).deduplicated === false : lastJson(out).deduplicated === true && lastJson(out).id === lastJson(first).id,
        'create with a persisted key: created, then replayed',
        out,
      ),
  },
  'client/examples/snippets/publish-batch.ts': {
    env: async (ctx) => base(ctx),
    check: (out) => expectThat(JSON.stringify(lastJson(out)) === '{"appended":2,"replayed":2}', 'batch: two appended, two replayed', out),
  },
  'client/examples/snippets/event-connection.ts': {
    env: async (ctx) => ({ ...(await consuming(ctx)), ORBIT_STOP_AFTER: '1' }),
    before: publishOne,
    check: (out) => expectThat(/^acknowledged [0-9a-f]{32} at /m.test(out), 'event connection: one event acknowledged', out),
  },
  'client/examples/snippets/consumer.ts': {
    env: consuming,
    before: publishOne,
    until: (out) => lines(out).includes('acked'),
    check: (out) =>
      expectThat(
        ['handled', 'acked', 'stopped'].every((l) => lines(out).includes(l)),
        'consumer: handled, acked, stopped',
        out,
      ),
  },
  'client/examples/snippets/logging.ts': {
    env: consuming,
    check: (out) => expectThat(lastJson(out).message === 'consumer: stopped', 'logging: the last entry is the stop', out),
  },
  'client/examples/snippets/signal.ts': {
    env: consuming,
    until: (out) => lines(out).includes('connected'),
    check: (out) => expectThat(lines(out).join() === 'connected,stopped stopped', 'signal: connected, then stopped by the abort', out),
  },
  'client/examples/snippets/token-provider.ts': {
    env: async (ctx) => {
      const tokenFile = join(ctx.dir, 'token');
      writeFileSync(tokenFile, `${ctx.token}\n`);
      return { ...(await consuming(ctx)), TOKEN_FILE: tokenFile };
    },
    until: (out) => lines(out).some((l) => l.startsWith('listed ')),
    check: (out) =>
      expectThat(/^connected\nlisted \d+$/.test(out.trim()), 'token provider: connected and listed with the file’s token', out),
  },
  'client/examples/snippets/quickstart.ts': {
    env: async (ctx) => ({ ...base(ctx), INBOX_PATH: join(ctx.dir, 'inbox.db') }),
    // Its subscription starts at the head when the first run creates it: publish until it consumed one.
    during: publishOne,
    until: (out) => /^task\.succeeded [0-9a-f]{32}$/m.test(out),
    check: (out) => expectThat(/^task\.succeeded [0-9a-f]{32}$/m.test(out), 'quickstart: a result consumed', out),
  },
  'server/examples/embed-in-hono.ts': {
    env: async (ctx) => ({ PORT: String(await ctx.port()), ORBIT_DATABASE_URL: `sqlite:${join(ctx.dir, 'embedded.db')}` }),
    until: (out) => out.includes('Orbit on http://'),
    check: (out) => expectThat(out.includes('/orbit'), 'embedding: served, then stopped by SIGTERM', out),
  },
  'conformance/examples/library.ts': {
    // It reads ./conformance.yaml (JSON is YAML): the configuration of the running server.
    env: async (ctx) => {
      const config = runningServerConfig(ctx.url, join(ctx.project, 'node_modules/.bin/orbit'), ctx.database);
      writeFileSync(join(ctx.dir, 'conformance.yaml'), JSON.stringify(config));
      return {};
    },
    timeoutMs: 300_000,
    check: (out) => expectThat(/^\d+ passed, 0 failed/m.test(out), 'the suite as a library: the ack cases pass', out),
  },
};

/** The snippet programs: every TypeScript file the pages show, except declarations. */
export function snippetPrograms(): string[] {
  return snippetFiles().filter((file) => file.endsWith('.ts') && !DECLARATIONS.includes(file));
}

/** The compiled program of a snippet file, relative to the project. */
export const compiledSnippet = (file: string): string => join('out-snippets', basename(file).replace(/\.ts$/, '.js'));

/**
 * Copies the snippet programs into `project/snippets/` with the strict tsconfig
 * (consumer/fixture/tsconfig.snippets.json); the caller runs `tsc -p tsconfig.snippets.json`.
 */
export function copySnippets(repo: string, project: string): void {
  mkdirSync(join(project, 'snippets'), { recursive: true });
  for (const file of snippetPrograms()) copyFileSync(join(repo, file), join(project, 'snippets', basename(file)));
  copyFileSync(join(repo, 'consumer/fixture/tsconfig.snippets.json'), join(project, 'tsconfig.snippets.json'));
}

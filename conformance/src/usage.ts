/**
 * @module
 * The commands of `orbit-conformance` and their options, declared once: the parser (node:util's
 * parseArgs) and every help text (`orbit-conformance --help`, `orbit-conformance COMMAND --help`)
 * are made from these declarations, so the help cannot list an option the parser refuses.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { EXIT } from './exit-codes.ts';

interface OptionSpec {
  readonly type: 'string' | 'boolean';
  readonly multiple?: boolean;
  /** The value's name in the help (`FILE`, `N`). */
  readonly value?: string;
  readonly help: string;
}

interface CommandSpec {
  readonly summary: string;
  /** What follows `orbit-conformance NAME` in the usage line. */
  readonly synopsis: string;
  readonly options: Readonly<Record<string, OptionSpec>>;
  readonly notes?: readonly string[];
}

const SELECTION = {
  profile: { type: 'string', value: 'NAME', help: "seed (default): the seed's rules only; orbit: also Orbit's own choices and extensions" },
  only: { type: 'string', multiple: true, value: 'PATTERN', help: 'only matching case ids (* wildcard; repeat or comma-separate)' },
} as const satisfies Record<string, OptionSpec>;

const EXIT_CODES =
  `exit code: ${EXIT.ok} when nothing unexpected failed; ${EXIT.failed} when something did; ${EXIT.usage} on a usage, ` +
  `configuration or setup error (also timings that do not match the server); ${EXIT.serverGone} when the server stopped ` +
  'answering during the run';

/** Every command, in the order the overview lists them. */
export const COMMANDS = {
  run: {
    summary: 'run the suite against the configured server (the default command)',
    synopsis: '--config FILE [options]',
    options: {
      config: { type: 'string', value: 'FILE', help: 'JSON or YAML configuration (conformance/README.md)' },
      ...SELECTION,
      skip: {
        type: 'string',
        multiple: true,
        value: 'PATTERN',
        help: 'report matching cases as skipped without running them (repeatable)',
      },
      'known-failing': {
        type: 'string',
        value: 'FILE',
        help: 'expected failures: a case-id pattern and the /message pattern/ or kind it fails with, # reason',
      },
      'known-flaky': {
        type: 'string',
        value: 'FILE',
        help: 'cases known to fail now and then (same format); such a failure does not fail the run',
      },
      strict: { type: 'boolean', help: 'a SHOULD that is not met (non-strict) fails the run too' },
      'wait-ready': {
        type: 'string',
        value: 'SECONDS',
        help: 'wait up to SECONDS for GET /healthz to answer 200 (a server that is still starting)',
      },
      seed: { type: 'string', value: 'N', help: 'seed of the property cases (replays a failing run)' },
      'num-runs': { type: 'string', value: 'N', help: 'runs per property case (default: numRuns of the config, else 25)' },
      'report-dir': { type: 'string', value: 'DIR', help: 'write summary.txt, report.json, junit.xml and report.html there' },
      list: { type: 'boolean', help: 'print the case catalogue of the profile and exit (the list command)' },
    },
    notes: [
      'Without a command, orbit-conformance runs: `orbit-conformance --config FILE` is `orbit-conformance run --config FILE`.',
      'For an Orbit server, `npx orbit conformance-config` creates the credentials and queues and writes FILE.',
      EXIT_CODES,
    ],
  },
  client: {
    summary: 'certify a client: play the server and drive the client program the configuration names',
    synopsis: '--config FILE [options]',
    options: {
      config: {
        type: 'string',
        value: 'FILE',
        help: 'JSON or YAML: the client command and timings (conformance/README.md, Certify your client)',
      },
      only: SELECTION.only,
      skip: {
        type: 'string',
        multiple: true,
        value: 'PATTERN',
        help: 'report matching cases as skipped without running them (repeatable)',
      },
      'known-failing': { type: 'string', value: 'FILE', help: 'expected failures, in the format of run' },
      'known-flaky': { type: 'string', value: 'FILE', help: 'cases known to fail now and then (same format)' },
      strict: { type: 'boolean', help: 'a SHOULD that is not met (non-strict) fails the run too' },
      'report-dir': { type: 'string', value: 'DIR', help: 'write summary.txt, report.json, junit.xml and report.html there' },
      parallel: { type: 'string', value: 'N', help: 'run N cases at once (default 1; each case has its own server and state)' },
      list: { type: 'boolean', help: 'print the client-mode catalogue and exit' },
    },
    notes: [
      'The client program gets a harness config on stdin and reports on stdout (conformance/harness.schema.json).',
      EXIT_CODES.replace('the server stopped answering during the run', 'not used in client mode'),
    ],
  },
  list: {
    summary: 'print the case catalogue of a profile: id, level, profile, citations, title',
    synopsis: '[options]',
    options: SELECTION,
  },
} as const satisfies Record<string, CommandSpec>;

export type CommandName = keyof typeof COMMANDS;

export function isCommand(name: string): name is CommandName {
  return Object.hasOwn(COMMANDS, name);
}

/** `-h` or `--help` anywhere before a `--`. */
export function asksForHelp(args: readonly string[]): boolean {
  const end = args.indexOf('--');
  return (end === -1 ? args : args.slice(0, end)).some((a) => a === '--help' || a === '-h');
}

/** The version of this package (its package.json, one level above both `src/` and `dist/`). */
export function version(): string {
  return (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;
}

const flag = (name: string, spec: OptionSpec): string => (spec.type === 'string' ? `--${name} ${spec.value ?? 'VALUE'}` : `--${name}`);

const WIDTH = 100;

/** `text` in lines of at most WIDTH columns, the lines after the first indented by `indent`. */
function wrap(text: string, indent = 0): string {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (line && indent + line.length + 1 + word.length > WIDTH) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push(line);
  return lines.join(`\n${' '.repeat(indent)}`);
}

const optionLine = (left: string, help: string): string => `  ${left.padEnd(24)} ${wrap(help, 27)}`;

/** The help of one command: usage line, summary, options, notes. */
export function commandUsage(name: CommandName): string {
  const spec: CommandSpec = COMMANDS[name];
  return [
    `usage: orbit-conformance ${name} ${spec.synopsis}`,
    '',
    spec.summary,
    '',
    'options:',
    ...Object.entries(spec.options).map(([option, o]) => optionLine(flag(option, o), o.help)),
    optionLine('-h, --help', 'print this help'),
    ...(spec.notes ?? []).flatMap((note) => ['', wrap(note)]),
  ].join('\n');
}

/** `orbit-conformance --help`: every command with its summary. */
export function overview(): string {
  return [
    'usage: orbit-conformance [run] --config FILE [options]',
    '       orbit-conformance COMMAND [options]',
    '       orbit-conformance COMMAND --help | help COMMAND | --help | --version',
    '',
    'The conformance suite of orbit.events.v1 and the Orbit management API (conformance/README.md).',
    '',
    'commands:',
    ...Object.entries(COMMANDS).map(([name, spec]) => optionLine(name, spec.summary)),
    '',
    wrap(EXIT_CODES),
  ].join('\n');
}

/** Parses `args` strictly against the command's options (parseArgs' ERR_PARSE_ARGS_* errors for anything else). */
export function parseCommand<N extends CommandName>(name: N, args: readonly string[]) {
  const options = Object.fromEntries(
    Object.entries(COMMANDS[name].options as Readonly<Record<string, OptionSpec>>).map(([option, o]) => [
      option,
      { type: o.type, ...(o.multiple ? { multiple: true } : {}) },
    ]),
  );
  return parseArgs({ args: [...args], options, strict: true }).values as {
    [K in keyof (typeof COMMANDS)[N]['options']]?: (typeof COMMANDS)[N]['options'][K] extends { type: 'boolean' }
      ? boolean
      : (typeof COMMANDS)[N]['options'][K] extends { multiple: true }
        ? string[]
        : string;
  };
}

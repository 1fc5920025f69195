/**
 * @module
 * What a command is and how it explains itself. A command declares its forms (one, or one per
 * subcommand such as `credentials rotate`), and each form its options once: the parser
 * (`parseForm`, node:util's parseArgs) and the usage text (`formUsage`, `overview`) are both made
 * from that declaration, so the help cannot list an option the parser refuses or miss one it takes.
 *
 * A mistake in the command line, or a request the database refuses (an unknown id), is a
 * `UsageError`: the CLI prints the message and exits with 2, having written nothing.
 */
import { parseArgs } from 'node:util';

export class UsageError extends Error {
  override readonly name = 'UsageError';
  /** Whether the command's synopsis follows the message (not for refusals the database decided). */
  readonly showUsage: boolean;

  constructor(message: string, options: { showUsage?: boolean } = {}) {
    super(message);
    this.showUsage = options.showUsage ?? true;
  }
}

/** One option of a form: how the parser reads it and how the help shows it. */
export interface OptionSpec {
  readonly type: 'string' | 'boolean';
  readonly multiple?: boolean;
  /** The value's name in the help (`N`, `FILE`); string options only. */
  readonly value?: string;
  readonly default?: string;
  /** Shown in the synopsis, outside brackets. The command itself checks that it is there. */
  readonly required?: boolean;
  readonly help: string;
}

export type Options = Readonly<Record<string, OptionSpec>>;

/** One way to call a command. */
export interface Form {
  /** `serve`, or `credentials rotate` for a subcommand. */
  readonly name: string;
  /** One line, lower case, no full stop: the overview's and the help's first line. */
  readonly summary: string;
  /** The positional arguments as the synopsis shows them (`CREDENTIAL_ID`); none when absent. */
  readonly positionals?: string;
  readonly options: Options;
  /** Paragraphs after the option list. */
  readonly notes?: readonly string[];
}

/** A command of `orbit`: adding one is one entry in main.ts's list. */
export interface Command {
  readonly name: string;
  readonly summary: string;
  readonly forms: readonly Form[];
  run(args: string[]): Promise<void>;
}

/** A command with a single form: its name and summary are the form's. */
export function command(form: Form, run: (args: string[]) => Promise<void>): Command {
  return { name: form.name, summary: form.summary, forms: [form], run };
}

type ValueOf<S extends OptionSpec> = S['type'] extends 'boolean'
  ? S['multiple'] extends true
    ? boolean[]
    : boolean
  : S['multiple'] extends true
    ? string[]
    : string;

/** What `parseForm` read: each option's value, undefined when absent (and without a default). */
export type Values<O extends Options> = { -readonly [K in keyof O]?: ValueOf<O[K]> };

/** Parses `args` strictly against the form's options: parseArgs' ERR_PARSE_ARGS_* errors for anything it does not declare. */
export function parseForm<const O extends Options>(
  form: Omit<Form, 'options'> & { readonly options: O },
  args: readonly string[],
): { values: Values<O>; positionals: string[] } {
  const options: Record<string, { type: 'string' | 'boolean'; multiple?: boolean; default?: string }> = {};
  for (const [name, spec] of Object.entries(form.options)) {
    options[name] = {
      type: spec.type,
      ...(spec.multiple ? { multiple: true } : {}),
      ...(spec.default !== undefined ? { default: spec.default } : {}),
    };
  }
  const { values, positionals } = parseArgs({ args: [...args], options, strict: true, allowPositionals: form.positionals !== undefined });
  return { values: values as Values<O>, positionals };
}

/** `-h` or `--help` before any `--`: the command prints its help instead of running. */
export function asksForHelp(args: readonly string[]): boolean {
  const end = args.indexOf('--');
  return (end === -1 ? args : args.slice(0, end)).some((a) => a === '--help' || a === '-h');
}

const WIDTH = 100;
/** The column where option descriptions start. */
const COLUMN = 30;

/** Markdown code spans (the settings table's) read as plain text in a terminal. */
const plain = (text: string): string => text.replace(/`/g, '');

function wrap(text: string, indent: number, first = indent): string[] {
  const lines: string[] = [];
  let line = '';
  let room = WIDTH - first;
  for (const word of plain(text).split(/\s+/).filter(Boolean)) {
    if (line && line.length + 1 + word.length > room) {
      lines.push(line);
      line = word;
      room = WIDTH - indent;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push(line);
  return lines;
}

function flagText(name: string, spec: OptionSpec): string {
  return spec.type === 'string' ? `--${name} ${spec.value ?? 'VALUE'}` : `--${name}`;
}

/** `orbit credentials rotate CREDENTIAL_ID --grace... [options]`: the required options, then the rest as [options]. */
export function synopsis(form: Form): string {
  const required = Object.entries(form.options)
    .filter(([, spec]) => spec.required)
    .map(([name, spec]) => (spec.multiple ? `${flagText(name, spec)} [${flagText(name, spec)} ...]` : flagText(name, spec)));
  const optional = Object.values(form.options).some((spec) => !spec.required);
  return ['orbit', form.name, form.positionals, ...required, optional ? '[options]' : undefined].filter(Boolean).join(' ');
}

function optionLine(flag: string, help: string): string {
  const head = `  ${flag}`;
  if (head.length + 2 > COLUMN) return [head, ...wrap(help, COLUMN).map((l) => ' '.repeat(COLUMN) + l)].join('\n');
  const [first = '', ...rest] = wrap(help, COLUMN);
  return [head.padEnd(COLUMN) + first, ...rest.map((l) => ' '.repeat(COLUMN) + l)].join('\n');
}

/** The help of one form: synopsis, summary, every option with its help, then the notes. */
export function formUsage(form: Form): string {
  const options = Object.entries(form.options).map(([name, spec]) => {
    const extra = spec.default !== undefined ? ` Default: ${spec.default}.` : '';
    return optionLine(flagText(name, spec), `${spec.help}${extra}`);
  });
  options.push(optionLine('-h, --help', 'Print this help.'));
  const notes = (form.notes ?? []).map((note) => wrap(note, 0).join('\n'));
  return [
    `usage: ${synopsis(form)}`,
    '',
    ...wrap(`${form.summary[0]!.toUpperCase()}${form.summary.slice(1)}.`, 0),
    '',
    'options:',
    ...options,
    ...notes.flatMap((n) => ['', n]),
  ].join('\n');
}

/** The help of a command: each of its forms. */
export function commandUsage(command: Command): string {
  return command.forms.map(formUsage).join('\n\n');
}

/** What a usage error prints after its message: the synopses and where the help is. */
export function usageHint(command: Command): string {
  return [...command.forms.map((f) => `usage: ${synopsis(f)}`), `Run \`orbit ${command.name} --help\` for its options.`].join('\n');
}

/** `orbit --help`: every command with its summary. */
export function overview(commands: readonly Command[]): string {
  const width = Math.max(...commands.map((c) => c.name.length)) + 3;
  return [
    'usage: orbit COMMAND [options]',
    '',
    'commands:',
    ...commands.map((c) => `  ${c.name.padEnd(width)}${c.summary}`),
    '',
    ...wrap(
      '`orbit COMMAND --help` prints the options of a command. Every setting can be given as a flag, an ORBIT_* environment ' +
        'variable or a key of the --config file (JSON or YAML), in that order of precedence: see `orbit settings --markdown` ' +
        'and docs/operations.md. Exit codes: 0 success, 1 a failure at run time (the database cannot be opened or reached), ' +
        '2 a usage or settings error.',
      0,
    ),
  ].join('\n');
}

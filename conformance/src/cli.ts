/**
 * @module
 * `orbit-conformance [run] --config FILE [options]`: runs the suite against the configured server
 * (starting it first in spawn mode), prints progress and the summary, writes the reports, and
 * exits with one of the codes of `EXIT`. `orbit-conformance list` prints the catalogue; `--help`,
 * `COMMAND --help` and `--version` explain the command (the options are declared in usage.ts).
 */
import { PROFILES, type Profile } from './case.ts';
import { ALL_CASES } from './cases/index.ts';
import { ConfigError, loadConfig } from './config.ts';
import { EXIT } from './exit-codes.ts';
import { KnownFailingError, loadKnownFailing } from './known-failing.ts';
import { renderOutcome, resultLine, writeReports } from './reports/index.ts';
import { matchesAny } from './patterns.ts';
import { runSuite, selectCases } from './runner.ts';
import { interruptible } from './interrupt.ts';
import { prepareTarget, SetupError } from './setup.ts';
import { CLIENT_CASES, loadClientConfig, runClientSuite } from './client/index.ts';
import { asksForHelp, type CommandName, commandUsage, isCommand, overview, parseCommand, version } from './usage.ts';

function integer(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^[0-9]{1,10}$/.test(value)) throw new ConfigError(`--${name} must be a non-negative integer`);
  return Number(value);
}

function patterns(values: readonly string[] | undefined): string[] {
  return (values ?? [])
    .flatMap((p) => p.split(','))
    .map((p) => p.trim())
    .filter(Boolean);
}

function listCases(only: string[], profile: Profile): void {
  for (const c of selectCases(ALL_CASES, only, profile))
    console.log(
      `${c.id.padEnd(48)} ${c.level.padEnd(6)} ${c.profile.padEnd(5)} ${c.cites
        .map((x) => x.ref)
        .join(',')
        .padEnd(14)} ${c.title}`,
    );
}

/** `orbit-conformance client --config FILE`: client mode, with server mode's reports, ratchet and exit codes. */
async function client(args: string[]): Promise<number> {
  let values: ReturnType<typeof parseCommand<'client'>>;
  try {
    values = parseCommand('client', args);
  } catch (error) {
    console.error(`orbit-conformance: ${(error as Error).message}\n\n${commandUsage('client')}`);
    return EXIT.usage;
  }
  const only = patterns(values.only);
  if (values.list) {
    for (const c of CLIENT_CASES.filter((x) => only.length === 0 || matchesAny(x.id, only)))
      console.log(
        `${c.id.padEnd(48)} ${c.level.padEnd(6)} ${c.cites
          .map((x) => x.ref)
          .join(',')
          .padEnd(14)} ${c.title}`,
      );
    return EXIT.ok;
  }
  if (!values.config) {
    console.error(`orbit-conformance: --config is required\n\n${commandUsage('client')}`);
    return EXIT.usage;
  }
  try {
    const env = loadClientConfig(values.config);
    const knownFailing = values['known-failing'] ? loadKnownFailing(values['known-failing']) : [];
    const knownFlaky = values['known-flaky'] ? loadKnownFailing(values['known-flaky']) : [];
    if (only.length > 0 && !CLIENT_CASES.some((c) => matchesAny(c.id, only)))
      throw new ConfigError(`--only ${only.join(',')} matches no client case`);
    const parallel = integer(values.parallel, 'parallel') ?? 1;
    const target = env.program.command.join(' ');
    console.log(`running the client cases against: ${target}`);
    const report = await runClientSuite({
      cases: CLIENT_CASES,
      env,
      only,
      skip: patterns(values.skip),
      strict: values.strict === true,
      knownFailing,
      knownFlaky,
      target,
      concurrency: Math.max(1, parallel),
      onResult: (result) => console.log(resultLine(result)),
    });
    if (values['report-dir']) console.log(`\nreports: ${Object.values(writeReports(report, values['report-dir'])).join(', ')}`);
    process.stdout.write(`\n${renderOutcome(report)}`);
    return report.ok ? EXIT.ok : EXIT.failed;
  } catch (error) {
    if (error instanceof ConfigError || error instanceof KnownFailingError) {
      console.error(`orbit-conformance: ${error.message}`);
      return EXIT.usage;
    }
    throw error;
  }
}

/**
 * Runs the command of `argv` and returns its exit code. On SIGINT or SIGTERM both modes end what
 * they started (spawn mode's server, client mode's client programs, their temp directories) and
 * exit with 128 + the signal's number (interrupt.ts).
 */
export function main(argv: string[]): Promise<number> {
  return interruptible(() => dispatch(argv));
}

async function dispatch(argv: string[]): Promise<number> {
  const [first = '', ...rest] = argv;
  if (first === '--version' || first === 'version') {
    console.log(`orbit-conformance ${version()}`);
    return EXIT.ok;
  }
  if (first === '--help' || first === '-h' || first === 'help') {
    const topic = first === 'help' ? rest[0] : undefined;
    if (topic !== undefined && !isCommand(topic)) {
      console.error(`orbit-conformance: unknown command "${topic}"\n\n${overview()}`);
      return EXIT.usage;
    }
    console.log(topic === undefined ? overview() : commandUsage(topic));
    return EXIT.ok;
  }
  // Without a command the suite runs (`orbit-conformance --config FILE`).
  const command: CommandName | undefined = isCommand(first) ? first : first === '' || first.startsWith('-') ? 'run' : undefined;
  if (command === undefined) {
    console.error(`orbit-conformance: unknown command "${first}"\n\n${overview()}`);
    return EXIT.usage;
  }
  const args = isCommand(first) ? rest : argv;
  if (asksForHelp(args)) {
    console.log(commandUsage(command));
    return EXIT.ok;
  }
  if (command === 'client') return client(args);
  let values: ReturnType<typeof parseCommand<'run'>>;
  try {
    values = parseCommand(command, args);
  } catch (error) {
    console.error(`orbit-conformance: ${(error as Error).message}\n\n${commandUsage(command)}`);
    return EXIT.usage;
  }
  const profile = (values.profile ?? 'seed') as Profile;
  if (!PROFILES.includes(profile)) {
    console.error(`orbit-conformance: --profile must be one of ${PROFILES.join(', ')}`);
    return EXIT.usage;
  }
  const only = patterns(values.only);
  const skip = patterns(values.skip);
  if (command === 'list' || values.list) {
    listCases(only, profile);
    return EXIT.ok;
  }
  if (!values.config) {
    console.error(`orbit-conformance: --config is required\n\n${commandUsage('run')}`);
    return EXIT.usage;
  }
  let target: Awaited<ReturnType<typeof prepareTarget>> | undefined;
  try {
    const config = loadConfig(values.config);
    const knownFailing = values['known-failing'] ? loadKnownFailing(values['known-failing']) : [];
    const knownFlaky = values['known-flaky'] ? loadKnownFailing(values['known-flaky']) : [];
    const seed = integer(values.seed, 'seed');
    const numRuns = integer(values['num-runs'], 'num-runs');
    const waitReady = integer(values['wait-ready'], 'wait-ready');
    const selected = selectCases(ALL_CASES, only, profile);
    if (only.length > 0 && selected.length === 0)
      throw new ConfigError(`--only ${only.join(',')} matches no case of the ${profile} profile`);
    target = await prepareTarget(config, {
      ...(seed !== undefined ? { seed } : {}),
      ...(numRuns !== undefined ? { numRuns } : {}),
      ...(waitReady !== undefined ? { waitReadyMs: waitReady * 1000 } : {}),
      progress: (line) => console.log(line),
    });
    console.log(
      `running ${selected.length} cases of the ${profile} profile against ${target.env.config.baseUrl} (seed ${target.env.seed})`,
    );
    let area = '';
    const report = await runSuite({
      cases: ALL_CASES,
      env: target.env,
      profile,
      only,
      skip,
      strict: values.strict === true,
      knownFailing,
      knownFlaky,
      ...(target.server ? { server: target.server } : {}),
      onResult(result) {
        if (result.area !== area) {
          area = result.area;
          console.log(area);
        }
        console.log(resultLine(result));
      },
    });
    if (values['report-dir']) {
      const paths = writeReports(report, values['report-dir']);
      console.log(`\nreports: ${Object.values(paths).join(', ')}`);
    }
    process.stdout.write(`\n${renderOutcome(report)}`);
    return report.aborted ? EXIT.serverGone : report.ok ? EXIT.ok : EXIT.failed;
  } catch (error) {
    if (error instanceof ConfigError || error instanceof KnownFailingError || error instanceof SetupError) {
      console.error(`orbit-conformance: ${error.message}`);
      return EXIT.usage;
    }
    throw error;
  } finally {
    await target?.stop();
  }
}

/**
 * @module
 * `orbit-conformance --config FILE [--profile seed|orbit] [--only PATTERN]... [--skip PATTERN]...
 * [--known-failing FILE] [--known-flaky FILE] [--strict] [--wait-ready SECONDS] [--seed N]
 * [--num-runs N] [--report-dir DIR] [--list]`: runs the suite against the configured server
 * (starting it first in spawn mode), prints progress and the summary, writes the reports, and
 * exits with one of the codes of `EXIT`.
 */
import { parseArgs } from 'node:util';
import { PROFILES, type Profile } from './case.ts';
import { ALL_CASES } from './cases/index.ts';
import { ConfigError, loadConfig } from './config.ts';
import { EXIT } from './exit-codes.ts';
import { KnownFailingError, loadKnownFailing } from './known-failing.ts';
import { renderOutcome, resultLine, writeReports } from './reports/index.ts';
import { runSuite, selectCases } from './runner.ts';
import { prepareTarget, SetupError } from './setup.ts';

const USAGE = `usage: orbit-conformance --config FILE [options]

  --config FILE          JSON or YAML configuration (see conformance/README.md)
  --profile NAME         seed (default): the seed's rules only; orbit: also Orbit's own choices and extensions
  --only PATTERN         run only matching case ids (* wildcard; repeat or comma-separate)
  --skip PATTERN         report matching cases as skipped without running them (repeatable)
  --known-failing FILE   expected failures: a case-id pattern and the /message pattern/ or kind it fails with, # reason
  --known-flaky FILE     cases known to fail now and then (same format); such a failure does not fail the run
  --strict               a SHOULD that is not met (non-strict) fails the run too
  --wait-ready SECONDS   wait up to SECONDS for GET /healthz to answer 200 (a server that is still starting)
  --seed N               seed of the property cases (replays a failing run)
  --num-runs N           runs per property case (default: numRuns of the config, else 25)
  --report-dir DIR       write summary.txt, report.json, junit.xml and report.html there
  --list                 print the case catalogue of the profile and exit
  --help                 this text

exit code: ${EXIT.ok} when nothing unexpected failed; ${EXIT.failed} when something did; ${EXIT.usage} on a usage, configuration or
setup error (also timings that do not match the server); ${EXIT.serverGone} when the server stopped answering during the run`;

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

function parseCli(argv: string[]) {
  return parseArgs({
    args: argv,
    options: {
      config: { type: 'string' },
      profile: { type: 'string' },
      seed: { type: 'string' },
      'num-runs': { type: 'string' },
      'known-failing': { type: 'string' },
      'known-flaky': { type: 'string' },
      'report-dir': { type: 'string' },
      'wait-ready': { type: 'string' },
      only: { type: 'string', multiple: true },
      skip: { type: 'string', multiple: true },
      strict: { type: 'boolean' },
      list: { type: 'boolean' },
      help: { type: 'boolean' },
    },
    strict: true,
  }).values;
}

export async function main(argv: string[]): Promise<number> {
  let values: ReturnType<typeof parseCli>;
  try {
    values = parseCli(argv);
  } catch (error) {
    console.error(`orbit-conformance: ${(error as Error).message}\n\n${USAGE}`);
    return EXIT.usage;
  }
  if (values.help) {
    console.log(USAGE);
    return EXIT.ok;
  }
  const profile = (values.profile ?? 'seed') as Profile;
  if (!PROFILES.includes(profile)) {
    console.error(`orbit-conformance: --profile must be one of ${PROFILES.join(', ')}`);
    return EXIT.usage;
  }
  const only = patterns(values.only);
  const skip = patterns(values.skip);
  if (values.list) {
    for (const c of selectCases(ALL_CASES, only, profile))
      console.log(
        `${c.id.padEnd(48)} ${c.level.padEnd(6)} ${c.profile.padEnd(5)} ${c.cites
          .map((x) => x.ref)
          .join(',')
          .padEnd(14)} ${c.title}`,
      );
    return EXIT.ok;
  }
  if (!values.config) {
    console.error(`orbit-conformance: --config is required\n\n${USAGE}`);
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

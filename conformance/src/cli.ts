/**
 * @module
 * `orbit-conformance --config FILE [--seed N] [--num-runs N] [--known-failing FILE]
 * [--report-dir DIR] [--only PATTERN]... [--list]`: runs the suite against the configured server
 * (starting it first in spawn mode), prints progress and the summary, writes the reports, and
 * exits 0 only when nothing unexpected failed (1 otherwise, 2 for a usage or setup error).
 */
import { parseArgs } from 'node:util';
import { ALL_CASES } from './cases/index.ts';
import { ConfigError, loadConfig } from './config.ts';
import { KnownFailingError, loadKnownFailing } from './known-failing.ts';
import { renderOutcome, resultLine, writeReports } from './reports/index.ts';
import { runSuite, selectCases } from './runner.ts';
import { prepareTarget, SetupError } from './setup.ts';

const USAGE = `usage: orbit-conformance --config FILE [options]

  --config FILE          JSON or YAML configuration (see conformance/README.md)
  --seed N               seed of the property cases (replays a failing run)
  --num-runs N           runs per property case (default: numRuns of the config, else 25)
  --known-failing FILE   expected failures: one case-id pattern per line, each with a # reason
  --report-dir DIR       write summary.txt, report.json, junit.xml and report.html there
  --only PATTERN         run only matching case ids (* wildcard; repeat or comma-separate)
  --list                 print the case catalogue and exit
  --help                 this text

exit code: 0 when nothing unexpected failed, 1 otherwise, 2 on a usage or setup error`;

function integer(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^[0-9]{1,10}$/.test(value)) throw new ConfigError(`--${name} must be a non-negative integer`);
  return Number(value);
}

function parseCli(argv: string[]) {
  return parseArgs({
    args: argv,
    options: {
      config: { type: 'string' },
      seed: { type: 'string' },
      'num-runs': { type: 'string' },
      'known-failing': { type: 'string' },
      'report-dir': { type: 'string' },
      only: { type: 'string', multiple: true },
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
    return 2;
  }
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const only = (values.only ?? [])
    .flatMap((p) => p.split(','))
    .map((p) => p.trim())
    .filter(Boolean);
  if (values.list) {
    for (const c of selectCases(ALL_CASES, only))
      console.log(`${c.id.padEnd(48)} ${c.level.padEnd(6)} ${c.clause.section.padEnd(8)} ${c.title}`);
    return 0;
  }
  if (!values.config) {
    console.error(`orbit-conformance: --config is required\n\n${USAGE}`);
    return 2;
  }
  let target: Awaited<ReturnType<typeof prepareTarget>> | undefined;
  try {
    const config = loadConfig(values.config);
    const knownFailing = values['known-failing'] ? loadKnownFailing(values['known-failing']) : [];
    const seed = integer(values.seed, 'seed');
    const numRuns = integer(values['num-runs'], 'num-runs');
    if (only.length > 0 && selectCases(ALL_CASES, only).length === 0) throw new ConfigError(`--only ${only.join(',')} matches no case`);
    target = await prepareTarget(config, {
      ...(seed !== undefined ? { seed } : {}),
      ...(numRuns !== undefined ? { numRuns } : {}),
      progress: (line) => console.log(line),
    });
    console.log(`running ${selectCases(ALL_CASES, only).length} cases against ${target.env.config.baseUrl} (seed ${target.env.seed})`);
    let area = '';
    const report = await runSuite({
      cases: ALL_CASES,
      env: target.env,
      only,
      knownFailing,
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
    return report.ok ? 0 : 1;
  } catch (error) {
    if (error instanceof ConfigError || error instanceof KnownFailingError || error instanceof SetupError) {
      console.error(`orbit-conformance: ${error.message}`);
      return 2;
    }
    throw error;
  } finally {
    await target?.stop();
  }
}

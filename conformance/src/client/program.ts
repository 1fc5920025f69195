/**
 * @module
 * The client under test as a process: started with a `HarnessConfig` on stdin, read as report
 * lines on stdout (each checked by the generated validator of conformance/harness.schema.json),
 * its stderr kept as its log. It runs in a process group of its own, so that a kill ends what it
 * started too (an `npx` or `tsx` launcher forks the real program), and a SIGINT or SIGTERM to the
 * CLI kills it as well (../process-group.ts).
 */
import type { ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { EvidenceLog } from '../evidence.ts';
import { type ProcessGroup, startGroup } from '../process-group.ts';
import { type HarnessConfig, type HarnessReport, validateHarnessConfig, validateHarnessReport } from './harness.generated.ts';

/** How to start the client under test (the `client` member of the client-mode configuration). */
export interface ProgramSpec {
  readonly command: readonly string[];
  readonly cwd?: string;
  readonly env?: Readonly<Record<string, string>>;
}

export interface Reported {
  readonly at: number;
  readonly report: HarnessReport;
}

const STDERR_TAIL = 4_000;

export class ClientProgram {
  readonly reports: Reported[] = [];
  /** Lines that were not a valid report: a broken harness, named in the case's failure. */
  readonly invalid: string[] = [];
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private stderr = '';
  private readonly group: ProcessGroup;
  private readonly child: ChildProcess;

  constructor(
    spec: ProgramSpec,
    config: HarnessConfig,
    private readonly log: EvidenceLog,
    private readonly elapsed: () => number,
    private readonly notify: () => void,
  ) {
    if (!validateHarnessConfig(config)) throw new Error(`harness config: ${JSON.stringify(validateHarnessConfig.errors?.[0])}`);
    const [file, ...args] = spec.command;
    if (!file) throw new Error('the client command is empty');
    // No grace time: a kill is how a case tests what survives (README, "ACK only after store").
    this.group = startGroup(file, args, { cwd: spec.cwd, env: { ...process.env, ...spec.env }, stdio: ['pipe', 'pipe', 'pipe'] }, 0);
    this.child = this.group.child;
    this.exited = new Promise((resolve) => {
      this.child.on('exit', (code, signal) => {
        log.note(`client program exited (${signal ?? code})`);
        resolve({ code, signal });
        notify();
      });
      this.child.on('error', (error) => {
        this.stderr += `\nspawn failed: ${error.message}`;
        resolve({ code: null, signal: null });
        notify();
      });
    });
    this.child.stdin?.on('error', () => undefined);
    this.child.stdin?.end(`${JSON.stringify(config)}\n`);
    this.child.stderr?.on('data', (chunk: Buffer) => {
      this.stderr = (this.stderr + chunk.toString()).slice(-STDERR_TAIL);
    });
    createInterface({ input: this.child.stdout! }).on('line', (line) => this.line(line));
  }

  private line(line: string): void {
    if (line.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      value = undefined;
    }
    if (value !== undefined && validateHarnessReport(value)) {
      this.reports.push({ at: this.elapsed(), report: value });
      this.log.note(`client reported ${this.log.clean(line)}`);
    } else {
      this.invalid.push(line.slice(0, 300));
      this.log.note(`client wrote a line that is not a harness report: ${this.log.clean(line)}`);
    }
    this.notify();
  }

  /** The reports of `type`, oldest first. */
  of<T extends HarnessReport['type']>(type: T): Array<Extract<HarnessReport, { type: T }>> {
    return this.reports.map((r) => r.report).filter((r): r is Extract<HarnessReport, { type: T }> => r.type === type);
  }

  /** The tail of what the program wrote on stderr. */
  stderrTail(): string {
    return this.stderr;
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** SIGKILL to the whole process group: nothing of the program gets to run after it. */
  kill(): void {
    void this.group.end();
  }

  /** Ends the program (SIGKILL) and waits for it. */
  async stop(): Promise<void> {
    this.kill();
    await this.exited;
  }
}

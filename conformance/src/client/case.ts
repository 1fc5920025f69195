/**
 * @module
 * Client-mode cases and what a case works with. A client case has the same shape as a server case
 * (a stable id `client.short-name`, a MUST / SHOULD / MAY level, the rules it cites, a title that
 * starts with its level), but it runs against a client: its context holds a fresh scripted server
 * (scripted-server.ts), starts the client program with that server's address (program.ts), and
 * offers the waits and checks the cases share.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Citation, seedCitation } from '../case.ts';
import { CheckFailure } from '../errors.ts';
import type { EvidenceLog } from '../evidence.ts';
import { endOnInterrupt } from '../interrupt.ts';
import type { SeedRuleId } from '../seed-rules.ts';
import { ClientProgram, type ProgramSpec } from './program.ts';
import { type ScriptedServer, type ScriptedSession, type SentProof, ScriptedServer as Server, scriptedEvent } from './scripted-server.ts';

/** What every case of a run shares: how to start the client and the run's timings. */
export interface ClientEnvironment {
  readonly program: ProgramSpec;
  /** The heartbeat interval the harness config and the welcome announce. */
  readonly heartbeatIntervalMs: number;
  /** How long a client may take to reconnect after a close worth a reconnect. */
  readonly reconnectWithinMs: number;
  /** How long a stop is watched for a reconnect that should not come. */
  readonly quietMs: number;
  readonly caseTimeoutMs: number;
}

export interface ClientCaseSpec {
  /** `client.short-name`; stable forever. */
  readonly id: string;
  readonly level: 'MUST' | 'SHOULD' | 'MAY';
  readonly title: string;
  readonly seed?: readonly SeedRuleId[];
  /** An Orbit choice: an anchor of spec/README.md and a paraphrase. */
  readonly orbit?: { readonly anchor: string; readonly text: string };
  readonly timeoutMs?: number;
  run(ctx: ClientCaseContext): Promise<void>;
}

export interface ClientCase extends ClientCaseSpec {
  readonly area: 'client';
  readonly profile: 'seed' | 'orbit';
  readonly cites: readonly Citation[];
}

const ID = /^client\.[a-z0-9]+(-[a-z0-9]+)*$/;

export function defineClientCase(spec: ClientCaseSpec): ClientCase {
  if (!ID.test(spec.id)) throw new Error(`client case id "${spec.id}" must be client.kebab-case`);
  if (!spec.title.startsWith(`${spec.level} `)) throw new Error(`case "${spec.id}": the title must start with "${spec.level} "`);
  const seed = spec.seed ?? [];
  if (seed.length > 0 === (spec.orbit !== undefined)) throw new Error(`case "${spec.id}": cite either seed rules or one Orbit choice`);
  const cites: Citation[] = spec.orbit
    ? [{ ref: `README#${spec.orbit.anchor}`, href: `spec/README.md#${spec.orbit.anchor}`, text: spec.orbit.text }]
    : seed.map(seedCitation);
  return Object.freeze({ ...spec, area: 'client', profile: spec.orbit ? 'orbit' : 'seed', cites });
}

export class ClientCaseContext {
  readonly server: ScriptedServer;
  /** Every program this case started, the current one last. */
  readonly programs: ClientProgram[] = [];
  private baseUrl = '';
  private readonly stateDir = mkdtempSync(join(tmpdir(), 'orbit-client-case-'));
  /**
   * Ends the programs, then removes the state directory they write to; a SIGINT or SIGTERM to the
   * CLI runs it too (../interrupt.ts).
   */
  private readonly release = endOnInterrupt(async () => {
    for (const program of this.programs) await program.stop();
    rmSync(this.stateDir, { recursive: true, force: true });
  });

  constructor(
    readonly env: ClientEnvironment,
    readonly caseId: string,
    readonly log: EvidenceLog,
  ) {
    this.server = new Server(log, env.heartbeatIntervalMs, 4);
  }

  get program(): ClientProgram {
    const program = this.programs.at(-1);
    if (!program) throw new Error('no client program started');
    return program;
  }

  /** Starts the client program (again, after a kill: the state directory is the same). */
  async start(): Promise<ClientProgram> {
    if (!this.baseUrl) this.baseUrl = await this.server.listen();
    const config = {
      harness_version: '1' as const,
      case_id: this.caseId,
      base_url: this.baseUrl,
      token: this.server.token,
      subscription_id: this.server.subscriptionId,
      capacity: this.server.capacity,
      heartbeat_interval_ms: this.env.heartbeatIntervalMs,
      state_dir: this.stateDir,
    };
    const program = new ClientProgram(
      this.env.program,
      config,
      this.log,
      () => this.server.elapsed(),
      () => this.server.notify(),
    );
    this.programs.push(program);
    await this.wait(
      'the ready report',
      () => program.of('ready')[0] ?? (!program.running && this.failNow('the program exited before ready')),
      20_000,
    );
    return program;
  }

  /** Starts the program and waits for its first session (a welcomed hello). */
  async startSession(): Promise<ScriptedSession> {
    await this.start();
    return this.session(0);
  }

  /** The session with index `n` (0 is the first welcomed hello of the case). */
  session(n: number, timeoutMs = this.env.reconnectWithinMs + 5_000): Promise<ScriptedSession> {
    return this.wait(`session ${n + 1}`, () => this.server.sessions[n], timeoutMs);
  }

  wait<T>(what: string, check: () => T | undefined | false, timeoutMs: number): Promise<T> {
    return this.server.waitFor(what, check, timeoutMs).catch((error: Error) => {
      if (error instanceof CheckFailure) throw error;
      throw new CheckFailure(error.message);
    });
  }

  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => setTimeout(resolve, ms));
  }

  fail(message: string): never {
    throw new CheckFailure(message);
  }

  private failNow(message: string): never {
    throw new CheckFailure(`${message}; its stderr:\n${this.program.stderrTail()}`);
  }

  /** The ACK frames that carry exactly `proof`. */
  acksWith(proof: SentProof) {
    return this.server
      .sent('event.ack')
      .filter(
        (f) =>
          f.frame.body.delivery_id === proof.deliveryId && f.frame.body.epoch === proof.epoch && f.frame.body.lease_secret === proof.secret,
      );
  }

  /** Waits for an ACK that carries exactly `proof`. */
  ackOf(proof: SentProof, timeoutMs = 5_000) {
    return this.wait(`an ACK of delivery ${proof.deliveryId} epoch ${proof.epoch}`, () => this.acksWith(proof).at(-1), timeoutMs);
  }

  /**
   * Delivers an event whose ACK gets no reply, ends the session with `end`, and waits for the
   * same proof, unchanged, on the next connection (spec/rules.md#s6-13).
   */
  async expectProofResent(end: (session: ScriptedSession) => void): Promise<void> {
    const s = await this.startSession();
    s.answerAcks = false;
    const proof = s.deliver(scriptedEvent());
    await this.ackOf(proof);
    end(s);
    const next = await this.session(1);
    await this.wait(
      'the same proof on the new connection',
      () => this.acksWith(proof).find((f) => f.conn === next.conn),
      this.env.reconnectWithinMs,
    );
  }

  /** How often the programs of this case reported event `eventId` as stored. */
  storedCount(eventId: string): number {
    return this.programs.flatMap((p) => p.of('stored')).filter((r) => r.event_id === eventId).length;
  }

  /**
   * Checks that event `eventId` was reported stored exactly once: waits up to a second for the
   * first report (a client that stores before it ACKs has sent it already), then a little for a
   * second one.
   */
  async storedOnce(eventId: string, what = `event ${eventId}`): Promise<void> {
    await this.wait(`a "stored" report of ${what}`, () => this.storedCount(eventId) > 0, 1_000).catch(() => undefined);
    await this.sleep(200);
    const count = this.storedCount(eventId);
    if (count !== 1) this.fail(`${what} was reported stored ${count} times; expected once`);
  }

  /** Waits for the program to report that it stopped, and checks that it did not connect again meanwhile. */
  async expectStop(code: string | null, upgradesBefore: number): Promise<void> {
    const reconnected = () => this.server.upgrades.length > upgradesBefore;
    const stopped = await this.wait(
      'a "stopped" report',
      () => this.program.of('stopped')[0] ?? (reconnected() && 'reconnected'),
      this.env.quietMs + 3_000,
    ).catch(() => null);
    if (stopped !== 'reconnected') await this.sleep(this.env.quietMs);
    const again = this.server.upgrades.length - upgradesBefore;
    if (again > 0) this.fail(`the client connected again ${again} time(s) after a close it must not retry`);
    if (!stopped || stopped === 'reconnected')
      this.fail('the client did not report that it stopped (a "stopped" line) after a fatal close');
    if (code !== null && stopped.code !== code) this.fail(`the client stopped with code ${stopped.code}, expected ${code}`);
  }

  /** Invalid frames and report lines: the harness's or the client's mistakes, failed as such. */
  violations(): string[] {
    return [
      ...this.server.frames.filter((f) => f.frame === null).map((f) => `frame on conn ${f.conn}: ${f.invalid}: ${f.text.slice(0, 200)}`),
      ...this.programs.flatMap((p) => p.invalid.map((line) => `report line: ${line}`)),
    ];
  }

  async teardown(): Promise<void> {
    await this.release();
    await this.server.close();
  }
}

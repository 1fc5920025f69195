/**
 * @module
 * Client cases about closes, as one table: each close code a server may end a connection with, in
 * each phase of a connection, is one case. What a client must do after each code is the table of
 * spec/README.md#close-codes: reconnect after 1001, 1006 and 1011, stop after 1000, 1008 and
 * 4000-4999. What it must do with a delivery in flight is the seed's: an ACK whose reply was lost
 * is re-sent with its original proof on the new connection (spec/rules.md#s6-13), and a delivery
 * that was never ACKed is ACKed with the proof of its redelivery and stored once (#s6-16, #s6-18).
 *
 * The ids of the cases after the welcome (`client.reconnect-after-1001`, `client.stop-after-1000`,
 * ...) are older than the table and keep their names; every other phase adds its suffix.
 */
import { type ClientCase, type ClientCaseContext, defineClientCase } from './case.ts';
import { type SentProof, scriptedEvent } from './scripted-server.ts';

const CLOSE_TABLE =
  'A client reconnects after 1001, 1006, 1011, 1012, 1013 and UNAVAILABLE, and stops after 1000, 1008, 1009 and 4000-4999';

/** The close codes of the table and what a client does after each (spec/README.md#close-codes). */
export const CLOSE_CODES = [
  // A 1000 or 4xxx the client did not ask for is final by Orbit's choice, not by the seed: SHOULD.
  { code: 1000, client: 'stop', level: 'SHOULD' },
  { code: 1001, client: 'reconnect', level: 'MUST' },
  { code: 1006, client: 'reconnect', level: 'MUST' },
  { code: 1008, client: 'stop', level: 'MUST' },
  { code: 1011, client: 'reconnect', level: 'MUST' },
  { code: 4000, client: 'stop', level: 'SHOULD' },
] as const satisfies ReadonlyArray<{ code: number; client: 'stop' | 'reconnect'; level: 'MUST' | 'SHOULD' }>;

type CloseRow = (typeof CLOSE_CODES)[number];

/** What a case checks once a client reconnected after the close: the index of its next session, and the phase's own obligation. */
interface Closed {
  readonly next: number;
  after?(): Promise<void>;
}

interface Phase {
  /** Appended to the id (`client.reconnect-after-1001-mid-delivery`). */
  readonly suffix: string;
  /** Appended to the title: when the close comes. */
  readonly when: string;
  /** What a reconnecting client does next, for the title. */
  readonly owed: string;
  /** Starts the client, brings its connection to the phase and closes it with `code`. */
  closeIn(t: ClientCaseContext, code: number): Promise<Closed>;
}

const reasonOf = (code: number): string => (code === 1006 ? '' : 'scripted');

/** The phases of a connection a close can come in. */
export const CLOSE_PHASES: readonly Phase[] = [
  {
    suffix: '',
    when: '',
    owed: ', with a new hello',
    async closeIn(t, code) {
      const s = await t.startSession();
      s.close(code, reasonOf(code));
      return { next: 1 };
    },
  },
  {
    suffix: '-before-welcome',
    when: ' instead of the welcome (during the handshake)',
    owed: ', with a new hello',
    async closeIn(t, code) {
      t.server.closeBeforeWelcome = (n) => (n === 0 ? { code, reason: reasonOf(code) } : undefined);
      await t.start();
      await t.wait('the hello that is closed', () => t.server.hellos > 0, t.env.reconnectWithinMs);
      return { next: 0 };
    },
  },
  {
    suffix: '-mid-delivery',
    when: ' right after an event.deliver, before its ACK',
    owed: ', then ACK the redelivery with its new proof and store the event once',
    async closeIn(t, code) {
      const s = await t.startSession();
      const event = scriptedEvent();
      // The deliver and the close leave in one go: the client's ACK, if it sends one, finds the
      // connection closing. The lease moves on meanwhile: the next session redelivers with epoch 2.
      const first = s.deliver(event);
      s.close(code, reasonOf(code));
      let second: SentProof | undefined;
      t.server.onSession = (next) => {
        second ??= next.deliver(event, first.deliveryId);
      };
      return {
        next: 1,
        async after() {
          await t.ackOf(await t.wait('the redelivery', () => second, 1_000));
          await t.storedOnce(event.id);
        },
      };
    },
  },
  {
    suffix: '-before-ack-reply',
    when: ' between an ACK and its reply',
    owed: ', and re-send the unanswered proof, unchanged, on the new connection',
    async closeIn(t, code) {
      const s = await t.startSession();
      s.answerAcks = false;
      const proof = s.deliver(scriptedEvent());
      await t.ackOf(proof);
      s.close(code, reasonOf(code));
      return {
        next: 1,
        async after() {
          const next = await t.session(1);
          await t.wait(
            'the same proof on the new connection',
            () => t.acksWith(proof).find((f) => f.conn === next.conn),
            t.env.reconnectWithinMs,
          );
        },
      };
    },
  },
];

function closeCase(row: CloseRow, phase: Phase): ClientCase {
  const reconnect = row.client === 'reconnect';
  return defineClientCase({
    id: `client.${reconnect ? 'reconnect' : 'stop'}-after-${row.code}${phase.suffix}`,
    level: row.level,
    title: reconnect
      ? `${row.level} reconnect after close ${row.code}${phase.when}${phase.owed}`
      : `${row.level} stop, and not reconnect, after a close ${row.code} it did not ask for${phase.when}`,
    orbit: { anchor: 'close-codes', text: CLOSE_TABLE },
    async run(t) {
      const closed = await phase.closeIn(t, row.code);
      if (!reconnect) return t.expectStop(null, 1);
      await t.session(closed.next);
      await closed.after?.();
    },
  });
}

/** Every row of the table in every phase, code by code. */
export const CLOSE_CASES: readonly ClientCase[] = CLOSE_CODES.flatMap((row) => CLOSE_PHASES.map((phase) => closeCase(row, phase)));

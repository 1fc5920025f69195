/**
 * @module
 * Client cases about the connection: the upgrade request, the heartbeat, and what the client does
 * after each refusal and fatal error (spec/README.md#close-codes: reconnect on UNAVAILABLE, stop on
 * the fatal codes). The close codes in each phase of a connection are the table of cases-close.ts.
 */
import { CONNECT_PATH } from '@orbit/spec/protocol';
import type { ErrorCode } from '@orbit/generated';
import { type ClientCase, defineClientCase } from './case.ts';
import { scriptedEvent } from './scripted-server.ts';

function fatalErrorCase(id: string, code: ErrorCode, rule: 's7-11' | 's7-12' | 's7-17'): ClientCase {
  return defineClientCase({
    id,
    level: 'MUST',
    title: `MUST report ${code} to the application and stop, not reconnect, when it ends the session`,
    seed: [rule],
    async run(t) {
      const s = await t.startSession();
      const upgrades = t.server.upgrades.length;
      s.error(code);
      s.close(1008, code);
      await t.expectStop(code, upgrades);
    },
  });
}

export const CONNECTION_CASES = [
  defineClientCase({
    id: 'client.no-credential-in-url',
    level: 'MUST',
    title: 'MUST send the token in Authorization and put no credential (no query at all) in the connect URL',
    seed: ['s1-3', 's5-2'],
    async run(t) {
      await t.startSession();
      for (const u of t.server.upgrades) {
        if (u.url !== CONNECT_PATH) t.fail(`the client connected to ${t.log.clean(u.url)}; expected exactly ${CONNECT_PATH}`);
        if (u.headers.authorization !== `Bearer ${t.server.token}`) t.fail('the upgrade did not carry Authorization: Bearer <token>');
      }
    },
  }),
  defineClientCase({
    id: 'client.heartbeat-while-delivering',
    level: 'SHOULD',
    title: 'SHOULD send events.ping every heartbeat interval even while deliveries keep arriving',
    seed: ['s7-1', 's7-2'],
    async run(t) {
      const s = await t.startSession();
      const interval = t.env.heartbeatIntervalMs;
      const from = t.server.elapsed();
      const until = from + interval * 4;
      while (t.server.elapsed() < until) {
        s.deliver(scriptedEvent());
        await t.sleep(Math.max(20, interval / 10));
      }
      const pings = t.server.sent('events.ping').filter((f) => f.conn === s.conn && f.at >= from);
      const times = [from, ...pings.map((p) => p.at), until];
      const gap = Math.max(...times.slice(1).map((at, i) => at - times[i]!));
      // A ping may come most of an interval late (timers, a busy machine); a missed one is a gap of two.
      if (gap > interval * 1.75)
        t.fail(
          `while deliveries arrived every ${interval / 10} ms the client went ${gap} ms without events.ping (interval ${interval} ms)`,
        );
    },
  }),
  defineClientCase({
    id: 'client.ping-unanswered',
    level: 'SHOULD',
    title: 'SHOULD leave a connection whose pings go unanswered and reconnect',
    seed: ['s7-1', 's7-3'],
    async run(t) {
      const s = await t.startSession();
      s.answerPings = false;
      await t.wait('a ping', () => t.server.sent('events.ping').find((f) => f.conn === s.conn), t.env.heartbeatIntervalMs * 3);
      await t.session(1, t.env.heartbeatIntervalMs * 4 + t.env.reconnectWithinMs);
    },
  }),
  defineClientCase({
    id: 'client.reconnect-after-unavailable',
    level: 'MUST',
    title: 'MUST reconnect after UNAVAILABLE and close 1013, and re-send its unanswered proof there',
    seed: ['s7-21'],
    run: (t) =>
      t.expectProofResent((s) => {
        s.error('UNAVAILABLE');
        s.close(1013, 'UNAVAILABLE');
      }),
  }),
  fatalErrorCase('client.history-expired', 'EVENT_HISTORY_EXPIRED', 's7-17'),
  fatalErrorCase('client.unauthenticated-mid-session', 'UNAUTHENTICATED', 's7-11'),
  fatalErrorCase('client.permission-denied-mid-session', 'PERMISSION_DENIED', 's7-12'),
];

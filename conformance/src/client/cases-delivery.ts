/**
 * @module
 * Client cases about deliveries: what the client stores, how it deduplicates, and which proof it
 * ACKs with when replies are lost, connections close and leases move to a new epoch
 * (spec/rules.md#s6-7 to #s6-19).
 */
import { MAX_FRAME_BYTES } from '@orbit/spec/protocol';
import { defineClientCase } from './case.ts';
import { type SentProof, scriptedEvent, withFiller } from './scripted-server.ts';

export const DELIVERY_CASES = [
  defineClientCase({
    id: 'client.duplicate-delivery',
    level: 'MUST',
    title: 'MUST store an event delivered twice once, and ACK each delivery with its own proof',
    seed: ['s6-7', 's6-16'],
    async run(t) {
      const s = await t.startSession();
      const event = scriptedEvent();
      const first = s.deliver(event);
      await t.ackOf(first);
      const second = s.deliver(event);
      await t.ackOf(second);
      await t.storedOnce(event.id, `event ${event.id}, delivered twice,`);
    },
  }),
  defineClientCase({
    id: 'client.dedupe-by-event-id',
    level: 'MUST',
    title: 'MUST deduplicate by event id: task.needs_review then task.succeeded of one task are two events, both stored',
    seed: ['s6-7'],
    async run(t) {
      const s = await t.startSession();
      const review = scriptedEvent({ type: 'task.needs_review' });
      const done = scriptedEvent({ type: 'task.succeeded', taskId: review.taskId });
      await t.ackOf(s.deliver(review));
      await t.ackOf(s.deliver(done));
      for (const event of [review, done]) await t.storedOnce(event.id, `${event.type} (event ${event.id}, task ${event.taskId})`);
    },
  }),
  defineClientCase({
    id: 'client.ack-after-store',
    level: 'MUST',
    title: 'MUST ACK only after the event is durably stored: killed when its ACK arrives, the restarted client has it',
    seed: ['s6-7', 's6-8'],
    async run(t) {
      const s = await t.startSession();
      const event = scriptedEvent();
      const proof = s.deliver(event);
      await t.ackOf(proof);
      t.program.kill();
      await t.program.exited;
      t.log.note('killed the client (SIGKILL) as its ACK arrived; starting it again on the same state');
      const again = await t.start();
      const ready = again.of('ready')[0]!;
      if (!ready.stored.includes(event.id))
        t.fail(
          `the client ACKed event ${event.id} but after a kill at that moment its store does not hold it (ready: ${JSON.stringify(ready.stored)})`,
        );
    },
  }),
  defineClientCase({
    id: 'client.ack-resent-after-lost-reply',
    level: 'MUST',
    title: 'MUST re-send the original proof, unchanged, on a new connection when the ACK reply was lost',
    seed: ['s6-13'],
    run: (t) => t.expectProofResent((s) => s.close(1001, 'going away')),
  }),
  defineClientCase({
    id: 'client.lease-lost-keeps-store',
    level: 'MUST',
    title: 'MUST keep the stored event on DELIVERY_LEASE_LOST, stay connected, and ACK the redelivery with its new proof',
    seed: ['s6-16', 's7-18'],
    async run(t) {
      const s = await t.startSession();
      const event = scriptedEvent();
      const first = s.deliver(event);
      s.onAck = (frame) => {
        if (frame.body.delivery_id !== first.deliveryId || frame.body.epoch !== first.epoch) return false;
        s.error('DELIVERY_LEASE_LOST', frame.message_id);
        return true;
      };
      await t.ackOf(first);
      await t.sleep(300);
      const second = s.deliver(event, first.deliveryId);
      await t.ackOf(second);
      const upgrades = t.server.upgrades.length;
      await t.storedOnce(event.id);
      if (!s.open || t.server.upgrades.length !== upgrades) t.fail('the client left the connection after DELIVERY_LEASE_LOST');
    },
  }),
  defineClientCase({
    id: 'client.no-guessed-epoch',
    level: 'MUST',
    title: 'MUST NOT answer DELIVERY_LEASE_LOST with a guessed epoch: only proofs the server sent',
    seed: ['s6-17'],
    async run(t) {
      const s = await t.startSession();
      s.onAck = (frame) => {
        s.error('DELIVERY_LEASE_LOST', frame.message_id);
        return true;
      };
      const proof = s.deliver(scriptedEvent());
      await t.ackOf(proof);
      await t.sleep(1_000);
      const forged = t.server
        .sent('event.ack')
        .filter((f) => f.frame.body.epoch !== proof.epoch || f.frame.body.lease_secret !== proof.secret);
      if (forged.length > 0) t.fail(`the client sent proofs the server never sent: ${forged.map((f) => f.text).join('\n')}`);
    },
  }),
  defineClientCase({
    id: 'client.redelivery-new-epoch',
    level: 'MUST',
    title: 'MUST ACK a redelivery after a reconnect with its new epoch and secret, and store the event once',
    seed: ['s6-16', 's6-18'],
    async run(t) {
      const s = await t.startSession();
      s.answerAcks = false;
      const event = scriptedEvent();
      const first = s.deliver(event);
      await t.ackOf(first);
      // The lease moves on while the client is away: the new session delivers epoch 2 before
      // anything else, so the re-sent proof of epoch 1 is answered DELIVERY_LEASE_LOST.
      let second: SentProof | undefined;
      t.server.onSession = (next) => {
        second = next.deliver(event, first.deliveryId);
      };
      s.close(1006);
      await t.session(1);
      await t.ackOf(second!);
      await t.storedOnce(event.id);
    },
  }),
  defineClientCase({
    id: 'client.big-integer-result',
    level: 'MUST',
    title: 'MUST keep a 20-digit integer in result exactly (raw JSON text, no float rounding)',
    seed: ['s6-4'],
    async run(t) {
      const s = await t.startSession();
      const digits = '18446744073709551615';
      const event = scriptedEvent({ resultJson: `{"amount":${digits},"ratio":0.1000000000000000055511151231257827}` });
      await t.ackOf(s.deliver(event));
      await t.storedOnce(event.id);
      const stored = t.program.of('stored').find((r) => r.event_id === event.id);
      if (!stored) return t.fail('the event was ACKed but never reported stored');
      if (!stored.result_json?.includes(digits))
        t.fail(`the stored result lost the integer ${digits}: ${stored.result_json ?? '(no result_json)'}`);
    },
  }),
  defineClientCase({
    id: 'client.frame-at-size-limit',
    level: 'MUST',
    title: 'MUST accept and store an event.deliver of exactly 512 KiB',
    seed: ['s5-5'],
    async run(t) {
      const s = await t.startSession();
      const empty = scriptedEvent({ details: { filler: '' } });
      const size = Buffer.byteLength(s.deliverText(empty).text);
      const event = withFiller(empty, MAX_FRAME_BYTES - size);
      const { text } = s.deliverText(event);
      if (Buffer.byteLength(text) !== MAX_FRAME_BYTES) t.fail(`harness: the frame is ${Buffer.byteLength(text)} bytes`);
      await t.ackOf(s.deliver(event), 10_000);
      await t.storedOnce(event.id, 'the 512 KiB event');
    },
  }),
  defineClientCase({
    id: 'client.fresh-message-id',
    level: 'MUST',
    title: 'MUST send every frame with a message_id of its own',
    seed: ['s5-6'],
    async run(t) {
      const s = await t.startSession();
      for (let i = 0; i < 3; i++) await t.ackOf(s.deliver(scriptedEvent()));
      await t.sleep(t.env.heartbeatIntervalMs * 2);
      const ids = t.server.frames.flatMap((f) => (f.frame ? [f.frame.message_id] : []));
      const repeated = ids.filter((id, i) => ids.indexOf(id) !== i);
      if (repeated.length > 0) t.fail(`message_id used more than once: ${[...new Set(repeated)].join(', ')}`);
    },
  }),
];

/**
 * One behavioural suite for every Inbox implementation: each implementation supplies a harness
 * that opens an Inbox on a fresh database and writes/counts a business effect through the
 * transaction handle.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { encodeBase64url } from '@orbit/spec/codec';
import { OrbitError, type Inbox, type PendingAck } from '../src/index.ts';

export interface InboxHarness<Tx> {
  /** Opens an Inbox on the harness's database (call again to reopen the same tables). */
  open(options?: { scope?: string; tablePrefix?: string }): Promise<Inbox<Tx>>;
  /** Writes one business row through the open transaction. */
  effect(tx: Tx, eventId: string): Promise<void> | void;
  /** Business rows for the event (committed). */
  effects(eventId: string): Promise<number>;
  /** Drops the database. */
  destroy(): Promise<void>;
}

const id = (): string => randomBytes(16).toString('hex');
const proof = (subscriptionId: string, overrides: Partial<PendingAck> = {}): PendingAck => ({
  subscription_id: subscriptionId,
  delivery_id: id(),
  event_id: id(),
  epoch: '1',
  lease_secret: encodeBase64url(randomBytes(32)),
  ...overrides,
});

export function inboxSuite<Tx>(name: string, create: () => Promise<InboxHarness<Tx>>): void {
  describe(`Inbox contract: ${name}`, () => {
    let harness: InboxHarness<Tx>;
    let inbox: Inbox<Tx>;
    const opened: Inbox<Tx>[] = [];

    async function open(options?: { scope?: string; tablePrefix?: string }): Promise<Inbox<Tx>> {
      const created = await harness.open(options);
      opened.push(created);
      return created;
    }

    beforeEach(async () => {
      harness = await create();
      inbox = await open();
    });
    afterEach(async () => {
      for (const i of opened.splice(0)) await i.close();
      await harness.destroy();
    });

    it('MUST run fn and record the event once; a second transaction is a duplicate and does not run fn', async () => {
      const eventId = id();
      let calls = 0;
      const first = await inbox.transaction(eventId, async (tx) => {
        calls++;
        await harness.effect(tx, eventId);
        return 'done';
      });
      expect(first).toEqual({ duplicate: false, value: 'done' });
      const second = await inbox.transaction(eventId, async (tx) => {
        calls++;
        await harness.effect(tx, eventId);
      });
      expect(second).toEqual({ duplicate: true });
      expect(calls).toBe(1);
      expect(await harness.effects(eventId)).toBe(1);
      expect(await inbox.has(eventId)).toBe(true);
      expect(await inbox.has(id())).toBe(false);
    });

    it('MUST roll back the business writes, the record and the proof together when fn throws', async () => {
      const eventId = id();
      const ack = proof(id(), { event_id: eventId });
      const error = await inbox
        .transaction(
          eventId,
          async (tx) => {
            await harness.effect(tx, eventId);
            throw new Error('business failure');
          },
          { pendingAck: ack },
        )
        .catch((e: unknown) => e);
      expect((error as Error).message).toBe('business failure');
      expect(await harness.effects(eventId)).toBe(0);
      expect(await inbox.has(eventId)).toBe(false);
      expect(await inbox.pendingAcks()).toEqual([]);
      // Nothing is left half-done: the next attempt runs fn.
      expect(await inbox.transaction(eventId, (tx) => harness.effect(tx, eventId), { pendingAck: ack })).toMatchObject({
        duplicate: false,
      });
      expect(await inbox.pendingAcks()).toEqual([ack]);
    });

    it('MUST run fn once when transactions for the same event race', async () => {
      const eventId = id();
      let calls = 0;
      const outcomes = await Promise.all(
        Array.from({ length: 6 }, () =>
          inbox.transaction(eventId, async (tx) => {
            calls++;
            await new Promise((resolve) => setTimeout(resolve, 20));
            await harness.effect(tx, eventId);
          }),
        ),
      );
      expect(calls).toBe(1);
      expect(outcomes.filter((o) => !o.duplicate)).toHaveLength(1);
      expect(await harness.effects(eventId)).toBe(1);
    });

    it('MUST store the proof in the transaction, for new and duplicate events alike', async () => {
      const eventId = id();
      const sub = id();
      const first = proof(sub, { event_id: eventId });
      await inbox.transaction(eventId, () => {}, { pendingAck: first });
      const redelivered = { ...first, epoch: '2', lease_secret: encodeBase64url(randomBytes(32)) };
      expect(await inbox.transaction(eventId, () => {}, { pendingAck: redelivered })).toEqual({ duplicate: true });
      expect(await inbox.pendingAcks(sub)).toEqual([redelivered]);
    });

    it('MUST keep only the newest epoch per delivery and delete only the exact epoch', async () => {
      const sub = id();
      const p9 = proof(sub, { epoch: '9' });
      const p10 = { ...p9, epoch: '10', lease_secret: encodeBase64url(randomBytes(32)) };
      const big = { ...p9, epoch: '18446744073709551615', lease_secret: encodeBase64url(randomBytes(32)) };
      await inbox.savePendingAck(p10);
      await inbox.savePendingAck(p9); // older: ignored (text order would say "9" > "10")
      expect(await inbox.pendingAcks()).toEqual([p10]);
      await inbox.deletePendingAck(p9.delivery_id, '9'); // not the stored epoch: kept
      expect(await inbox.pendingAcks()).toEqual([p10]);
      await inbox.savePendingAck(big);
      expect(await inbox.pendingAcks()).toEqual([big]);
      await inbox.deletePendingAck(big.delivery_id, big.epoch);
      expect(await inbox.pendingAcks()).toEqual([]);
    });

    it('MUST list proofs oldest first, filtered by subscription, and keep scopes apart', async () => {
      const subA = id();
      const subB = id();
      const a1 = proof(subA);
      const b1 = proof(subB);
      await inbox.savePendingAck(a1);
      await new Promise((resolve) => setTimeout(resolve, 5));
      await inbox.savePendingAck(b1);
      await new Promise((resolve) => setTimeout(resolve, 5));
      const a2 = proof(subA);
      await inbox.savePendingAck(a2);
      expect(await inbox.pendingAcks()).toEqual([a1, b1, a2]);
      expect(await inbox.pendingAcks(subA)).toEqual([a1, a2]);
      const other = await open({ scope: 'another-receiver' });
      expect(await other.pendingAcks()).toEqual([]);
      const eventId = id();
      await inbox.transaction(eventId, () => {});
      expect(await other.has(eventId)).toBe(false);
      expect(await other.transaction(eventId, () => 'mine too')).toEqual({ duplicate: false, value: 'mine too' });
    });

    it('MUST keep records and proofs across close and reopen (tables are created only if missing)', async () => {
      const eventId = id();
      const ack = proof(id(), { event_id: eventId });
      await inbox.transaction(eventId, (tx) => harness.effect(tx, eventId), { pendingAck: ack });
      await inbox.close();
      const reopened = await open();
      expect(await reopened.has(eventId)).toBe(true);
      expect(await reopened.pendingAcks()).toEqual([ack]);
      expect(await reopened.transaction(eventId, () => {})).toEqual({ duplicate: true });
      const prefixed = await open({ tablePrefix: 'custom_' });
      expect(await prefixed.has(eventId)).toBe(false);
    });

    it('MUST refuse malformed ids, epochs, secrets, scopes and prefixes', async () => {
      const bad: Array<() => Promise<unknown>> = [
        () => inbox.transaction('nope', () => {}),
        () => inbox.has('ABCDEF'),
        () => inbox.savePendingAck(proof(id(), { epoch: '01' })),
        () => inbox.savePendingAck(proof(id(), { lease_secret: 'short' })),
        () => inbox.savePendingAck(proof('x')),
        () => inbox.deletePendingAck(id(), '-1'),
        () => harness.open({ scope: '' }),
        () => harness.open({ tablePrefix: 'x; DROP TABLE y' }),
      ];
      for (const call of bad) {
        const error = await Promise.resolve()
          .then(call)
          .catch((e: unknown) => e);
        expect(error).toBeInstanceOf(OrbitError);
        expect((error as OrbitError).code).toBe('INVALID_ARGUMENT');
      }
    });
  });
}

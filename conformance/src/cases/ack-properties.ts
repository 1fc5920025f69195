/**
 * @module
 * Non-canonical proofs, generated with fast-check (spec/rules.md#s8-9, #s1-21, #s6-17; area `ack`,
 * after ack-flow.ts): every spelling of a lease secret or epoch other than the canonical one is
 * refused and never acknowledges, also those a lenient decoder maps to the same value.
 */
import type { DeliverFrame } from '@orbit/generated';
import { encodeBase64url, LEASE_SECRET_BYTES } from '@orbit/spec/codec';
import fc from 'fast-check';
import { type ConformanceCase, defineCase } from '../case.ts';
import type { AckOverride, CaseContext } from '../context.ts';
import { CheckFailure } from '../errors.ts';
import { type Received, repliesTo } from '../frames.ts';
import type { EventConnection } from '../ws.ts';
import { leased } from './helpers.ts';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** Non-canonical spellings of `secret` that lenient decoders map to the same 32 bytes. */
export function secretAliases(secret: string): string[] {
  const last = ALPHABET.indexOf(secret[secret.length - 1]!);
  const aliases: string[] = [];
  for (let bits = 1; bits < 4; bits++) aliases.push(secret.slice(0, -1) + ALPHABET[last | bits]!);
  aliases.push(`${secret}=`, `${secret}==`);
  if (/[-_]/.test(secret)) aliases.push(secret.replace(/-/g, '+').replace(/_/g, '/'));
  aliases.push(` ${secret}`, `${secret}\n`, `${secret.slice(0, 20)}\n${secret.slice(20)}`);
  return aliases.filter((a) => a !== secret);
}

/** Sends an ACK on `conn` with `override`; expects it to be refused (never acknowledged). */
async function expectAckRefused(
  ctx: CaseContext,
  conn: EventConnection,
  deliver: Received<DeliverFrame>,
  override: AckOverride,
  what: string,
): Promise<void> {
  const id = ctx.sendAck(conn, deliver, override);
  const reply = await conn.poll(repliesTo(id), ctx.replyMs);
  if (reply?.type === 'ack') throw new CheckFailure(`${what}: the ACK was accepted: ${reply.$text}`);
  if (reply) {
    ctx.check(
      reply.type === 'error' && reply.error.code === 'INVALID_ARGUMENT',
      `${what}: expected INVALID_ARGUMENT or a 1008 close, got ${reply.$text}`,
    );
    return;
  }
  const closed = await conn.waitClose(ctx.replyMs);
  ctx.check(
    closed?.code === 1008,
    `${what}: expected INVALID_ARGUMENT or a 1008 close, got ${closed ? `close ${closed.code}` : 'nothing'}`,
  );
}

export const ackPropertyCases: ConformanceCase[] = [
  defineCase({
    id: 'ack.prop-noncanonical-secret',
    area: 'ack',
    level: 'MUST',
    kind: 'property',
    title:
      'MUST refuse, never acknowledge, every non-canonical base64url spelling of the lease secret (also those that decode to the same ' +
      'bytes)',
    seed: ['s8-9'],
    timeoutMs: 90_000,
    async run(ctx: CaseContext) {
      const { sub, conn: first, deliver } = await leased(ctx);
      await first.close();
      // Paused: no claim can replace the proof while the property runs, however long it shrinks.
      await ctx.configure(sub.id, false);
      const secret = deliver.body.lease_secret;
      const arbitrary = fc.oneof(
        fc.constantFrom(...secretAliases(secret)),
        // random 43-character strings whose last character has non-zero unused bits
        fc
          .tuple(
            fc.stringMatching(/^[A-Za-z0-9_-]{42}$/),
            fc.constantFrom(...ALPHABET.split('').filter((c) => (ALPHABET.indexOf(c) & 3) !== 0)),
          )
          .map(([a, b]) => a + b),
        // wrong lengths and padding
        fc
          .uint8Array({ minLength: LEASE_SECRET_BYTES - 1, maxLength: LEASE_SECRET_BYTES + 1 })
          .filter((b) => b.length !== LEASE_SECRET_BYTES)
          .map((b) => encodeBase64url(b)),
        fc.uint8Array({ minLength: LEASE_SECRET_BYTES, maxLength: LEASE_SECRET_BYTES }).map((b) => `${encodeBase64url(b)}=`),
        fc.uint8Array({ minLength: LEASE_SECRET_BYTES, maxLength: LEASE_SECRET_BYTES }).map((b) => Buffer.from(b).toString('base64')),
      );
      await ctx.property(arbitrary, async (candidate) => {
        const { conn } = await ctx.bind(sub.id);
        await expectAckRefused(ctx, conn, deliver, { lease_secret: candidate }, `ACK with lease_secret ${JSON.stringify(candidate)}`);
      });
      const { conn } = await ctx.bind(sub.id);
      const reply = await ctx.ack(conn, deliver);
      ctx.check(reply.type === 'ack' && reply.body.deduplicated === false, `the canonical secret afterwards: ${reply.$text}`);
    },
  }),
  defineCase({
    id: 'ack.prop-noncanonical-epoch',
    area: 'ack',
    level: 'MUST',
    kind: 'property',
    title: 'MUST refuse, never acknowledge, every non-canonical spelling of the lease epoch',
    seed: ['s1-21', 's6-17'],
    timeoutMs: 90_000,
    async run(ctx: CaseContext) {
      const { sub, conn: first, deliver } = await leased(ctx);
      await first.close();
      await ctx.configure(sub.id, false);
      const epoch = deliver.body.delivery.lease_epoch;
      const arbitrary = fc.oneof(
        fc.integer({ min: 1, max: 5 }).map((k) => '0'.repeat(k) + epoch),
        fc.constantFrom(
          `+${epoch}`,
          `${epoch}.0`,
          `${epoch}e0`,
          ` ${epoch}`,
          `${epoch} `,
          `0x${epoch}`,
          '',
          '-1',
          '18446744073709551616',
          '99999999999999999999',
          '100000000000000000000',
        ),
        fc.constantFrom(Number(epoch), null, [epoch], true),
      );
      await ctx.property(arbitrary, async (candidate) => {
        const { conn } = await ctx.bind(sub.id);
        await expectAckRefused(ctx, conn, deliver, { epoch: candidate }, `ACK with epoch ${JSON.stringify(candidate)}`);
      });
      const { conn } = await ctx.bind(sub.id);
      const reply = await ctx.ack(conn, deliver);
      ctx.check(reply.type === 'ack' && reply.body.deduplicated === false, `the canonical epoch afterwards: ${reply.$text}`);
    },
  }),
];

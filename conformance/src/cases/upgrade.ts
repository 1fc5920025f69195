/**
 * @module
 * The WebSocket upgrade (spec/rules.md §5, §7): the orbit.events.v1 subprotocol, the token in the
 * Authorization header only, events:consume before the upgrade, no URL parameters, no cross-origin
 * Origin, no compression, the per-node connection limit, and refusals that carry the envelope.
 */
import { validateErrorEnvelope } from '@orbit/generated';
import { ERROR_TABLE, type ErrorCode } from '@orbit/spec/errors';
import { CONNECT_PATH, SUBPROTOCOL } from '@orbit/spec/protocol';
import { type ConformanceCase, defineCase } from '../case.ts';
import { CheckFailure } from '../errors.ts';
import type { CaseContext } from '../context.ts';
import { memberAt } from '../members.ts';
import type { EventConnection, UpgradeOutcome } from '../ws.ts';

function refused(ctx: CaseContext, outcome: UpgradeOutcome, codes: readonly ErrorCode[], what: string): ErrorCode {
  if (outcome.kind === 'open') throw new CheckFailure(`${what}: the upgrade succeeded (101), expected ${codes.join(' or ')}`);
  const code = memberAt(outcome.json, 'error', 'code');
  const match = codes.find((c) => c === code && ERROR_TABLE[c].status === outcome.status);
  if (!match)
    throw new CheckFailure(
      `${what}: expected ${codes.map((c) => `${ERROR_TABLE[c].status} ${c}`).join(' or ')}, got HTTP ${outcome.status} ` +
        `${outcome.body.slice(0, 200)}`,
    );
  ctx.validate(validateErrorEnvelope, outcome.json, `${what}: the refusal body`);
  return match;
}

export const upgradeCases: ConformanceCase[] = [
  defineCase({
    id: 'upgrade.protocol-required',
    area: 'upgrade',
    level: 'MUST',
    title: 'MUST refuse an upgrade that does not offer orbit.events.v1 with 426 PROTOCOL_REQUIRED',
    seed: ['s7-19', 's5-1'],
    async run(ctx: CaseContext) {
      refused(ctx, await ctx.upgrade('full', { protocols: [] }), ['PROTOCOL_REQUIRED'], 'upgrade without a subprotocol');
      refused(
        ctx,
        await ctx.upgrade('full', { protocols: ['orbit.events.v2'] }),
        ['PROTOCOL_REQUIRED'],
        'upgrade offering only orbit.events.v2',
      );
      refused(
        ctx,
        await ctx.upgrade('full', { protocols: ['Orbit.Events.V1'] }),
        ['PROTOCOL_REQUIRED'],
        'upgrade offering Orbit.Events.V1 (subprotocol names are case-sensitive)',
      );
    },
  }),
  defineCase({
    id: 'upgrade.protocol-selected',
    area: 'upgrade',
    level: 'MUST',
    title: 'MUST select orbit.events.v1 in Sec-WebSocket-Protocol when it is among the offered subprotocols',
    seed: ['s5-1'],
    async run(ctx: CaseContext) {
      const outcome = await ctx.upgrade('full', { protocols: ['chat.example', SUBPROTOCOL] });
      ctx.check(outcome.kind === 'open', `upgrade offering two subprotocols was refused: HTTP ${outcome.status}`);
      ctx.equal(outcome.headers['sec-websocket-protocol'], SUBPROTOCOL, 'Sec-WebSocket-Protocol of the 101 response');
    },
  }),
  defineCase({
    id: 'upgrade.refusal-envelope',
    area: 'upgrade',
    level: 'MUST',
    title: 'MUST send upgrade refusals as ordinary error envelopes with X-Request-ID and Cache-Control: no-store',
    seed: ['s1-18'],
    async run(ctx: CaseContext) {
      for (const [what, outcome] of [
        ['426', await ctx.upgrade('full', { protocols: [] })],
        ['401', await ctx.upgrade(null)],
      ] as const) {
        if (outcome.kind !== 'refused') throw new CheckFailure(`${what}: the upgrade succeeded`);
        ctx.validate(validateErrorEnvelope, outcome.json, `${what} body`);
        ctx.equal(outcome.headers['x-request-id'], outcome.json.request_id, `${what}: X-Request-ID versus request_id`);
        ctx.check(
          String(outcome.headers['cache-control'] ?? '').includes('no-store'),
          `${what}: Cache-Control is ${JSON.stringify(outcome.headers['cache-control'] ?? null)}`,
        );
      }
    },
  }),
  defineCase({
    id: 'upgrade.unauthenticated',
    area: 'upgrade',
    level: 'MUST',
    title: 'MUST refuse an upgrade without a valid bearer token (401 UNAUTHENTICATED)',
    seed: ['s5-1', 's7-11'],
    async run(ctx: CaseContext) {
      refused(ctx, await ctx.upgrade(null), ['UNAUTHENTICATED'], 'upgrade without a token');
      refused(
        ctx,
        await ctx.upgrade(null, { headers: { authorization: 'Bearer not-a-token' } }),
        ['UNAUTHENTICATED'],
        'upgrade with a wrong token',
      );
    },
  }),
  defineCase({
    id: 'upgrade.consume-permission-required',
    area: 'upgrade',
    level: 'MUST',
    title: 'MUST check events:consume before the upgrade; read permission does not replace it (403 PERMISSION_DENIED)',
    seed: ['s5-3', 's5-4', 's1-17'],
    async run(ctx: CaseContext) {
      refused(ctx, await ctx.upgrade('readOnly'), ['PERMISSION_DENIED'], 'upgrade as readOnly');
      refused(ctx, await ctx.upgrade('noEvents'), ['PERMISSION_DENIED'], 'upgrade as noEvents');
      const ok = await ctx.upgrade('consumeOnly');
      ctx.check(ok.kind === 'open', `upgrade as consumeOnly was refused: HTTP ${ok.status}`);
    },
  }),
  defineCase({
    id: 'upgrade.url-parameters-rejected',
    area: 'upgrade',
    level: 'MUST',
    title: 'MUST refuse URL parameters on the upgrade, a token in the query above all',
    seed: ['s5-2', 's1-3'],
    async run(ctx: CaseContext) {
      const token = encodeURIComponent(ctx.token('full'));
      refused(
        ctx,
        await ctx.upgrade(null, { target: `${CONNECT_PATH}?access_token=${token}` }),
        ['UNAUTHENTICATED', 'INVALID_ARGUMENT'],
        'upgrade with the token only in the query',
      );
      refused(
        ctx,
        await ctx.upgrade('full', { target: `${CONNECT_PATH}?subscription_id=x` }),
        ['INVALID_ARGUMENT'],
        'upgrade with a header token and a query parameter',
      );
    },
  }),
  defineCase({
    id: 'upgrade.cross-origin-rejected',
    area: 'upgrade',
    level: 'MUST',
    title: 'MUST refuse an upgrade from a cross-site Origin',
    seed: ['s5-2'],
    async run(ctx: CaseContext) {
      for (const origin of ['https://evil.example', 'null']) {
        refused(
          ctx,
          await ctx.upgrade('full', { headers: { origin } }),
          ['PERMISSION_DENIED', 'INVALID_ARGUMENT'],
          `upgrade with Origin ${origin}`,
        );
      }
    },
  }),
  defineCase({
    id: 'upgrade.same-origin-accepted',
    area: 'upgrade',
    level: 'SHOULD',
    title: "SHOULD accept an upgrade whose Origin is the server's own origin",
    seed: ['s5-2'],
    async run(ctx: CaseContext) {
      const outcome = await ctx.upgrade('full', { headers: { origin: new URL(ctx.config.baseUrl).origin } });
      ctx.check(outcome.kind === 'open', `same-origin upgrade refused: HTTP ${outcome.status}`);
    },
  }),
  defineCase({
    id: 'upgrade.compression-disabled',
    area: 'upgrade',
    level: 'MUST',
    title: 'MUST decline permessage-deflate',
    seed: ['s5-5'],
    async run(ctx: CaseContext) {
      const outcome = await ctx.upgrade('full', { offerCompression: true });
      ctx.check(outcome.kind === 'open', `upgrade offering compression was refused: HTTP ${outcome.status}`);
      const extensions = String(outcome.headers['sec-websocket-extensions'] ?? '');
      ctx.check(!/permessage-deflate/i.test(extensions), `the server accepted compression: Sec-WebSocket-Extensions: ${extensions}`);
    },
  }),
  defineCase({
    id: 'upgrade.capacity-exceeded',
    area: 'upgrade',
    level: 'MUST',
    title: 'MUST refuse the connection beyond the node limit with 429 CAPACITY_EXCEEDED and Retry-After: 1',
    seed: ['s5-18', 's7-20'],
    features: ['connection-limit'],
    timeoutMs: 120_000,
    async run(ctx: CaseContext) {
      const sub = await ctx.createSubscription();
      const open: EventConnection[] = [];
      for (let i = 0; i < ctx.config.limits.maxConnections; i++) {
        const outcome = await ctx.upgrade('full');
        if (outcome.kind !== 'open')
          throw new CheckFailure(
            `connection ${i + 1} of ${ctx.config.limits.maxConnections} was refused: HTTP ${outcome.status} ${outcome.body}`,
          );
        open.push(outcome.conn);
        const welcome = await outcome.conn.hello(sub.id, 1, ctx.replyMs);
        ctx.check(welcome.type === 'events.welcome', `hello on connection ${i + 1}: ${welcome.$text}`);
      }
      const over = await ctx.upgrade('full');
      refused(ctx, over, ['CAPACITY_EXCEEDED'], `connection ${ctx.config.limits.maxConnections + 1}`);
      ctx.equal(over.kind === 'refused' ? over.headers['retry-after'] : undefined, '1', 'Retry-After');
      await open[0]!.close();
      await ctx.eventually(
        async () => (await ctx.upgrade('full')).kind === 'open',
        5_000,
        'a connection to be accepted again after one closed',
      );
    },
  }),
  defineCase({
    id: 'upgrade.cross-origin-refusal',
    area: 'upgrade',
    level: 'MAY',
    title: 'MAY refuse a cross-site Origin with 403 PERMISSION_DENIED or 400 INVALID_ARGUMENT: reports which',
    seed: ['s5-2'],
    async run(ctx: CaseContext) {
      const code = refused(
        ctx,
        await ctx.upgrade('full', { headers: { origin: 'https://evil.example' } }),
        ['PERMISSION_DENIED', 'INVALID_ARGUMENT'],
        'upgrade with Origin https://evil.example',
      );
      ctx.observe(`a cross-site Origin is refused with ${ERROR_TABLE[code].status} ${code}`);
    },
  }),
];

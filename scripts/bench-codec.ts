/**
 * @module bench-codec
 * Benchmark of the strict codec (`npm run bench:codec`; not a test). Times `JSON.parse` alone
 * against `parseStrict` alone, with raw passthrough, and with frame validation (when
 * `@orbit/generated` provides `validateServerFrame` / `validateClientFrame`), on a small
 * client frame, on the seed's `event.deliver` example and on a 64 KiB `event.deliver` whose
 * snapshot carries a large nested result; and `JSON.stringify` against `stringify`.
 * Prints a table with ops/s, µs/op, the ratio to the native function and whether strict
 * parsing meets the bar of at most 3× `JSON.parse`.
 *
 * Method: each operation is warmed up, then measured in interleaved rounds of batches sized
 * for about 8 ms, each after a full garbage collection; the median over rounds is reported. Total runtime stays well under 30 s.
 */

import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { parseStrict, stringify } from '@orbit/spec/codec';

// A full garbage collection before each timed batch keeps one operation's garbage from
// being collected on another's clock.
setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

type Validator = (data: unknown) => boolean;

const RESULT_PATH = [['body', 'event', 'snapshot', 'result']] as const;
const BAR = 3;
const ROUNDS = 15;
const BATCH_MS = 8;
const WARMUP_MS = 150;

function deliverFrame(result?: unknown): Record<string, unknown> {
  return {
    protocol_version: '1',
    type: 'event.deliver',
    message_id: 'cccccccccccccccccccccccccccccccc',
    session_id: '44444444444444444444444444444444',
    body: {
      delivery: {
        created_at: '2026-09-17T10:00:00Z',
        id: '33333333333333333333333333333333',
        subscription_id: '22222222222222222222222222222222',
        event_id: '55555555555555555555555555555555',
        sequence: '13',
        revision: '2',
        state: 'LEASED',
        available_at: '2026-09-17T10:00:00Z',
        lease_epoch: '1',
        lease_until: '2026-09-17T10:00:30Z',
        attempts: 1,
        attempt_budget: 20,
      },
      event: {
        id: '55555555555555555555555555555555',
        sequence: '13',
        type: 'task.cancelled',
        aggregate_kind: 'task',
        aggregate_id: '66666666666666666666666666666666',
        aggregate_revision: '2',
        occurred_at: '2026-09-17T10:00:00Z',
        details: { state: 'CANCELLED', reason: 'CANCEL_REQUESTED' },
        snapshot: {
          schema_version: 1,
          task_id: '66666666666666666666666666666666',
          queue_id: '11111111111111111111111111111111',
          state: 'CANCELLED',
          revision: '2',
          effect_uncertain: false,
          ...(result === undefined ? {} : { result }),
        },
      },
      lease_secret: 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
    },
  };
}

const ackFrame = {
  protocol_version: '1',
  type: 'event.ack',
  message_id: 'dddddddddddddddddddddddddddddddd',
  session_id: '44444444444444444444444444444444',
  body: {
    delivery_id: '33333333333333333333333333333333',
    epoch: '1',
    lease_secret: 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
  },
};

/** A deliver frame of at least `bytes` characters: a result of nested records. */
function largeDeliverText(bytes: number): string {
  const items: unknown[] = [];
  const result = { order_id: '9007199254740993123', items, totals: { count: 0, amount: 0 } };
  for (let i = 0; ; i++) {
    items.push({
      sku: `SKU-${String(i).padStart(6, '0')}`,
      quantity: (i % 7) + 1,
      unit_price: 19.99 + i,
      attributes: { color: i % 2 === 0 ? 'red' : 'blue', sizes: ['S', 'M', 'L'], fragile: i % 5 === 0 },
      note: 'packed in a recyclable box; handle with care',
    });
    result.totals = { count: i + 1, amount: i * 21.5 };
    const text = JSON.stringify(deliverFrame(result));
    if (text.length >= bytes) return text;
  }
}

interface Op {
  readonly group: string;
  readonly name: string;
  readonly run: () => unknown;
  /** The native baseline of the group, for the ratio. */
  readonly baseline: boolean;
  /** Whether the ≤3× bar applies. */
  readonly bar: boolean;
  samples: number[];
  iterations: number;
}

function calibrate(run: () => unknown): number {
  const start = performance.now();
  let n = 0;
  while (performance.now() - start < WARMUP_MS) {
    run();
    n++;
  }
  const perOp = (performance.now() - start) / n;
  return Math.max(1, Math.round(BATCH_MS / perOp));
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

let sink = 0;

async function loadValidators(): Promise<{ server?: Validator; client?: Validator; note: string }> {
  try {
    const generated = (await import('@orbit/generated')) as Record<string, unknown>;
    const server = generated.validateServerFrame;
    const client = generated.validateClientFrame;
    if (typeof server !== 'function') return { note: 'validation skipped: @orbit/generated has no validateServerFrame' };
    return {
      server: server as Validator,
      client: typeof client === 'function' ? (client as Validator) : undefined,
      note: 'validation: @orbit/generated validateServerFrame / validateClientFrame',
    };
  } catch (error) {
    return { note: `validation skipped: cannot import @orbit/generated (${(error as Error).message.split('\n')[0]})` };
  }
}

async function main(): Promise<void> {
  const validators = await loadValidators();
  const ackText = JSON.stringify(ackFrame);
  // The result carries a 30-digit integer that only raw passthrough keeps exact.
  const deliverText = JSON.stringify(deliverFrame({ digest: 'sha256:0f3a', amount: '<amount>' })).replace(
    '"<amount>"',
    '123456789012345678901234567890',
  );
  const largeText = largeDeliverText(64 * 1024);
  const cases = [
    { label: `event.ack ${ackText.length} B`, text: ackText, validate: validators.client, raw: false },
    { label: `event.deliver ${deliverText.length} B`, text: deliverText, validate: validators.server, raw: true },
    { label: `event.deliver ${(largeText.length / 1024).toFixed(1)} KiB`, text: largeText, validate: validators.server, raw: true },
  ];

  const ops: Op[] = [];
  const notes: string[] = [validators.note];
  const add = (group: string, name: string, run: () => unknown, baseline = false, bar = false): void => {
    ops.push({ group, name, run, baseline, bar, samples: [], iterations: 0 });
  };
  for (const c of cases) {
    const text = c.text;
    add(c.label, 'JSON.parse', () => JSON.parse(text), true);
    add(c.label, 'parseStrict', () => parseStrict(text), false, true);
    if (c.raw) add(c.label, 'parseStrict raw result', () => parseStrict(text, { raw: RESULT_PATH }), false, true);
    const validate = c.validate;
    const parse = (): unknown => (c.raw ? parseStrict(text, { raw: RESULT_PATH }) : parseStrict(text));
    if (validate?.(parse())) {
      add(c.label, 'parseStrict + validate', () => {
        const frame = parse();
        if (!validate(frame)) throw new Error(`benchmark frame stopped validating: ${c.label}`);
        return frame;
      });
    } else if (validate !== undefined) {
      const errors = (validate as { errors?: unknown }).errors;
      notes.push(`validation skipped for ${c.label}: the validator rejects the frame ${JSON.stringify(errors)}`);
    }
  }
  for (const c of cases.slice(1)) {
    const plain = JSON.parse(c.text) as unknown;
    const withRaw = parseStrict(c.text, { raw: RESULT_PATH });
    const group = `stringify ${c.label.replace('event.deliver ', 'deliver ')}`;
    add(group, 'JSON.stringify', () => JSON.stringify(plain), true);
    add(group, 'stringify', () => stringify(plain));
    add(group, 'stringify raw result', () => stringify(withRaw));
  }

  // Sanity: the strict parser agrees with JSON.parse on every frame, raw passes through.
  for (const c of cases) {
    if (JSON.stringify(parseStrict(c.text)) !== JSON.stringify(JSON.parse(c.text))) throw new Error('disagreement');
    if (c.raw && stringify(parseStrict(c.text, { raw: RESULT_PATH })) !== c.text) throw new Error('raw round trip');
  }

  const started = performance.now();
  for (const op of ops) op.iterations = calibrate(op.run);
  for (let round = 0; round < ROUNDS; round++) {
    for (const op of ops) {
      collectGarbage();
      const t0 = performance.now();
      for (let i = 0; i < op.iterations; i++) sink ^= op.run() === undefined ? 1 : 0;
      op.samples.push(((performance.now() - t0) * 1000) / op.iterations);
    }
  }
  const elapsed = (performance.now() - started) / 1000;

  const rows: string[][] = [['case', 'operation', 'ops/s', 'µs/op', 'ratio', '≤3× bar']];
  let failed = 0;
  let baselineUs = 0;
  for (const op of ops) {
    const us = median(op.samples);
    if (op.baseline) baselineUs = us;
    const ratio = us / baselineUs;
    const verdict = op.bar ? (ratio <= BAR ? 'met' : 'NOT MET') : '';
    if (op.bar && ratio > BAR) failed++;
    rows.push([op.group, op.name, Math.round(1e6 / us).toLocaleString('en-US'), us.toFixed(2), `${ratio.toFixed(2)}×`, verdict]);
  }
  const widths = rows[0]!.map((_, col) => Math.max(...rows.map((r) => r[col]!.length)));
  const line = (r: string[]): string =>
    r.map((cell, col) => (col >= 2 && col <= 4 ? cell.padStart(widths[col]!) : cell.padEnd(widths[col]!))).join('  ');
  console.log(`strict codec benchmark: node ${process.version}, ${ROUNDS} rounds, median µs/op`);
  for (const note of notes) console.log(note);
  console.log('');
  console.log(line(rows[0]!));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  let previous = '';
  for (const r of rows.slice(1)) {
    if (previous !== '' && r[0] !== previous) console.log('');
    previous = r[0]!;
    console.log(line(r));
  }
  console.log('');
  console.log(`ratio: to JSON.parse (parse rows) or JSON.stringify (stringify rows) of the same case; measured in ${elapsed.toFixed(1)} s`);
  console.log('raw result: the snapshot result is a RawJson (parseStrict with raw paths), written back verbatim by stringify;');
  console.log('  in the 64 KiB frame it is nearly the whole text, so stringify copies it instead of serializing it.');
  console.log(failed === 0 ? 'bar met: strict parsing ≤ 3× JSON.parse on every frame' : `bar NOT met on ${failed} row(s)`);
  if (sink === 42) console.log('');
}

await main();

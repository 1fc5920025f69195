import { describe, expect, it } from 'vitest';
import { type FinalState, HistoryLog, judge } from '../src/history.ts';

const T0 = Date.parse('2026-01-01T00:00:00Z');
const id = (n: number, kind: string) => `${kind}${String(n).padStart(31, '0')}`;

/** Three results, each published once, delivered once in session s1 with a 1 s lease and ACKed. */
function clean(): { history: HistoryLog; final: FinalState } {
  const history = new HistoryLog();
  const deliveries: { id: string; eventId: string; state: string; epoch: bigint }[] = [];
  for (let n = 1; n <= 3; n++) {
    history.published(`k${n}`, { data: { event: { id: id(n, 'e'), sequence: String(n) } } });
    history.receipts.push({ session: 's1', deliveryId: id(n, 'd'), eventId: id(n, 'e'), epoch: 1n, leaseUntil: T0 + 1000, at: T0 + n });
    history.acks.push({ deliveryId: id(n, 'd'), epoch: 1n, at: T0 + 10 + n });
    deliveries.push({ id: id(n, 'd'), eventId: id(n, 'e'), state: 'ACKED', epoch: 1n });
  }
  const final: FinalState = {
    results: [1, 2, 3].map((n) => ({ sequence: BigInt(n), id: id(n, 'e') })),
    log: { min: 1n, max: 3n, count: 3 },
    deliveries,
  };
  return { history, final };
}

describe('judge', () => {
  it('passes a history the delivery rules allow, and reports redeliveries and recovery', () => {
    const { history, final } = clean();
    // Delivery 1 ran out in s1 and came again in s2 after its lease ended.
    history.marks.push({ name: 'the cut', at: T0 + 5 });
    history.receipts.push({ session: 's2', deliveryId: id(1, 'd'), eventId: id(1, 'e'), epoch: 2n, leaseUntil: T0 + 3000, at: T0 + 1500 });
    history.acks.splice(0, 1, { deliveryId: id(1, 'd'), epoch: 2n, at: T0 + 1600 });
    const final2 = { ...final, deliveries: final.deliveries.map((d, i) => (i === 0 ? { ...d, epoch: 2n } : d)) };
    const check = judge(history, final2);
    expect(check.failures).toEqual([]);
    expect(check.redeliveries).toBe(1);
    // ACKs at +11, +12, +13 (kept) and +1600 after the cut at +5.
    expect(check.recovery).toEqual([{ name: 'the cut', ms: 7, stallMs: 1587 }]);
  });

  it('fails a key answered with two events, and an event no key answered', () => {
    const { history, final } = clean();
    history.published('k1', { data: { event: { id: id(9, 'e'), sequence: '9' } } });
    const check = judge(history, { ...final, results: [...final.results, { sequence: 4n, id: id(4, 'e') }] });
    expect(check.failures.join('\n')).toMatch(/key k1 answered with 2 events/);
    expect(check.failures.join('\n')).toMatch(/sequence 4\) has no acknowledged key/);
  });

  it('fails a gap in the log', () => {
    const { history, final } = clean();
    expect(judge(history, { ...final, log: { min: 1n, max: 4n, count: 3 } }).failures).toEqual([
      'no sequence gap (sequences 1..4, 3 results): 1 sequences missing',
    ]);
  });

  it('fails a delivery left PENDING, and one ACKED that no consumer received', () => {
    const { history, final } = clean();
    history.receipts.splice(2, 1);
    history.acks.splice(2, 1);
    const deliveries = final.deliveries.map((d, i) => (i === 0 ? { ...d, state: 'PENDING' } : d));
    const text = judge(history, { ...final, deliveries }).failures.join('\n');
    expect(text).toMatch(/is PENDING/);
    expect(text).toMatch(/ACKED but no consumer received it/);
  });

  it('fails a newer epoch that arrived before the older lease ended, and one epoch in two sessions', () => {
    const { history, final } = clean();
    history.receipts.push({ session: 's2', deliveryId: id(1, 'd'), eventId: id(1, 'e'), epoch: 2n, leaseUntil: T0 + 3000, at: T0 + 500 });
    history.receipts.push({ session: 's3', deliveryId: id(2, 'd'), eventId: id(2, 'e'), epoch: 1n, leaseUntil: T0 + 1000, at: T0 + 50 });
    const deliveries = final.deliveries.map((d, i) => (i === 0 ? { ...d, epoch: 2n } : d));
    const text = judge(history, { ...final, deliveries }).failures.join('\n');
    expect(text).toMatch(/epoch 2 arrived 500 ms before epoch 1's lease ended/);
    expect(text).toMatch(/epoch 1 reached sessions s1 and s3/);
  });

  it('fails an event.deliver for an epoch the database never held, or after its lease ended', () => {
    const { history, final } = clean();
    history.receipts.push({ session: 's2', deliveryId: id(3, 'd'), eventId: id(3, 'e'), epoch: 2n, leaseUntil: T0 + 3000, at: T0 + 2000 });
    history.receipts.push({ session: 's2', deliveryId: id(2, 'd'), eventId: id(2, 'e'), epoch: 1n, leaseUntil: T0 + 10, at: T0 + 1300 });
    const text = judge(history, final).failures.join('\n');
    expect(text).toMatch(/epoch 2 sent, the database holds 1/);
    expect(text).toMatch(/arrived 1290 ms after its lease ended/);
  });

  it('fails an ACK reply the database no longer holds', () => {
    const { history, final } = clean();
    const deliveries = final.deliveries.map((d, i) => (i === 1 ? { ...d, state: 'LEASED', epoch: 2n } : d));
    expect(judge(history, { ...final, deliveries }).failures.join('\n')).toMatch(/epoch 1 answered, now LEASED epoch 2/);
  });
});

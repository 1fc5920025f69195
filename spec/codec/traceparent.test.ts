import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { validateTraceContext } from '@orbit/generated';
import { formatTraceparent, parseTraceparent } from './traceparent.ts';

const hex = (n: number) => fc.stringMatching(new RegExp(`^[0-9a-f]{${n}}$`));

describe('traceparent', () => {
  it('reads back what it writes, and agrees with the TraceContext schema on any text (property)', () => {
    fc.assert(
      fc.property(hex(32), hex(16), fc.integer({ min: 0, max: 255 }), (traceId, spanId, traceFlags) => {
        const text = formatTraceparent({ traceId, spanId, traceFlags });
        const parsed = parseTraceparent(text);
        expect(parsed === undefined).toBe(/^0+$/.test(traceId) || /^0+$/.test(spanId));
        if (parsed) expect(parsed).toEqual({ traceId, spanId, traceFlags });
        expect(validateTraceContext({ traceparent: text })).toBe(parsed !== undefined);
      }),
    );
    fc.assert(
      fc.property(fc.string(), (text) => {
        expect(parseTraceparent(text) !== undefined).toBe(validateTraceContext({ traceparent: text }));
      }),
    );
  });

  it('refuses another version, upper case and all-zero ids', () => {
    const ok = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    expect(parseTraceparent(ok)).toEqual({ traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', traceFlags: 1 });
    for (const bad of [
      ok.replace(/^00/, '01'),
      ok.toUpperCase(),
      `00-${'0'.repeat(32)}-b7ad6b7169203331-01`,
      `00-0af7651916cd43dd8448eb211c80319c-${'0'.repeat(16)}-01`,
    ])
      expect(parseTraceparent(bad)).toBeUndefined();
  });
});

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { StrictJsonError } from './errors.ts';
import { depthOf, documentArb, duplicateChoiceArb, injectDuplicate, layoutArb, render, sameJson } from './json-arbitraries.ts';
import { findStrictJsonError } from './json-validate.ts';
import { RawJson, isRawJson, parseStrict, stringify } from './json.ts';

const RUNS = { numRuns: 1000 };
const MARK = '\u0000raw json goes here\u0000';
const noEscapes = layoutArb.map((layout) => ({ ...layout, escapes: [] }));

function thrown(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  return undefined;
}

describe('parseStrict agrees with JSON.parse on documents without duplicate keys', () => {
  it('fc.jsonValue() serialized by JSON.stringify', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const text = JSON.stringify(value);
        expect(sameJson(parseStrict(text), JSON.parse(text))).toBe(true);
      }),
      RUNS,
    );
  });

  it('random trees with random keys, whitespace and key escapes', () => {
    fc.assert(
      fc.property(documentArb, layoutArb, (document, layout) => {
        const { text } = render(document, layout);
        fc.pre(depthOf(document) <= 64);
        expect(sameJson(parseStrict(text), JSON.parse(text))).toBe(true);
        expect(findStrictJsonError(text, 64)).toBeNull();
      }),
      RUNS,
    );
  });
});

describe('parseStrict rejects every document with an injected duplicate key', () => {
  for (const escaped of [false, true]) {
    it(escaped ? 'with the duplicate name escaped (\\uXXXX of one of its characters)' : 'written literally', () => {
      fc.assert(
        fc.property(documentArb, escaped ? layoutArb : noEscapes, duplicateChoiceArb(escaped), (document, layout, choice) => {
          const injected = injectDuplicate(document, choice);
          const { text, marks } = render(injected.document, layout);
          if (escaped) expect(text.indexOf('\\u', marks[0])).toBeGreaterThan(marks[0]!);
          const error = thrown(() => parseStrict(text));
          expect(error).toBeInstanceOf(StrictJsonError);
          const e = error as StrictJsonError;
          expect(e.reason).toBe('duplicate_key');
          expect(e.path).toBe(injected.path);
          expect(e.key).toBe(injected.key);
          expect(e.offset).toBe(marks[0]);
          // The validator alone finds the same error.
          expect(findStrictJsonError(text, 64)).toMatchObject({ reason: e.reason, offset: e.offset, path: e.path });
        }),
        RUNS,
      );
    });
  }
});

describe('parseStrict and the reference validator agree', () => {
  const mutationArb = fc.record({
    at: fc.nat(),
    kind: fc.constantFrom('insert', 'delete', 'replace'),
    char: fc.constantFrom(...'{}[],:"\\ 0123456789.eE+-tnfalsu/\'x\t\n\u0000\u00a0\ufeff\u2028'.split('')),
  });

  it('on mutated documents: syntax iff JSON.parse throws; otherwise the same verdict', () => {
    fc.assert(
      fc.property(documentArb, layoutArb, mutationArb, (document, layout, mutation) => {
        const base = render(document, layout).text;
        const at = mutation.at % (base.length + 1);
        const text =
          mutation.kind === 'insert'
            ? base.slice(0, at) + mutation.char + base.slice(at)
            : mutation.kind === 'delete'
              ? base.slice(0, at) + base.slice(at + 1)
              : base.slice(0, at) + mutation.char + base.slice(at + 1);
        let nativeThrows = false;
        try {
          JSON.parse(text);
        } catch {
          nativeThrows = true;
        }
        const reference = findStrictJsonError(text, 64);
        const error = thrown(() => parseStrict(text));
        if (nativeThrows) {
          expect(error).toBeInstanceOf(StrictJsonError);
          expect((error as StrictJsonError).reason).toBe('syntax');
          expect((error as StrictJsonError).offset).toBeGreaterThanOrEqual(0);
          expect((error as StrictJsonError).offset).toBeLessThanOrEqual(text.length);
        } else if (reference === null) {
          expect(error).toBeUndefined();
        } else {
          expect(error).toBeInstanceOf(StrictJsonError);
          expect(reference.reason).not.toBe('syntax');
        }
        if (error !== undefined) {
          expect(error).toMatchObject({ reason: reference?.reason, offset: reference?.offset, path: reference?.path });
        }
      }),
      RUNS,
    );
  });

  it('on nesting: depth error iff deeper than maxDepth', () => {
    fc.assert(
      fc.property(documentArb, layoutArb, fc.integer({ min: 0, max: 8 }), (document, layout, maxDepth) => {
        const { text } = render(document, layout);
        const error = thrown(() => parseStrict(text, { maxDepth }));
        if (depthOf(document) > maxDepth) {
          expect(error).toBeInstanceOf(StrictJsonError);
          expect((error as StrictJsonError).reason).toBe('depth');
        } else {
          expect(error).toBeUndefined();
        }
      }),
      RUNS,
    );
  });
});

describe('raw passthrough', () => {
  const wrapperArb = fc.record({
    value: documentArb,
    inner: layoutArb,
    outer: fc.array(fc.constantFrom('', ' ', '\n', '\t', '\r\n'), { minLength: 5, maxLength: 5 }),
    before: fc.option(fc.jsonValue({ maxDepth: 2 }), { nil: undefined }),
    after: fc.option(fc.jsonValue({ maxDepth: 2 }), { nil: undefined }),
  });

  it('keeps the exact slice of {"result": <text>} and stringify writes it back verbatim', () => {
    fc.assert(
      fc.property(wrapperArb, ({ value, inner, outer, before, after }) => {
        fc.pre(depthOf(value) < 64);
        const slice = render(value, inner).text.trim();
        const [w0, w1, w2, w3, w4] = outer as [string, string, string, string, string];
        const head = before === undefined ? '' : `"before":${JSON.stringify(before)},`;
        const tail = after === undefined ? '' : `,"after":${JSON.stringify(after)}`;
        const text = `${w0}{${w1}${head}"result"${w2}:${w3}${slice}${tail}${w4}}${w0}`;
        const parsed = parseStrict(text, { raw: [['result']] }) as Record<string, unknown>;
        expect(isRawJson(parsed.result)).toBe(true);
        expect((parsed.result as RawJson).text).toBe(slice);
        expect(sameJson(JSON.parse((parsed.result as RawJson).text), JSON.parse(slice))).toBe(true);
        expect(stringify(parsed)).toBe(`{${head}"result":${slice}${tail}}`);
      }),
      RUNS,
    );
  });

  it('stringify equals JSON.stringify on values without RawJson', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(stringify(value)).toBe(JSON.stringify(value));
      }),
      RUNS,
    );
  });

  it('stringify writes RawJson verbatim at any depth', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.array(fc.nat()), documentArb, layoutArb, (value, route, rawDocument, layout) => {
        fc.pre(depthOf(rawDocument) < 64);
        const rawText = render(rawDocument, layout).text.trim();
        // Put a RawJson somewhere along `route` (or at the top when the route ends early).
        const placeholder = { [MARK]: true };
        const wrap = (v: unknown, steps: number[]): unknown => {
          const [step, ...rest] = steps;
          if (step === undefined) return placeholder;
          if (Array.isArray(v) && v.length > 0) return v.map((item, i) => (i === step % v.length ? wrap(item, rest) : item));
          if (typeof v === 'object' && v !== null && Object.keys(v).length > 0) {
            const keys = Object.keys(v);
            const chosen = keys[step % keys.length]!;
            return Object.fromEntries(
              keys.map((k) => [k, k === chosen ? wrap((v as Record<string, unknown>)[k], rest) : (v as Record<string, unknown>)[k]]),
            );
          }
          return placeholder;
        };
        const shape = wrap(value, route);
        const expected = JSON.stringify(shape).replace(JSON.stringify(placeholder), () => rawText);
        const withRaw = JSON.parse(JSON.stringify(shape), (_k, v: unknown) =>
          typeof v === 'object' && v !== null && (v as Record<string, unknown>)[MARK] === true ? new RawJson(rawText) : v,
        ) as unknown;
        expect(stringify(withRaw)).toBe(expected);
      }),
      RUNS,
    );
  });
});

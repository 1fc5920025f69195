import { describe, expect, it } from 'vitest';
import { StrictJsonError } from './errors.ts';
import { type RawJson, isRawJson, parseStrict, stringify } from './json.ts';

/** The error `parseStrict` throws for `text`, failing the test when it throws none. */
function errorOf(text: string, options?: Parameters<typeof parseStrict>[1]): StrictJsonError {
  try {
    parseStrict(text, options);
  } catch (error) {
    expect(error).toBeInstanceOf(StrictJsonError);
    return error as StrictJsonError;
  }
  throw new Error(`expected ${JSON.stringify(text)} to be rejected`);
}

function expectSyntax(text: string, offset?: number): void {
  expect(() => JSON.parse(text)).toThrow(SyntaxError);
  const error = errorOf(text);
  expect(error.reason).toBe('syntax');
  if (offset !== undefined) expect(error.offset).toBe(offset);
}

describe('parseStrict: syntax (exactly what JSON.parse rejects)', () => {
  it('rejects an empty text and whitespace only', () => {
    expectSyntax('', 0);
    expectSyntax(' \n\t\r', 4);
  });
  it('rejects a trailing comma in an object', () => expectSyntax('{"a":1,}', 7));
  it('rejects a trailing comma in an array', () => expectSyntax('[1,2,]', 5));
  it('rejects a leading comma and doubled commas', () => {
    expectSyntax('[,1]', 1);
    expectSyntax('[1,,2]', 3);
    expectSyntax('{,"a":1}', 1);
  });
  it('rejects line and block comments', () => {
    expectSyntax('// c\n{}', 0);
    expectSyntax('{/* c */"a":1}', 1);
    expectSyntax('[1 /* c */]', 3);
  });
  it('rejects single-quoted strings and keys', () => {
    expectSyntax("'a'", 0);
    expectSyntax("{'a':1}", 1);
  });
  it('rejects unquoted keys', () => expectSyntax('{a:1}', 1));
  it('rejects leading zeros', () => {
    expectSyntax('01', 1);
    expectSyntax('-01', 2);
    expectSyntax('00', 1);
    expectSyntax('[007]', 2);
  });
  it('rejects a plus sign, a bare dot and a dangling exponent', () => {
    expectSyntax('+1', 0);
    expectSyntax('.5', 0);
    expectSyntax('1.', 2);
    expectSyntax('1.e5', 2);
    expectSyntax('1e', 2);
    expectSyntax('1e+', 3);
    expectSyntax('-', 1);
  });
  it('rejects hex, Infinity, NaN and undefined', () => {
    expectSyntax('0x10', 1);
    expectSyntax('Infinity', 0);
    expectSyntax('-Infinity', 1);
    expectSyntax('NaN', 0);
    expectSyntax('undefined', 0);
  });
  it('rejects misspelt or capitalised literals', () => {
    expectSyntax('True', 0);
    expectSyntax('NULL', 0);
    expectSyntax('nul', 3);
    expectSyntax('[tru]', 4);
    expectSyntax('falsey', 5);
  });
  it('rejects unescaped control characters in strings', () => {
    expectSyntax('"a\tb"', 2);
    expectSyntax('"a\nb"', 2);
    expectSyntax('"\u0000"', 1);
    expectSyntax('"\u001f"', 1);
    expectSyntax('{"k\u0001":1}', 3);
  });
  it('accepts DEL and non-ASCII characters unescaped', () => {
    expect(parseStrict('"\u007f\u0080\u2028é😀"')).toBe('\u007f\u0080\u2028é😀');
  });
  it('rejects invalid escapes', () => {
    expectSyntax('"\\x"', 2);
    expectSyntax('"\\\'"', 2);
    expectSyntax('"\\u12"', 5);
    expectSyntax('"\\u12g4"', 5);
    expectSyntax('"\\U0041"', 2);
    expectSyntax('"\\', 2);
  });
  it('rejects unterminated strings, objects and arrays', () => {
    expectSyntax('"abc', 4);
    expectSyntax('{"a":1', 6);
    expectSyntax('[1', 2);
    expectSyntax('{"a"', 4);
    expectSyntax('{"a":', 5);
  });
  it('rejects missing and extra separators', () => {
    expectSyntax('{"a" 1}', 5);
    expectSyntax('{"a"::1}', 5);
    expectSyntax('{"a":1 "b":2}', 7);
    expectSyntax('[1 2]', 3);
    expectSyntax('{"a",1}', 4);
  });
  it('rejects whitespace other than space, tab, CR and LF', () => {
    expectSyntax('\ufeff{}', 0); // byte order mark
    expectSyntax('{}\u00a0', 2); // no-break space
    expectSyntax('[1,\u2028 2]', 3); // line separator
    expectSyntax('\f1', 0); // form feed
    expectSyntax('1\v', 1); // vertical tab
  });
  it('rejects anything after the value', () => {
    expectSyntax('{} x', 3);
    expectSyntax('1 2', 2);
    expectSyntax('[1]]', 3);
    expectSyntax('{"a":1}}', 7);
  });
  it('rejects a non-string text with a TypeError', () => {
    expect(() => parseStrict(42 as unknown as string)).toThrow(TypeError);
    expect(() => parseStrict(Buffer.from('{}') as unknown as string)).toThrow(TypeError);
  });
  it('says where in its message', () => {
    const text = '{\n  "body": {"x": [1,]}\n}';
    const error = errorOf(text);
    expect(error.reason).toBe('syntax');
    expect(error.offset).toBe(text.indexOf(']'));
    expect(error.offset).toBe(21);
    expect(error.path).toBe('/body/x');
    expect(error.message).toContain('offset 21 (line 2, column 20)');
    expect(error.message).toContain('/body/x');
  });
});

describe('parseStrict: accepts what JSON.parse accepts', () => {
  it.each([
    ['0'],
    ['-0'],
    ['1.5e-7'],
    ['1E+2'],
    ['true'],
    ['false'],
    ['null'],
    ['"s"'],
    [' \t\r\n[ \t\r\n1 \t\r\n, \t\r\n{ "a" : [ ] } ] \t\r\n'],
    ['"\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9"'],
    ['1e400'],
    ['{"":1,"a":{"":2}}'],
  ])('accepts %j like JSON.parse', (text) => {
    expect(parseStrict(text)).toStrictEqual(JSON.parse(text));
  });
  it('accepts lone surrogates, escaped or not, as JSON.parse does', () => {
    expect(parseStrict('"\\ud800"')).toBe('\ud800');
    expect(parseStrict('"\\udc00x"')).toBe('\udc00x');
    expect(parseStrict('"\ud800"')).toBe('\ud800');
    expect(parseStrict('{"\\udfff":1}')).toStrictEqual({ '\udfff': 1 });
  });
  it('returns plain objects created by JSON.parse', () => {
    const value = parseStrict('{"a":{"b":[{"c":null}]}}') as { a: { b: Array<{ c: null }> } };
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(Object.getPrototypeOf(value.a.b[0])).toBe(Object.prototype);
  });
});

describe('parseStrict: __proto__ and other special keys', () => {
  it('keeps a "__proto__" member as an own data property without touching the prototype', () => {
    const value = parseStrict('{"__proto__":{"polluted":true},"a":1}') as Record<string, unknown>;
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(Object.keys(value)).toStrictEqual(['__proto__', 'a']);
    expect(Object.getOwnPropertyDescriptor(value, '__proto__')).toStrictEqual({
      value: { polluted: true },
      writable: true,
      enumerable: true,
      configurable: true,
    });
    expect((value as { polluted?: unknown }).polluted).toBeUndefined();
    expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
  });
  it('keeps a nested and an escaped "__proto__" as own properties', () => {
    const value = parseStrict('{"x":[{"\\u005f_proto__":null}]}') as { x: Array<Record<string, unknown>> };
    const inner = value.x[0]!;
    expect(Object.getPrototypeOf(inner)).toBe(Object.prototype);
    expect(Object.hasOwn(inner, '__proto__')).toBe(true);
  });
  it('treats "constructor" and "prototype" as ordinary keys', () => {
    const value = parseStrict('{"constructor":{"prototype":{"x":1}}}') as Record<string, unknown>;
    expect(Object.hasOwn(value, 'constructor')).toBe(true);
    expect(({} as { x?: unknown }).x).toBeUndefined();
  });
  it('rejects a duplicated "__proto__"', () => {
    expect(errorOf('{"__proto__":1,"__proto__":2}').reason).toBe('duplicate_key');
  });
});

describe('parseStrict: duplicate keys', () => {
  it('rejects a duplicate at the top level', () => {
    const error = errorOf('{"a":1,"a":1}');
    expect(error.reason).toBe('duplicate_key');
    expect(error.offset).toBe(7);
    expect(error.path).toBe('');
    expect(error.key).toBe('a');
    expect(error.message).toMatch(/Duplicate key "a" at offset 7 .*top level/);
  });
  it('rejects keys equal only after unescaping', () => {
    const error = errorOf('{"a":1,"\\u0061":2}');
    expect(error).toMatchObject({ reason: 'duplicate_key', offset: 7, path: '', key: 'a' });
    expect(errorOf('{"\\u0041b":1,"A\\u0062":2}').key).toBe('Ab');
    expect(errorOf('{"\\/":1,"/":2}').key).toBe('/');
    expect(errorOf('{"😀":1,"\\ud83d\\ude00":2}').key).toBe('😀');
    expect(errorOf('{"\\uD83D\\uDE00":1,"\\ud83d\\ude00":2}').key).toBe('😀');
  });
  it('rejects a duplicate at any depth and names the object holding it', () => {
    const text = '{"body":{"event":{"id":"1","sequence":"2","id":"3"}}}';
    const error = errorOf(text);
    expect(error).toMatchObject({ reason: 'duplicate_key', path: '/body/event', key: 'id' });
    expect(error.offset).toBe(text.lastIndexOf('"id"'));
    expect(error.message).toContain('/body/event');
  });
  it('rejects a duplicate inside arrays, with array indices in the path', () => {
    expect(errorOf('[0,{"a":[{},{"b":1,"b":2}]}]').path).toBe('/1/a/1');
  });
  it('escapes "~" and "/" in the path', () => {
    expect(errorOf('{"a/b":{"c~d":{"x":1,"x":2}}}').path).toBe('/a~1b/c~0d');
  });
  it('rejects duplicates whatever the values', () => {
    expect(errorOf('{"a":{"x":1},"a":[1]}').reason).toBe('duplicate_key');
    expect(errorOf('{"a":null,"b":0,"a":null}').offset).toBe(16);
  });
  it('reports the first duplicate in document order', () => {
    const error = errorOf('{"x":{"a":1,"a":2},"b":1,"b":2}');
    expect(error).toMatchObject({ path: '/x', key: 'a' });
  });
  it('accepts keys that differ by case or normalisation form', () => {
    expect(parseStrict('{"a":1,"A":2}')).toStrictEqual({ a: 1, A: 2 });
    expect(Object.keys(parseStrict('{"é":1,"e\\u0301":2}') as object)).toHaveLength(2);
    expect(Object.keys(parseStrict('{"1":1,"01":2,"1.0":3}') as object)).toHaveLength(3);
  });
  it('accepts the same key in sibling and nested objects', () => {
    expect(parseStrict('{"a":{"a":{"a":1}},"b":[{"a":1},{"a":2}]}')).toBeTruthy();
  });
});

describe('parseStrict: nesting depth', () => {
  const nested = (levels: number): string => '['.repeat(levels) + ']'.repeat(levels);
  it('allows 64 levels by default and rejects 65', () => {
    expect(parseStrict(nested(64))).toBeTruthy();
    const error = errorOf(nested(65));
    expect(error).toMatchObject({ reason: 'depth', offset: 64 });
    expect(error.path).toBe('/0'.repeat(64));
  });
  it('counts objects and arrays alike', () => {
    expect(() => parseStrict('{"a":[{"b":[1]}]}', { maxDepth: 4 })).not.toThrow();
    expect(errorOf('{"a":[{"b":[[1]]}]}', { maxDepth: 4 })).toMatchObject({ reason: 'depth', path: '/a/0/b/0' });
  });
  it('honours maxDepth, down to 0 (scalars only)', () => {
    expect(parseStrict('1', { maxDepth: 0 })).toBe(1);
    expect(errorOf('[]', { maxDepth: 0 })).toMatchObject({ reason: 'depth', offset: 0, path: '' });
    expect(parseStrict(nested(200), { maxDepth: 200 })).toBeTruthy();
  });
  it('rejects a bad maxDepth with a RangeError', () => {
    for (const bad of [-1, 1.5, Number.NaN, Infinity, 1001]) {
      expect(() => parseStrict('1', { maxDepth: bad })).toThrow(RangeError);
    }
  });
  it('rejects very deep input without overflowing the stack', () => {
    expect(errorOf(nested(200_000)).reason).toBe('depth');
    expect(errorOf(`${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}`).reason).toBe('depth');
  });
  it('reports a too-deep container before a later duplicate and after an earlier one', () => {
    expect(errorOf('[[[1]],{"a":1,"a":2}]', { maxDepth: 2 }).reason).toBe('depth');
    expect(errorOf('[{"a":1,"a":2},[[1]]]', { maxDepth: 2 }).reason).toBe('duplicate_key');
  });
});

describe('parseStrict: error precedence', () => {
  it('reports a syntax error even after a duplicate key', () => {
    expect(errorOf('{"a":1,"a":2,}').reason).toBe('syntax');
    expect(errorOf('{"a":1,"a":2}x').reason).toBe('syntax');
  });
  it('reports a syntax error even after excessive nesting', () => {
    expect(errorOf('[[[[', { maxDepth: 2 }).reason).toBe('syntax');
  });
});

describe('parseStrict: raw passthrough', () => {
  it('keeps a 30-digit integer byte-exact', () => {
    const value = parseStrict('{"result":123456789012345678901234567890}', { raw: [['result']] }) as { result: RawJson };
    expect(isRawJson(value.result)).toBe(true);
    expect(value.result.text).toBe('123456789012345678901234567890');
    expect(stringify(value)).toBe('{"result":123456789012345678901234567890}');
  });
  it('keeps a decimal beyond double precision byte-exact', () => {
    const text = '{"result":0.1000000000000000055511151231257827}';
    const value = parseStrict(text, { raw: [['result']] }) as { result: RawJson };
    expect(value.result.text).toBe('0.1000000000000000055511151231257827');
    expect(stringify(value)).toBe(text);
  });
  it('keeps the exact slice of a nested value, inner whitespace and escapes included', () => {
    const text = '{"body":{"event":{"snapshot":{"state":"DONE","result" : { "n" : [ 1.50 , "\\u00e9" ] } }}}}';
    const value = parseStrict(text, { raw: [['body', 'event', 'snapshot', 'result']] }) as {
      body: { event: { snapshot: { state: string; result: RawJson } } };
    };
    expect(value.body.event.snapshot.state).toBe('DONE');
    expect(value.body.event.snapshot.result.text).toBe('{ "n" : [ 1.50 , "\\u00e9" ] }');
  });
  it('handles scalars, strings with brackets and escaped quotes, and null', () => {
    const text = '{"a":"}]\\"{[","b":null,"c":true,"d":-1.0e+3}';
    const value = parseStrict(text, { raw: [['a'], ['b'], ['c'], ['d']] }) as Record<string, RawJson>;
    expect(Object.values(value).map((r) => r.text)).toStrictEqual(['"}]\\"{["', 'null', 'true', '-1.0e+3']);
  });
  it('matches member names after unescaping', () => {
    const value = parseStrict('{"\\u0072esult":[1]}', { raw: [['result']] }) as { result: RawJson };
    expect(value.result.text).toBe('[1]');
  });
  it('does not match a name whose escapes spell something else', () => {
    const value = parseStrict('{"a\\\\n":1}', { raw: [['a\\n']] }) as Record<string, unknown>;
    expect(isRawJson(value['a\\n'])).toBe(true);
    const other = parseStrict('{"a\\n":1}', { raw: [['a\\n']] }) as Record<string, unknown>;
    expect(other['a\n']).toBe(1);
  });
  it('ignores absent paths and paths through arrays or scalars', () => {
    expect(parseStrict('{"a":[{"b":1}]}', { raw: [['a', '0', 'b'], ['x'], ['a', 'b']] })).toStrictEqual({ a: [{ b: 1 }] });
    expect(parseStrict('{"a":1}', { raw: [['a', 'b']] })).toStrictEqual({ a: 1 });
    expect(parseStrict('[{"a":1}]', { raw: [['a']] })).toStrictEqual([{ a: 1 }]);
  });
  it('does not match a same-named member at another depth', () => {
    const value = parseStrict('{"x":{"result":1},"y":[{"result":2}]}', { raw: [['result']] });
    expect(value).toStrictEqual({ x: { result: 1 }, y: [{ result: 2 }] });
  });
  it('lets a wanted value subsume a path below it', () => {
    const value = parseStrict('{"a":{"b":2}}', { raw: [['a', 'b'], ['a']] }) as { a: RawJson };
    expect(value.a.text).toBe('{"b":2}');
  });
  it('returns the whole document for the empty path', () => {
    const raw = parseStrict(' \n{"a" : 1}\t', { raw: [[]] }) as RawJson;
    expect(raw.text).toBe('{"a" : 1}');
  });
  it('still rejects duplicate keys, depth and syntax errors inside a raw value', () => {
    expect(errorOf('{"result":{"a":1,"a":2}}', { raw: [['result']] })).toMatchObject({
      reason: 'duplicate_key',
      path: '/result',
    });
    expect(errorOf('{"result":[[[]]]}', { raw: [['result']], maxDepth: 3 }).reason).toBe('depth');
    expect(errorOf('{"result":[1,]}', { raw: [['result']] }).reason).toBe('syntax');
  });
  it('replaces a raw "__proto__" member as an own property', () => {
    const value = parseStrict('{"__proto__":{"x":1}}', { raw: [['__proto__']] }) as Record<string, unknown>;
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(isRawJson(Object.getOwnPropertyDescriptor(value, '__proto__')?.value)).toBe(true);
  });
  it('follows a "__proto__" member on the way to a raw value', () => {
    const value = parseStrict('{"__proto__":{"r":5}}', { raw: [['__proto__', 'r']] }) as Record<string, unknown>;
    const inner = Object.getOwnPropertyDescriptor(value, '__proto__')?.value as Record<string, unknown>;
    expect((inner.r as RawJson).text).toBe('5');
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
  });
  it('keeps a member of every array element raw at a * segment', () => {
    const text = '{"items":[{"k":"a","result":1.50},{"k":"b"},{"k":"c","result":{"n":10000000000000000000001}}]}';
    const value = parseStrict(text, { raw: [['items', '*', 'result']] }) as { items: Array<{ k: string; result?: RawJson }> };
    expect(value.items.map((item) => item.result?.text)).toStrictEqual(['1.50', undefined, '{"n":10000000000000000000001}']);
    expect(stringify(value)).toBe(text);
  });
  it('rejects a malformed raw option with a TypeError', () => {
    expect(() => parseStrict('{}', { raw: [['a', 1]] as unknown as string[][] })).toThrow(TypeError);
    expect(() => parseStrict('{}', { raw: ['a'] as unknown as string[][] })).toThrow(TypeError);
  });
});

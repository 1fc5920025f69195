import { describe, expect, it } from 'vitest';
import { countMembers, scanMembers, type ValueSpan } from './json-scan.ts';

function spansOf(text: string, paths: string[][]): string[] {
  const spans: ValueSpan[] = [];
  scanMembers(text, paths, spans);
  return spans.map((s) => `${s.path.join('.')}=${text.slice(s.start, s.end)}`);
}

describe('countMembers', () => {
  it('counts members at every depth, duplicates included', () => {
    expect(countMembers('{}')).toBe(0);
    expect(countMembers('{"a":1,"a":{"b":[{"c":2}]}}')).toBe(4);
    expect(countMembers('[1,"a",[]]')).toBe(0);
  });
  it('ignores colons, quotes and braces inside strings', () => {
    expect(countMembers('{"t":"10:00:00","q":"\\"a\\":1","e":"\\\\","x":":"}')).toBe(4);
    expect(countMembers('["a:b","c\\\\\\":d"]')).toBe(0);
  });
  it('handles whitespace before colons', () => {
    expect(countMembers('{ "a" \n\t:1 , "b"\r: "c" }')).toBe(2);
  });
});

describe('scanMembers', () => {
  it('counts like countMembers', () => {
    const text = '{"a":{"b":"x:y"},"c":[{"d":1}]}';
    expect(scanMembers(text, [['a', 'b']], [])).toBe(countMembers(text));
  });
  it('finds values of every kind at nested paths', () => {
    const text = '{"a":{"b":"s\\"}","n":-1.5e3,"o":{"x":[1,{"y":2}]},"l":null}}';
    expect(
      spansOf(text, [
        ['a', 'b'],
        ['a', 'n'],
        ['a', 'o'],
        ['a', 'l'],
      ]),
    ).toStrictEqual(['a.b="s\\"}"', 'a.n=-1.5e3', 'a.o={"x":[1,{"y":2}]}', 'a.l=null']);
  });
  it('only matches along the path, not the same name elsewhere', () => {
    const text = '{"x":{"b":1},"a":{"c":{"b":2},"b":3},"b":4}';
    expect(spansOf(text, [['a', 'b']])).toStrictEqual(['a.b=3']);
  });
  it('does not descend through arrays', () => {
    expect(spansOf('{"a":[{"b":1}],"c":{"b":2}}', [['a', 'b']])).toStrictEqual([]);
  });
  it('matches escaped member names', () => {
    expect(spansOf('{"\\u0061":{"\\/":true}}', [['a', '/']])).toStrictEqual(['a./=true']);
  });
  it('ends a scalar before whitespace and delimiters', () => {
    expect(spansOf('{"a" : 12 , "b":true}', [['a'], ['b']])).toStrictEqual(['a=12', 'b=true']);
  });
  it('reads every element of an array at a * segment, naming its index', () => {
    const text = '{"items":[{"r":1},{"x":{"r":9}},{"r":[2,{"r":3}]},[{"r":8}],{"r":"4"}],"r":7,"o":{"items":{"a":{"r":6}}}}';
    expect(spansOf(text, [['items', '*', 'r']])).toStrictEqual(['items.0.r=1', 'items.2.r=[2,{"r":3}]', 'items.4.r="4"']);
  });
  it('matches a * only at an array, never a member literally named *', () => {
    expect(spansOf('{"items":{"*":{"r":1},"k":[{"r":2}]}}', [['items', '*', 'r']])).toStrictEqual([]);
    expect(spansOf('[{"a":{"b":1}},{"a":[{"b":2}]},{"a":{"b":3}}]', [['*', 'a', 'b']])).toStrictEqual(['0.a.b=1', '2.a.b=3']);
  });
  it('goes through nested arrays with consecutive * segments', () => {
    expect(spansOf('{"m":[[{"x":1}],[],[{"x":2},{"x":3}]]}', [['m', '*', '*', 'x']])).toStrictEqual([
      'm.0.0.x=1',
      'm.2.0.x=2',
      'm.2.1.x=3',
    ]);
  });
});
